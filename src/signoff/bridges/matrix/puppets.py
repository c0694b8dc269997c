"""Application-service mode: each signoff agent speaks in Matrix as a puppet of its own
(`@signoff_<agent>:<domain>`), made and joined through mautrix's appservice API, and people mention
it like anyone else (a pill, or its Matrix id typed out) to address the agent."""

from __future__ import annotations

import logging
import re
from typing import Any, cast

from mautrix.appservice import AppServiceAPI, IntentAPI
from mautrix.appservice.state_store import ASStateStore
from mautrix.client.state_store.memory import MemoryStateStore
from mautrix.types import RoomID, UserID
from mautrix.util.logging import TraceLogger

from signoff.bridges.matrix.registration import LOCALPART, Registration


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
            return name if name and LOCALPART.match(name) else None
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


class _MemoryStore(ASStateStore, MemoryStateStore):  # type: ignore[misc]
    """mautrix's in-memory store of who is registered and joined: a cache only (both calls are
    idempotent on the homeserver), so losing it at a restart costs a request, never a message."""

    def __init__(self) -> None:
        ASStateStore.__init__(self)
        MemoryStateStore.__init__(self)
