"""The agent event stream, independent of HTTP: opening a connection (negotiation, cursor,
resume), and the frames it yields. The SSE endpoint and the in-process client transport both
use it, so they behave the same."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool

from signoff.kernel.errors import UsageError
from signoff.kernel.ids import check_id
from signoff.rooms.domain.model import Principal
from signoff.rooms.domain.service import RoomService
from signoff.rooms.protocol import wire as protocol
from signoff.rooms.storage.connections import Connection

BATCH = 200


@dataclass
class StreamParams:
    connection_id: str | None
    scope: str = "single"
    filter: str = "all"
    start_from: str = "head"
    last_event_id: str | None = None
    spawn_capable: bool = False
    protocol: str | None = None
    protocol_accepts: str | None = None
    client: str | None = None
    client_version: str | None = None
    rooms: list[str] = field(default_factory=list)


@dataclass
class OpenStream:
    agent: Principal
    connection: Connection
    token: int
    cursor: int
    state: dict[str, Any]
    gap: dict[str, Any] | None


@dataclass(frozen=True)
class Frame:
    """One stream frame: `event` None is a keep-alive comment; `id` is set on real events only."""

    event: str | None
    data: Any = None
    id: int | None = None


def visible(service: RoomService, conn: Connection, env: dict[str, Any]) -> bool:
    room = env.get("room_id")
    if conn.scope == "single":
        if room not in conn.rooms:
            return False
    elif service.connections.claimed_by_sibling(conn, str(room)):
        return False
    if conn.filter == "addressed":
        kind = str(env.get("type"))
        payload = env.get("payload") or {}
        if kind == "room_join":
            return bool(payload.get("listening"))
        if kind.startswith("task_"):
            return True
        return bool(payload.get("addressed"))
    return True


async def open_stream(service: RoomService, agent: Principal, params: StreamParams) -> OpenStream:
    """Validate, negotiate (ProtocolMismatch on no overlap), choose the cursor and attach."""
    connection_id = check_id("connection_id", params.connection_id)
    for room_id in params.rooms:
        check_id("room id", room_id)
    declared = protocol.negotiate(params.protocol, params.protocol_accepts)
    head = await run_in_threadpool(service.head)
    start = params.last_event_id if params.last_event_id not in (None, "") else params.start_from
    if start == "head":
        cursor = head
    else:
        try:
            cursor = int(str(start))
        except ValueError as exc:
            raise UsageError(f"start_from/Last-Event-ID must be 'head' or a sequence number, not {start!r}",
                             "pass the last id you received") from exc
        if cursor < 0:
            raise UsageError("a sequence number cannot be negative", "pass 0 or the last id you received")
    gap = None
    if cursor > head:
        # A cursor from another server or log: nothing here matches it. Say so, resume at our head.
        gap = {"from_sequence": cursor, "resumed_at": head, "reason": "cursor is ahead of this server's log"}
        cursor = head
    for room_id in params.rooms:
        await run_in_threadpool(service.require_read, agent, room_id)
    conn, token = await run_in_threadpool(
        service.connections.open, agent.id, connection_id, params.scope, params.filter,
        params.spawn_capable, {"name": params.client, "version": params.client_version, **declared})
    conn.cursor = cursor
    for room_id in params.rooms:
        await run_in_threadpool(service.connections.claim, conn, room_id, True)
    state = {
        "connection_id": conn.id, "agent_id": agent.id, "scope": conn.scope, "filter": conn.filter,
        "spawn_capable": conn.spawn_capable, "rooms": list(conn.rooms), "cursor": cursor,
        "protocol": protocol.SPEAKS, "heartbeat_interval_seconds": protocol.HEARTBEAT_INTERVAL_SECONDS,
        "server": protocol.server_info(),
        "client": {"speaks": declared["speaks"], "accepts": declared["accepts"], "artifact": params.client,
                   "version": params.client_version},
    }
    return OpenStream(agent, conn, token, cursor, state, gap)


async def frames(service: RoomService, opened: OpenStream, keepalive: float) -> AsyncIterator[Frame]:
    """connection_state, an optional gap, then events in sequence order until evicted."""
    conn, token, agent_id = opened.connection, opened.token, opened.agent.id
    position = opened.cursor
    rooms_version = conn.rooms_version
    try:
        yield Frame("connection_state", opened.state)
        if opened.gap is not None:
            yield Frame("gap", opened.gap)
        while True:
            reason = service.connections.eviction(conn, token)
            if reason is not None:
                yield Frame("evicted", {"reason": reason})
                return
            if conn.rooms_version != rooms_version:
                rooms_version = conn.rooms_version
                yield Frame("subscription_changed", {"rooms": list(conn.rooms), "reason": conn.rooms_reason})
            addressed = conn.filter == "addressed"
            # An addressed-only stream wakes only for deliveries addressed to it.
            key = f"agent+:{agent_id}" if addressed else f"agent:{agent_id}"
            seen = service.notifier.version(key)
            batch: list[dict[str, Any]] = []
            if not (conn.scope == "single" and not conn.rooms):  # parked: read nothing, keep the cursor
                recent = service.recent_events(agent_id, position, BATCH, addressed)
                batch = recent if recent is not None else await run_in_threadpool(
                    service.agent_events, agent_id, position, BATCH, addressed)
                for env in batch:
                    position = env["sequence"]
                    if visible(service, conn, env):
                        yield Frame(str(env["type"]), env, position)
                if batch:
                    conn.cursor = max(conn.cursor, position)
            if len(batch) >= BATCH:
                continue
            if not await service.notifier.wait(key, seen, keepalive):
                # Quiet for a keepalive: another process on the same database (an agent on the
                # embedded server) may have posted; catching up wakes this stream for it.
                await run_in_threadpool(service.store.ensure_fresh)
                yield Frame(None)
    finally:
        await run_in_threadpool(service.connections.detach, conn, token)
