"""People on Matrix, driven by the library the bridge uses (mautrix): they send, reply, react,
edit and redact, and wait for events by reading their own /sync (with a deadline, never a sleep)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mautrix.client import ClientAPI
from mautrix.types import EventID, Filter, RoomEventFilter, RoomFilter, RoomID, UserID

from tests.support.synapse import MatrixAccount, Synapse

Event = dict[str, Any]
WAIT = 180.0  # seconds before a wait_for gives up: a deadline for a failure, not a synchronisation (60 s ran
# out at load 10 while Synapse answered a sync)


class MatrixPerson:
    def __init__(self, server: Synapse, account: MatrixAccount) -> None:
        self.user_id = UserID(account.user_id)
        self.api = ClientAPI(self.user_id, account.device_id, base_url=server.base, token=account.access_token)
        self.since: str | None = None
        self.seen: list[Event] = []  # every room event synced so far, each with its room_id
        self._filter: str | None = None

    async def __aenter__(self) -> MatrixPerson:
        self._filter = await self.api.create_filter(
            Filter(room=RoomFilter(timeline=RoomEventFilter(limit=1000))))
        await self.sync(0)  # everything before now counts as already seen
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.api.api.session.close()

    async def sync(self, timeout_ms: int) -> list[Event]:
        body = await self.api.sync(since=self.since, timeout=timeout_ms, filter_id=self._filter)
        self.since = body["next_batch"]
        new: list[Event] = []
        for room_id, room in body.get("rooms", {}).get("join", {}).items():
            for event in room.get("timeline", {}).get("events", []):
                new.append({**event, "room_id": room_id})
        for room_id in body.get("rooms", {}).get("invite", {}):
            new.append({"type": "invite", "room_id": room_id})
        self.seen += new
        return new

    async def wait_for(self, match: Callable[[Event], bool], timeout: float = WAIT) -> Event:
        """The first event seen (already, or from now on) that `match` accepts."""
        async with asyncio.timeout(timeout):
            index = 0
            while True:
                while index < len(self.seen):
                    if match(self.seen[index]):
                        return self.seen[index]
                    index += 1
                await self.sync(5000)

    async def say(self, room_id: str, body: str, **extra: Any) -> EventID:
        content = {"msgtype": "m.text", "body": body, **extra}
        return await self.api.send_message_event(RoomID(room_id), "m.room.message", content)  # type: ignore[arg-type]

    async def reply(self, room_id: str, to: str, body: str) -> EventID:
        return await self.say(room_id, body, **{"m.relates_to": {"m.in_reply_to": {"event_id": to}}})

    async def react(self, room_id: str, to: str, key: str) -> EventID:
        return await self.api.react(RoomID(room_id), EventID(to), key)

    async def edit(self, room_id: str, original: str, body: str) -> EventID:
        return await self.say(room_id, f"* {body}", **{
            "m.new_content": {"msgtype": "m.text", "body": body},
            "m.relates_to": {"rel_type": "m.replace", "event_id": original}})

    async def redact(self, room_id: str, event_id: str) -> EventID:
        return await self.api.redact(RoomID(room_id), EventID(event_id))


def body_of(event: Event) -> str:
    content = event.get("content", {})
    return str(content.get("body", "")) if isinstance(content, dict) else ""
