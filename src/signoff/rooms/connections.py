"""Agent connections: liveness by heartbeat, room slots, role leases (in memory, like Switch).

A connection is alive while beats arrive (the last within `ttl` seconds), not while a socket is
open: a dropped stream only detaches, and reattaching within the TTL keeps the slots and lease.
Events themselves are durable in the ledger; only this live state is per process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from signoff.kernel.clock import Clock
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError

HEARTBEAT_INTERVAL = 2.0
HEARTBEAT_TTL = 6.0
MAX_CONNECTIONS = 32
SCOPES = ("single", "all")
FILTERS = ("all", "addressed")


@dataclass
class Connection:
    id: str
    agent_id: str
    scope: str = "single"
    filter: str = "all"
    spawn_capable: bool = False
    client: dict[str, object] = field(default_factory=dict)
    rooms: list[str] = field(default_factory=list)
    cursor: int = 0
    last_beat: float = 0.0
    dead_reason: str | None = None
    stream_token: int = 0  # bumped each time a stream attaches; an older stream is evicted
    attached: bool = False
    evicted_tokens: dict[int, str] = field(default_factory=dict)  # stream token -> reason
    role: tuple[str, str] | None = None  # (room_id, role name)
    rooms_version: int = 0  # bumped when `rooms` changes; streams then send subscription_changed
    rooms_reason: str = ""

    @property
    def alive(self) -> bool:
        return self.dead_reason is None


class ConnectionRegistry:
    def __init__(self, clock: Clock, ttl: float = HEARTBEAT_TTL,
                 on_change: Callable[[str], None] | None = None) -> None:
        self.clock = clock
        self.ttl = ttl
        self._lock = threading.RLock()
        self._by_id: dict[str, Connection] = {}
        self._on_change = on_change  # called with an agent id when its streams must re-check

    def _changed(self, agent_id: str) -> None:
        if self._on_change is not None:
            self._on_change(agent_id)

    # -- lifecycle ------------------------------------------------------------------------------

    def open(self, agent_id: str, connection_id: str, scope: str = "single", filter_: str = "all",
             spawn_capable: bool = False, client: dict[str, object] | None = None) -> tuple[Connection, int]:
        """Create the connection or reattach to it; returns it and the new stream's token. Opening
        a live id again evicts that id's previous stream; the connection keeps rooms and lease."""
        if not connection_id or len(connection_id) > 200:
            raise UsageError("connection_id is required (1-200 characters)", "generate a UUID per connection")
        if scope not in SCOPES:
            raise UsageError(f"scope must be one of {SCOPES}, not {scope!r}", "use scope=single or scope=all")
        if filter_ not in FILTERS:
            raise UsageError(f"filter must be one of {FILTERS}, not {filter_!r}", "use filter=all or addressed")
        now = self.clock.now()
        with self._lock:
            conn = self._by_id.get(connection_id)
            if conn is not None and conn.agent_id != agent_id:
                raise RefusedError(
                    f"connection {connection_id} belongs to another agent", "generate a fresh connection id"
                )
            if conn is None or not conn.alive:
                live = [c for c in self._by_id.values() if c.agent_id == agent_id and c.alive]
                if len(live) >= MAX_CONNECTIONS:
                    raise ConflictError(
                        f"agent already has {MAX_CONNECTIONS} live connections",
                        "close connections you no longer use (stop beating them)",
                    )
                conn = Connection(id=connection_id, agent_id=agent_id)
                self._by_id[connection_id] = conn
            elif conn.attached:
                conn.evicted_tokens[conn.stream_token] = "replaced by a new stream for this connection"
            conn.scope, conn.filter, conn.spawn_capable = scope, filter_, spawn_capable
            conn.client = dict(client or {})
            conn.stream_token += 1
            conn.attached = True
            conn.last_beat = now
            token = conn.stream_token
        self._changed(agent_id)
        return conn, token

    def detach(self, conn: Connection, token: int) -> None:
        with self._lock:
            if conn.stream_token == token:
                conn.attached = False

    def eviction(self, conn: Connection, token: int) -> str | None:
        """Why the stream with `token` must stop, or None while it may go on."""
        with self._lock:
            if token in conn.evicted_tokens:
                return conn.evicted_tokens[token]
            if conn.dead_reason is not None:
                return conn.dead_reason
            return None

    def get(self, agent_id: str, connection_id: str | None) -> Connection:
        """The live connection `connection_id` of `agent_id` (409 when unknown or dead)."""
        if not connection_id:
            raise UsageError(
                "Not connected to a room. Call connect_to_room first",
                "send the header X-Switch-Connection-Id with the id of your open event stream",
            )
        with self._lock:
            conn = self._by_id.get(connection_id)
            if conn is not None and conn.agent_id != agent_id:
                raise RefusedError(f"connection {connection_id} belongs to another agent",
                                   "use the connection id of your own event stream")
            if conn is None or not conn.alive:
                raise ConflictError(f"connection {connection_id} is unknown or dead",
                                    "reopen the event stream with this connection id, then retry")
            return conn

    def beat(self, agent_id: str, connection_id: str, cursor: int) -> Connection:
        with self._lock:
            conn = self._by_id.get(connection_id)
            if conn is not None and conn.agent_id != agent_id:
                raise RefusedError(f"connection {connection_id} belongs to another agent",
                                   "beat only your own connections")
            if conn is None or not conn.alive:
                raise NotFoundError(f"connection {connection_id} is unknown or dead",
                                    "reopen the event stream to create the connection again")
            if not conn.attached:
                raise ConflictError(f"connection {connection_id} has no stream attached",
                                    "reopen the event stream with the same connection id")
            conn.last_beat = self.clock.now()
            conn.cursor = max(conn.cursor, cursor)
            return conn

    def sweep(self) -> list[Connection]:
        """Mark connections whose last beat is older than the TTL dead; returns them."""
        now = self.clock.now()
        dead: list[Connection] = []
        with self._lock:
            for conn in list(self._by_id.values()):
                if conn.alive and now - conn.last_beat > self.ttl:
                    self._kill(conn, "heartbeat lapsed")
                    dead.append(conn)
        for conn in dead:
            self._changed(conn.agent_id)
        return dead

    def close(self, agent_id: str, connection_id: str, reason: str = "closed by the client") -> None:
        with self._lock:
            conn = self._by_id.get(connection_id)
            if conn is None or conn.agent_id != agent_id or not conn.alive:
                return
            self._kill(conn, reason)
        self._changed(agent_id)

    def _kill(self, conn: Connection, reason: str) -> None:
        conn.dead_reason = reason
        conn.rooms = []
        conn.role = None
        conn.attached = False
        del self._by_id[conn.id]

    # -- room slots ----------------------------------------------------------------------------

    def claim(self, conn: Connection, room_id: str, takeover: bool) -> str | None:
        """Claim the (agent, room) slot; returns a warning when another connection was evicted."""
        warning = None
        with self._lock:
            for other in self._by_id.values():
                if other is conn or other.agent_id != conn.agent_id or not other.alive:
                    continue
                if room_id in other.rooms:
                    if not takeover:
                        raise ConflictError(f"connection {other.id} already holds room {room_id}",
                                            "pass takeover=true to move the room to this connection")
                    other.rooms.remove(room_id)
                    other.rooms_version += 1
                    other.rooms_reason = f"room {room_id} taken over by connection {conn.id}"
                    if other.scope == "single":
                        other.evicted_tokens[other.stream_token] = f"room {room_id} taken over"
                    warning = f"took room {room_id} over from connection {other.id}"
            before = list(conn.rooms)
            if conn.scope == "single":
                conn.rooms = [room_id]
            elif room_id not in conn.rooms:
                conn.rooms.append(room_id)
            if conn.rooms != before:
                conn.rooms_version += 1
                conn.rooms_reason = f"claimed room {room_id}"
        self._changed(conn.agent_id)
        return warning

    def unclaim(self, conn: Connection, room_id: str) -> None:
        with self._lock:
            if room_id in conn.rooms:
                conn.rooms.remove(room_id)
                conn.rooms_version += 1
                conn.rooms_reason = f"released room {room_id}"
        self._changed(conn.agent_id)

    def claimed_by_sibling(self, conn: Connection, room_id: str) -> bool:
        with self._lock:
            return any(
                o is not conn and o.agent_id == conn.agent_id and o.alive and room_id in o.rooms
                for o in self._by_id.values()
            )

    # -- liveness and roles --------------------------------------------------------------------

    def connections(self, agent_id: str) -> list[Connection]:
        with self._lock:
            return [c for c in self._by_id.values() if c.agent_id == agent_id and c.alive]

    def is_live(self, agent_id: str) -> bool:
        now = self.clock.now()
        return any(now - c.last_beat <= self.ttl for c in self.connections(agent_id))

    def role_holders(self, room_id: str, role: str) -> list[str]:
        now = self.clock.now()
        with self._lock:
            return sorted({
                c.agent_id for c in self._by_id.values()
                if c.alive and c.role == (room_id, role) and now - c.last_beat <= self.ttl
            })

    def set_role(self, conn: Connection, room_id: str, role: str, exclusive: bool) -> None:
        with self._lock:
            if exclusive:
                holders = [a for a in self.role_holders(room_id, role) if a != conn.agent_id]
                if holders:
                    raise UsageError(f"role {role!r} is exclusive and currently held",
                                     "wait for the holder to release it or for its lease to lapse")
            # An agent holds at most one role at a time.
            for other in self._by_id.values():
                if other.agent_id == conn.agent_id:
                    other.role = None
            conn.role = (room_id, role)

    def release_role(self, agent_id: str) -> tuple[str, str] | None:
        released = None
        with self._lock:
            for conn in self._by_id.values():
                if conn.agent_id == agent_id and conn.role is not None:
                    released = conn.role
                    conn.role = None
        return released

    def role_of(self, agent_id: str) -> tuple[str, str] | None:
        with self._lock:
            for conn in self._by_id.values():
                if conn.agent_id == agent_id and conn.alive and conn.role is not None:
                    return conn.role
        return None
