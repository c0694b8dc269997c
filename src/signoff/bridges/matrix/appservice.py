"""Application-service mode: where the homeserver admits the bridge as an application service (a
registration file in its configuration), each signoff agent speaks in Matrix as a puppet of its own
(`@signoff_<agent>:<domain>`), made and joined through mautrix's appservice API, and people
mention it like anyone else (a pill, or its Matrix id typed out) to address the agent.

Synapse does not let an application service's bot use /sync, so in this mode the homeserver
pushes events to the bridge (`Transactions`, at the registration's `url`). mautrix's own push
handler answers 200 even when handling failed, which would drop events the rooms server could not
take; ours answers 200 only once every event of the transaction is recorded, and 503 otherwise, so
the homeserver sends it again (every effect is idempotent: a transaction sent twice relays once).

The registration file is JSON, which is YAML too, so Synapse reads it as it is."""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from aiohttp import web
from mautrix.appservice import AppServiceAPI, IntentAPI
from mautrix.appservice.state_store import ASStateStore
from mautrix.client.state_store.memory import MemoryStateStore
from mautrix.errors import MatrixConnectionError
from mautrix.types import RoomID, UserID
from mautrix.util.logging import TraceLogger

from signoff.kernel.errors import UnavailableError, UsageError
from signoff.kernel.ids import new_token

