"""A transport that injects faults into a real one: named operations fail once (before or after
the server acted), the stream forgets named messages, and the next stream opens with a gap (a
restarted Switch core, whose buffer is gone)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from signoff.rooms.client import Transport
from signoff.rooms.protocol.streams import Frame, StreamParams


@dataclass
class Faulty(Transport):
    """One agent's real transport, with faults injected into named operations: each fault is
    raised once, before the operation reaches the server or (`after`) once the server has done it."""

    inner: Transport
    faults: dict[str, list[tuple[BaseException, bool]]] = field(default_factory=dict)
    lost: set[str] = field(default_factory=set)  # message ids the server's stream has forgotten
    gap: bool = False  # the next stream opens with a gap frame (a restarted Switch core)
    raised: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.agent_id = self.inner.agent_id

    async def call(self, op: str, args: dict[str, Any], connection_id: str | None) -> Any:
        queued = self.faults.get(op) or []
        if not queued:
            return await self.inner.call(op, args, connection_id)
        error, after = queued.pop(0)
        if after:
            await self.inner.call(op, args, connection_id)
        self.raised.append(op)
        raise error

    async def events(self, params: StreamParams) -> AsyncIterator[Frame]:
        async for frame in self.inner.events(params):
            payload = (frame.data or {}).get("payload") if isinstance(frame.data, dict) else None
            if isinstance(payload, dict) and payload.get("message_id") in self.lost:
                continue
            yield frame
            if frame.event == "connection_state" and self.gap:
                self.gap = False
                yield Frame("gap", {"from_sequence": 0, "resumed_at": 0, "reason": "server_restarted"})

    async def beat(self, connection_id: str, cursor: int) -> dict[str, Any]:
        return await self.inner.beat(connection_id, cursor)

    async def subscribe(self, connection_id: str, room_id: str, takeover: bool = False) -> dict[str, Any]:
        return await self.inner.subscribe(connection_id, room_id, takeover)

    async def unsubscribe(self, connection_id: str, room_id: str) -> dict[str, Any]:
        return await self.inner.unsubscribe(connection_id, room_id)

    async def operations(self) -> dict[str, Any]:
        return await self.inner.operations()
