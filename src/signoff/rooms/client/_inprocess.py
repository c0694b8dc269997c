"""In-process transport: the same calls as HTTP, straight into a RoomService (tests, demos,
workflows in the server's process). It runs the same stream and operation code as the server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool

from signoff.kernel.errors import RefusedError
from signoff.rooms.client._transport import IncompatibleServer, Transport
from signoff.rooms.domain.model import Principal
from signoff.rooms.domain.service import RoomService
from signoff.rooms.protocol import wire as protocol
from signoff.rooms.protocol.operations import call_operation, catalogue
from signoff.rooms.protocol.streams import Frame, StreamParams, frames, open_stream


def acting_agent(service: RoomService, api_key: str | None, agent: Principal | None) -> Principal:
    """The agent an in-process transport acts as: given, or authenticated by its key."""
    if agent is None:
        if api_key is None:
            raise RefusedError("an in-process transport needs the agent's api key (or its Principal)",
                               "pass api_key=...")
        agent = service.authenticate(api_key)
    if agent.kind != "agent":
        raise RefusedError("the in-process transport acts as an agent", "pass an agent's api key")
    return agent


class InProcessTransport(Transport):
    def __init__(self, service: RoomService, api_key: str | None = None, agent: Principal | None = None,
                 keepalive_seconds: float = 15.0) -> None:
        agent = acting_agent(service, api_key, agent)
        self.service = service
        self.agent = agent
        self.agent_id = agent.id
        self._keepalive = keepalive_seconds

    async def call(self, op: str, args: dict[str, Any], connection_id: str | None) -> Any:
        return await run_in_threadpool(call_operation, self.service, self.agent, op, dict(args), connection_id)

    async def beat(self, connection_id: str, cursor: int) -> dict[str, Any]:
        conn = await run_in_threadpool(self.service.connections.beat, self.agent.id, connection_id, cursor)
        return {"ok": True, "rooms": list(conn.rooms), "cursor": conn.cursor}

    async def subscribe(self, connection_id: str, room_id: str, takeover: bool = False) -> dict[str, Any]:
        conn = await run_in_threadpool(self.service.connections.get, self.agent.id, connection_id)
        await run_in_threadpool(self.service.require_read, self.agent, room_id)
        warning = await run_in_threadpool(self.service.connections.claim, conn, room_id, takeover)
        return {"ok": True, "rooms": list(conn.rooms), "warning": warning}

    async def unsubscribe(self, connection_id: str, room_id: str) -> dict[str, Any]:
        conn = await run_in_threadpool(self.service.connections.get, self.agent.id, connection_id)
        await run_in_threadpool(self.service.connections.unclaim, conn, room_id)
        return {"ok": True, "rooms": list(conn.rooms)}

    async def operations(self) -> dict[str, Any]:
        return catalogue()

    async def events(self, params: StreamParams) -> AsyncIterator[Frame]:
        try:
            opened = await open_stream(self.service, self.agent, params)
        except protocol.ProtocolMismatch as exc:
            raise IncompatibleServer(exc.body) from exc
        async for frame in frames(self.service, opened, self._keepalive):
            yield frame