_LOCALPART = re.compile(r"[a-z0-9._=/-]+\Z")
_DOMAIN = re.compile(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?\Z")
MAX_TRANSACTION = 16 * 1024 * 1024  # Synapse sends up to 100 events of up to 64 KiB each
log = logging.getLogger("signoff.bridge.matrix")
PREFIX_KEY = "org.signoff.puppet_prefix"
DOMAIN_KEY = "org.signoff.domain"


@dataclass(frozen=True)
class Registration:
    id: str
    as_token: str
    hs_token: str
    sender_localpart: str
    puppet_prefix: str
    domain: str
    url: str | None = None  # where the homeserver pushes transactions

    @property
    def bot(self) -> UserID:
        return UserID(f"@{self.sender_localpart}:{self.domain}")

    def document(self) -> dict[str, Any]:
        """The registration as the homeserver reads it (`app_service_config_files`)."""
        return {
            "id": self.id, "url": self.url, "as_token": self.as_token, "hs_token": self.hs_token,
            "sender_localpart": self.sender_localpart, "rate_limited": False,
            "namespaces": {"users": [{"exclusive": True, "regex": f"@{re.escape(self.puppet_prefix)}"
                                      f"[a-z0-9._=/-]+:{re.escape(self.domain)}"}], "aliases": [], "rooms": []},
            PREFIX_KEY: self.puppet_prefix, DOMAIN_KEY: self.domain,
        }

    def write(self, path: Path) -> None:
        """Write the file readable by its owner only: it holds both tokens."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(self.document(), indent=2) + "\n")


def generate(domain: str, url: str, sender_localpart: str = "signoff", puppet_prefix: str = "signoff_",
             id_: str = "signoff") -> Registration:
    for what, value, rule in (("bot localpart", sender_localpart, _LOCALPART), ("puppet prefix", puppet_prefix,
                                                                                 _LOCALPART),
                              ("domain", domain, _DOMAIN)):
        if not isinstance(value, str) or not value or len(value) > 100 or not rule.match(value):
            raise UsageError(f"{value!r} is not a valid {what}",
                             "use lowercase letters, digits and . _ = / - (a domain: the homeserver's server_name)")
    if not re.match(r"https?://[^\s/]+(/\S*)?\Z", url):
        raise UsageError(f"{url!r} is not an http(s) URL", "pass where the bridge listens, e.g. http://127.0.0.1:29330")
    if sender_localpart.startswith(puppet_prefix):
        raise UsageError("the bot's localpart must not start with the puppet prefix",
                         "pick another --bot or --puppet-prefix")
    return Registration(id_, new_token(32), new_token(32), sender_localpart, puppet_prefix, domain, url)


def load(path: Path) -> Registration:
    try:
        data = json.loads(path.read_text())
        return Registration(str(data["id"]), str(data["as_token"]), str(data["hs_token"]),
                            str(data["sender_localpart"]), str(data[PREFIX_KEY]), str(data[DOMAIN_KEY]),
                            str(data["url"]) if data.get("url") else None)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path} is not a registration file written by signoff ({type(exc).__name__}: {exc})",
                         "write one with `signoff bridge matrix registration`") from exc


class Puppets:
    """One Matrix user per signoff agent, in the registration's exclusive namespace."""

    def __init__(self, registration: Registration, homeserver: str) -> None:
        self.registration = registration
        self.api = AppServiceAPI(homeserver, registration.bot, token=registration.as_token,
                                 log=cast(TraceLogger, logging.getLogger("signoff.bridge.matrix.appservice")),
                                 state_store=_MemoryStore())
        self.bot = self.api.bot_intent()
        self._ready: set[tuple[str, str]] = set()

    def user_id(self, agent_name: str) -> UserID:
        return UserID(f"@{self.registration.puppet_prefix}{agent_name}:{self.registration.domain}")

    def agent_of(self, user_id: Any) -> str | None:
        """The agent a Matrix id is the puppet of, or None."""
        head, tail = f"@{self.registration.puppet_prefix}", f":{self.registration.domain}"
        if isinstance(user_id, str) and user_id.startswith(head) and user_id.endswith(tail):
            name = user_id[len(head):-len(tail)]
            return name if name and _LOCALPART.match(name) else None
        return None

    async def intent(self, agent_name: str, room: RoomID) -> IntentAPI:
        """The agent's puppet, registered, named and joined to `room` (invited by the bot)."""
        puppet: IntentAPI = self.api.intent(self.user_id(agent_name))
        if (agent_name, room) not in self._ready:
            await puppet.ensure_registered()
            await puppet.set_displayname(agent_name)
            await puppet.ensure_joined(room)
            self._ready.add((agent_name, room))
        return puppet

    def addressing(self, text: str, mentioned: tuple[str, ...]) -> str:
        """What a person wrote, with each mention of a puppet (its Matrix id typed out, or a pill
        listed in `m.mentions`) written as the signoff mention `@agent`, which the rooms server
        then resolves under the agent's policy."""
        for user_id in sorted({*mentioned, *re.findall(r"@[^\s:]+:[A-Za-z0-9.:-]+", text)}, key=len, reverse=True):
            name = self.agent_of(user_id)
            if name is None:
                continue
            if user_id in text:
                text = text.replace(user_id, f"@{name}")
            elif not re.search(rf"(?<![\w@])@{re.escape(name)}\b", text):
                text = f"@{name} {text}"
        return text

    async def close(self) -> None:
        await self.api.session.close()


class NotReady(Exception):
    """The bridge cannot take events yet (not started): the homeserver should send them again."""


Receive = Callable[[list[Any]], Awaitable[None]]
RETRY_LATER = (NotReady, UnavailableError, MatrixConnectionError)


class Transactions:
    """The application-service endpoint the homeserver pushes to: `PUT
    /_matrix/app/v1/transactions/{id}` with the registration's `hs_token`."""

    def __init__(self, hs_token: str, receive: Receive) -> None:
        self.hs_token = hs_token
        self.receive = receive
        self._runner: web.AppRunner | None = None
        self.received = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_TRANSACTION)
        for prefix in ("/_matrix/app/v1", ""):  # the unprefixed form is the legacy one
            app.router.add_put(prefix + "/transactions/{txn}", self._transaction)
        app.router.add_post("/_matrix/app/v1/ping", self._ping)
        return app

    def _authorised(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        given = header[7:] if header.startswith("Bearer ") else request.query.get("access_token", "")
        return hmac.compare_digest(given.encode(), self.hs_token.encode())

    async def _ping(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return _error(403, "M_FORBIDDEN", "wrong hs_token")
        return web.json_response({})

    async def _transaction(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return _error(403, "M_FORBIDDEN", "wrong hs_token")
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "M_NOT_JSON", "the transaction is not JSON")
        events = body.get("events") if isinstance(body, dict) else None
        if not isinstance(events, list):
            return _error(400, "M_BAD_JSON", "the transaction has no events list")
        try:
            await self.receive(events)
        except RETRY_LATER as exc:
            log.warning("transaction %s not taken (%s): the homeserver will send it again",
                        request.match_info["txn"], type(exc).__name__)
            return _error(503, "M_UNKNOWN", "not taken now; send it again")
        self.received += 1
        return web.json_response({})

    async def start(self, host: str, port: int) -> None:
        self._runner = web.AppRunner(self.app())
        await self._runner.setup()
        await web.TCPSite(self._runner, host, port).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def _error(status: int, code: str, text: str) -> web.Response:
    return web.json_response({"errcode": code, "error": text}, status=status)


class _MemoryStore(ASStateStore, MemoryStateStore):  # type: ignore[misc]
    """mautrix's in-memory store of who is registered and joined: a cache only (both calls are
    idempotent on the homeserver), so losing it at a restart costs a request, never a message."""

    def __init__(self) -> None:
        ASStateStore.__init__(self)
        MemoryStateStore.__init__(self)
