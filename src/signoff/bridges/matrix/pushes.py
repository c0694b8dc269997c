"""The application-service endpoint: Synapse does not let an application service's bot use
/sync, so in that mode the homeserver pushes events to the bridge (at the registration's `url`).

mautrix's own push handler answers 200 even when handling failed, which would drop events the rooms
server could not take; this one answers 200 only once every event of the transaction is recorded,
and 503 otherwise, so the homeserver sends it again (every effect is idempotent: a transaction sent
twice relays once)."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from mautrix.errors import MatrixConnectionError

from signoff.kernel.errors import Unauthenticated, UnavailableError
from signoff.kernel.wire import bearer_token

MAX_TRANSACTION = 16 * 1024 * 1024  # Synapse sends up to 100 events of up to 64 KiB each
log = logging.getLogger("signoff.bridge.matrix")


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
        header = request.headers.get("Authorization")
        try:
            given = bearer_token(header) if header else request.query.get("access_token", "")
        except Unauthenticated:
            return False
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
