"""Agent connections: liveness by heartbeat, room slots, role leases.

A connection is alive while beats arrive (the last within `ttl` seconds), not while a socket is
open: a dropped stream only detaches, and reattaching within the TTL keeps the slots and lease.

The state lives in the database (`rooms_connections`), so that every server process (replica) on it
sees the same connections and limits, and a replica can die without losing them: the client
reattaches through any replica. Every change is one transaction that holds a per-agent lock (and,
for a role, a per-role lock), so slot takeovers, exclusive roles and the connection limit hold
across replicas. Each process keeps a mirror of the rows for its hot paths (which stream sees
which room, who holds a role), updated after its own writes and, on PostgreSQL, when another
replica notifies a change (`NOTIFY signoff_connections, '<origin> <agent id>'`, sent in the writing
transaction). Beats are not notified: a beat only makes a connection live longer, so a mirror that
says "live" is right, and one that says "lapsed" is checked against the table first.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from sqlalchemy import Connection as Database
from sqlalchemy import and_, delete, insert, or_, select, text, update

from signoff.kernel.clock import Clock
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import check_id
from signoff.ledger import SqlLedger
from signoff.ledger.engine import is_postgres
from signoff.rooms.storage.tables import rooms_connections as table

HEARTBEAT_INTERVAL = 2.0
HEARTBEAT_TTL = 6.0
MAX_CONNECTIONS = 32
SCOPES = ("single", "all")
FILTERS = ("all", "addressed")
CHANNEL = "signoff_connections"
PURGE_AFTER = 3600.0  # seconds a dead connection's row is kept, so a late stream still learns why

T = TypeVar("T")
_LOCK = text("SELECT pg_advisory_xact_lock(hashtext(:key))")
_NOTIFY = text("SELECT pg_notify(:channel, :agent)")


@dataclass
class Connection:
    id: str
    agent_id: str
    incarnation: int = 1  # a dead id opened again is a new connection
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
    evicted_token: int | None = None  # the stream a room takeover evicted, and why
    evicted_reason: str | None = None
    role: tuple[str, str] | None = None  # (room_id, role name)
    rooms_version: int = 0  # bumped when `rooms` changes; streams then send subscription_changed
    rooms_reason: str = ""

    @property
    def alive(self) -> bool:
        return self.dead_reason is None


_FIELDS = tuple(f.name for f in fields(Connection))


def _values(c: Connection) -> dict[str, Any]:
    return {
        "connection_id": c.id, "agent_id": c.agent_id, "incarnation": c.incarnation, "scope": c.scope,
        "filter": c.filter, "spawn_capable": c.spawn_capable, "client": json.dumps(c.client, sort_keys=True),
        "rooms": json.dumps(c.rooms), "rooms_version": c.rooms_version, "rooms_reason": c.rooms_reason,
        "role_room": c.role[0] if c.role else None, "role_name": c.role[1] if c.role else None,
        "cursor": c.cursor, "last_beat": c.last_beat, "stream_token": c.stream_token, "attached": c.attached,
        "evicted_token": c.evicted_token, "evicted_reason": c.evicted_reason, "dead_reason": c.dead_reason,
    }


def _from_row(r: Any) -> Connection:
    return Connection(
        id=r.connection_id, agent_id=r.agent_id, incarnation=int(r.incarnation), scope=r.scope, filter=r.filter,
        spawn_capable=bool(r.spawn_capable), client=json.loads(r.client), rooms=list(json.loads(r.rooms)),
        cursor=int(r.cursor), last_beat=float(r.last_beat), dead_reason=r.dead_reason,
        stream_token=int(r.stream_token), attached=bool(r.attached),
        evicted_token=None if r.evicted_token is None else int(r.evicted_token), evicted_reason=r.evicted_reason,
        role=(r.role_room, r.role_name) if r.role_room is not None else None,
        rooms_version=int(r.rooms_version), rooms_reason=r.rooms_reason,
    )


def _shape(conn: Connection) -> tuple[object, ...]:
    """What a stream reacts to (a beat or a cursor changes none of it)."""
    return (conn.incarnation, conn.scope, conn.filter, conn.rooms_version, conn.stream_token, conn.evicted_token,
            conn.dead_reason, conn.role)


def _kill(conn: Connection, reason: str) -> None:
    conn.dead_reason = reason
    conn.rooms = []
    conn.role = None
    conn.attached = False


def _refuse_foreign(db: Database, rows: dict[str, Connection], connection_id: str, fix: str) -> None:
    """Refuse an id that is not among the agent's `rows` but is another agent's connection."""
    if connection_id not in rows and db.execute(
            select(table.c.agent_id).where(table.c.connection_id == connection_id)).first() is not None:
        raise RefusedError(f"connection {connection_id} belongs to another agent", fix)


class ConnectionRegistry:
    def __init__(self, ledger: SqlLedger, clock: Clock, ttl: float = HEARTBEAT_TTL,
                 on_change: Callable[[str], None] | None = None, origin: str = "") -> None:
        self.ledger = ledger
        self._origin = origin  # names this process in its notifications, so that it can skip its own
        self.clock = clock
        self.ttl = ttl
        self._postgres = is_postgres(ledger.engine)
        self._lock = threading.RLock()
        self._by_id: dict[str, Connection] = {}  # the mirror: live connections, by id
        self._on_change = on_change  # called with an agent id when its streams must re-check
        self.reload_all()

    def _changed(self, agent_id: str) -> None:
        if self._on_change is not None:
            self._on_change(agent_id)

    # -- the table and the mirror ---------------------------------------------------------------

    def _write(self, agent_id: str, work: Callable[[Database, dict[str, Connection]], T], *locks: str,
               notify: bool = True) -> T:
        """Run `work(db, rows)` over the agent's rows (dead ones too) in one transaction holding the
        agent's lock and `locks`; write back what it changed, tell the other replicas, mirror it."""
        written: dict[str, Connection] = {}

        def run(db: Database) -> T:
            if self._postgres:
                for key in (f"agent:{agent_id}", *locks):
                    db.execute(_LOCK, {"key": f"rooms.connections.{key}"})
            rows = self._read(db, agent_id)
            before = {cid: _values(c) for cid, c in rows.items()}
            result = work(db, rows)
            for cid, conn in rows.items():
                values = _values(conn)
                if cid not in before:
                    db.execute(insert(table).values(**values))
                elif values != before[cid]:
                    db.execute(update(table).where(table.c.connection_id == cid).values(**values))
            if notify and self._postgres:
                db.execute(_NOTIFY, {"channel": CHANNEL, "agent": f"{self._origin} {agent_id}"})
            written.clear()
            written.update(rows)
            return result

        result = self.ledger.transact(run, lock_chain=False)
        self._mirror(agent_id, written)
        return result

    @staticmethod
    def _read(db: Database, agent_id: str) -> dict[str, Connection]:
        rows = db.execute(select(table).where(table.c.agent_id == agent_id)).all()
        return {r.connection_id: _from_row(r) for r in rows}

    def _mirror(self, agent_id: str, rows: dict[str, Connection]) -> None:
        """Make the mirror agree with the agent's rows, updating the objects streams hold in place;
        wake the agent's streams when something they react to changed."""
        with self._lock:
            before = {cid: _shape(c) for cid, c in self._by_id.items() if c.agent_id == agent_id}
            for cid, gone in list(self._by_id.items()):
                if gone.agent_id == agent_id and cid not in rows:
                    _kill(gone, gone.dead_reason or "closed")
                    del self._by_id[cid]
            for cid, row in rows.items():
                old: Connection | None = self._by_id.get(cid)
                if old is not None and old.incarnation != row.incarnation:
                    _kill(old, "replaced by a new connection with this id")
                    del self._by_id[cid]
                    old = None
                if old is None:
                    if row.alive:
                        self._by_id[cid] = row
                    continue
                cursor = max(old.cursor, row.cursor)
                for name in _FIELDS:
                    setattr(old, name, getattr(row, name))
                old.cursor = cursor
                if not row.alive:
                    del self._by_id[cid]
            after = {cid: _shape(c) for cid, c in self._by_id.items() if c.agent_id == agent_id}
        if after != before:
            self._changed(agent_id)

    def reload(self, agent_ids: Iterable[str]) -> None:
        """Read these agents' connections again (another replica changed them)."""
        agents = sorted(set(agent_ids))
        if not agents:
            return
        with self.ledger.engine.connect() as db:
            rows = db.execute(select(table).where(table.c.agent_id.in_(agents))).all()
        by_agent: dict[str, dict[str, Connection]] = {a: {} for a in agents}
        for r in rows:
            by_agent[r.agent_id][r.connection_id] = _from_row(r)
        for agent_id, conns in by_agent.items():
            self._mirror(agent_id, conns)

    def reload_all(self) -> None:
        """Read every connection again (at start, and when notifications may have been missed)."""
        with self.ledger.engine.connect() as db:
            rows = db.execute(select(table)).all()
        by_agent: dict[str, dict[str, Connection]] = {}
        with self._lock:
            for conn in self._by_id.values():
                by_agent.setdefault(conn.agent_id, {})
        for r in rows:
            by_agent.setdefault(r.agent_id, {})[r.connection_id] = _from_row(r)
        for agent_id, conns in by_agent.items():
            self._mirror(agent_id, conns)

    def _fresh(self, conns: list[Connection]) -> list[Connection]:
        """Those of `conns` whose last beat is within the TTL, re-reading lapsed ones first: their
        beats may have gone through another replica."""
        now = self.clock.now()
        lapsed = {c.agent_id for c in conns if now - c.last_beat > self.ttl}
        if lapsed:
            self.reload(lapsed)
        return [c for c in conns if c.alive and now - c.last_beat <= self.ttl]

    # -- lifecycle ------------------------------------------------------------------------------

    def open(self, agent_id: str, connection_id: str, scope: str = "single", filter_: str = "all",
             spawn_capable: bool = False, client: dict[str, object] | None = None) -> tuple[Connection, int]:
        """Create the connection or reattach to it; returns it and the new stream's token. Opening
        a live id again evicts that id's previous stream; the connection keeps rooms and lease."""
        check_id("connection_id", connection_id)
        if scope not in SCOPES:
            raise UsageError(f"scope must be one of {SCOPES}, not {scope!r}", "use scope=single or scope=all")
        if filter_ not in FILTERS:
            raise UsageError(f"filter must be one of {FILTERS}, not {filter_!r}", "use filter=all or addressed")
        now = self.clock.now()

        def work(db: Database, rows: dict[str, Connection]) -> int:
            _refuse_foreign(db, rows, connection_id, "generate a fresh connection id")
            # Do the sweep's work for this agent first: where no server sweeps (embedded use, one
            # process after another), lapsed connections must neither count nor pile up.
            for other in [c for c in rows.values() if c.id != connection_id]:
                if other.alive and now - other.last_beat > self.ttl:
                    _kill(other, "heartbeat lapsed")
                elif not other.alive and now - other.last_beat > PURGE_AFTER:
                    db.execute(delete(table).where(table.c.connection_id == other.id))
                    del rows[other.id]
            conn = rows.get(connection_id)
            if conn is None or not conn.alive:
                live = [c for c in rows.values() if c.alive]
                if len(live) >= MAX_CONNECTIONS:
                    raise ConflictError(f"agent already has {MAX_CONNECTIONS} live connections",
                                        "close connections you no longer use (stop beating them)")
                prior = conn
                conn = rows[connection_id] = Connection(
                    id=connection_id, agent_id=agent_id,
                    incarnation=prior.incarnation + 1 if prior else 1,
                    stream_token=prior.stream_token if prior else 0)
            conn.scope, conn.filter, conn.spawn_capable = scope, filter_, spawn_capable
            conn.client = dict(client or {})
            conn.stream_token += 1  # a stream still attached with an older token is evicted
            conn.attached = True
            conn.last_beat = now
            return conn.stream_token

        token = self._write(agent_id, work)
        with self._lock:
            return self._by_id[connection_id], token

    def detach(self, conn: Connection, token: int) -> None:
        if conn.stream_token != token or not conn.alive:
            return  # a newer stream owns the connection, or it is gone

        def work(_db: Database, rows: dict[str, Connection]) -> None:
            row = rows.get(conn.id)
            if row is not None and row.incarnation == conn.incarnation and row.stream_token == token:
                row.attached = False

        self._write(conn.agent_id, work, notify=False)

    def eviction(self, conn: Connection, token: int) -> str | None:
        """Why the stream with `token` must stop, or None while it may go on."""
        with self._lock:
            if token == conn.evicted_token and conn.evicted_reason:
                return conn.evicted_reason
            if token < conn.stream_token:
                return "replaced by a new stream for this connection"
            return conn.dead_reason

    def get(self, agent_id: str, connection_id: str | None) -> Connection:
        """The live connection `connection_id` of `agent_id` (409 when unknown or dead)."""
        if not connection_id:
            raise UsageError(
                "Not connected to a room. Call connect_to_room first",
                "send the header X-Switch-Connection-Id with the id of your open event stream",
            )
        with self._lock:
            known = connection_id in self._by_id
        if not known:
            self.reload([agent_id])  # opened through another replica a moment ago
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
        now = self.clock.now()

        def work(db: Database, rows: dict[str, Connection]) -> None:
            _refuse_foreign(db, rows, connection_id, "beat only your own connections")
            conn = rows.get(connection_id)
            if conn is None or not conn.alive:
                raise NotFoundError(f"connection {connection_id} is unknown or dead",
                                    "reopen the event stream to create the connection again")
            if not conn.attached:
                raise ConflictError(f"connection {connection_id} has no stream attached",
                                    "reopen the event stream with the same connection id")
            conn.last_beat = now
            conn.cursor = max(conn.cursor, cursor)

        self._write(agent_id, work, notify=False)
        with self._lock:
            return self._by_id[connection_id]

    def sweep(self) -> list[Connection]:
        """Mark connections whose last beat is older than the TTL dead; returns them."""
        now = self.clock.now()
        cutoff, purge_before = now - self.ttl, now - PURGE_AFTER
        with self.ledger.engine.connect() as db:
            found = db.execute(select(table.c.agent_id, table.c.dead_reason).where(
                or_(and_(table.c.dead_reason.is_(None), table.c.last_beat < cutoff),
                    and_(table.c.dead_reason.is_not(None), table.c.last_beat < purge_before)))).all()
        agents = sorted({r.agent_id for r in found if r.dead_reason is None})
        dead: list[Connection] = []
        for agent_id in agents:
            with self._lock:
                held = {cid: c for cid, c in self._by_id.items() if c.agent_id == agent_id}

            def work(_db: Database, rows: dict[str, Connection]) -> list[str]:
                lapsed = [c for c in rows.values() if c.alive and c.last_beat < cutoff]
                for conn in lapsed:
                    _kill(conn, "heartbeat lapsed")
                return [c.id for c in lapsed]

            for cid in self._write(agent_id, work):
                dead.append(held.get(cid) or Connection(id=cid, agent_id=agent_id, dead_reason="heartbeat lapsed"))
        if any(r.dead_reason is not None for r in found):
            self.ledger.transact(lambda db: db.execute(delete(table).where(
                table.c.dead_reason.is_not(None), table.c.last_beat < purge_before)), lock_chain=False)
        return dead

    def close(self, agent_id: str, connection_id: str, reason: str = "closed by the client") -> None:
        def work(_db: Database, rows: dict[str, Connection]) -> None:
            conn = rows.get(connection_id)
            if conn is not None and conn.alive:
                _kill(conn, reason)

        self._write(agent_id, work)

    # -- room slots ----------------------------------------------------------------------------

    def _own(self, rows: dict[str, Connection], conn: Connection) -> Connection:
        row = rows.get(conn.id)
        if row is None or not row.alive or row.incarnation != conn.incarnation:
            raise ConflictError(f"connection {conn.id} is unknown or dead",
                                "reopen the event stream with this connection id, then retry")
        return row

    def claim(self, conn: Connection, room_id: str, takeover: bool) -> str | None:
        """Claim the (agent, room) slot; returns a warning when another connection was evicted."""
        check_id("room id", room_id)

        def work(_db: Database, rows: dict[str, Connection]) -> str | None:
            mine = self._own(rows, conn)
            warning = None
            for other in rows.values():
                if other.id == mine.id or not other.alive or room_id not in other.rooms:
                    continue
                if not takeover:
                    raise ConflictError(f"connection {other.id} already holds room {room_id}",
                                        "pass takeover=true to move the room to this connection")
                other.rooms.remove(room_id)
                other.rooms_version += 1
                other.rooms_reason = f"room {room_id} taken over by connection {mine.id}"
                if other.scope == "single":
                    other.evicted_token, other.evicted_reason = other.stream_token, f"room {room_id} taken over"
                warning = f"took room {room_id} over from connection {other.id}"
            before = list(mine.rooms)
            if mine.scope == "single":
                mine.rooms = [room_id]
            elif room_id not in mine.rooms:
                mine.rooms.append(room_id)
            if mine.rooms != before:
                mine.rooms_version += 1
                mine.rooms_reason = f"claimed room {room_id}"
            return warning

        return self._write(conn.agent_id, work)

    def unclaim(self, conn: Connection, room_id: str) -> None:
        check_id("room id", room_id)

        def work(_db: Database, rows: dict[str, Connection]) -> None:
            mine = self._own(rows, conn)
            if room_id in mine.rooms:
                mine.rooms.remove(room_id)
                mine.rooms_version += 1
                mine.rooms_reason = f"released room {room_id}"

        self._write(conn.agent_id, work)

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

    def live_connections(self, agent_id: str) -> list[Connection]:
        """The agent's connections whose last beat is within the TTL (through any replica)."""
        return self._fresh(self.connections(agent_id))

    def is_live(self, agent_id: str) -> bool:
        return bool(self.live_connections(agent_id))

    def role_holders(self, room_id: str, role: str) -> list[str]:
        with self._lock:
            holding = [c for c in self._by_id.values() if c.alive and c.role == (room_id, role)]
        return sorted({c.agent_id for c in self._fresh(holding) if c.role == (room_id, role)})

    def set_role(self, conn: Connection, room_id: str, role: str, exclusive: bool) -> None:
        cutoff = self.clock.now() - self.ttl

        def work(db: Database, rows: dict[str, Connection]) -> None:
            mine = self._own(rows, conn)
            if exclusive:
                held = db.execute(select(table.c.agent_id).where(
                    table.c.role_room == room_id, table.c.role_name == role, table.c.dead_reason.is_(None),
                    table.c.last_beat >= cutoff, table.c.agent_id != conn.agent_id)).first()
                if held is not None:
                    raise UsageError(f"role {role!r} is exclusive and currently held",
                                     "wait for the holder to release it or for its lease to lapse")
            for other in rows.values():  # an agent holds at most one role at a time
                other.role = None
            mine.role = (room_id, role)

        self._write(conn.agent_id, work, f"role:{room_id}:{role}")

    def release_role(self, agent_id: str) -> tuple[str, str] | None:
        def work(_db: Database, rows: dict[str, Connection]) -> tuple[str, str] | None:
            released = None
            for conn in rows.values():
                if conn.role is not None:
                    released, conn.role = conn.role, None
            return released

        return self._write(agent_id, work)

    def role_of(self, agent_id: str) -> tuple[str, str] | None:
        with self._lock:
            for conn in self._by_id.values():
                if conn.agent_id == agent_id and conn.alive and conn.role is not None:
                    return conn.role
        return None
