"""Fan-out between replicas: several `signoff serve` processes on one PostgreSQL.

Whichever replica applies a batch of rooms events (its own posts, or stragglers it catches up on)
sends `NOTIFY signoff_rooms, '<origin> <cursor>'` in the same transaction (see the ledger's
projector). Every other replica LISTENs on that channel with psycopg's notification API and, on a
wake-up, picks up exactly the range up to the stored cursor, read back from the tables the sender
committed, in one statement: the deliveries go
into its in-memory recent cache, the streams they concern are woken, and its lookup cache is dropped
when identities, rooms, members, roles or policies changed.

Connection changes (slots, leases, new streams) travel the same way on `signoff_connections`, with
`<origin> <agent id>` as payload: the other replicas read that agent's connections again.

Notifications are a wake-up, never the record: a replica that misses some (its listening connection
broke) catches up from the stored cursor when it listens again and in its periodic refresh.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import BigInteger, Boolean, Engine, String, Text, bindparam, cast, literal, null, select, union_all

from signoff.ledger.schema import events, starts_with
from signoff.rooms.storage.projection import CURSOR, PREFIX, STRUCTURAL, Applied, Delivery
from signoff.rooms.storage.tables import rooms_cursor, rooms_deliveries

CHANNEL = "signoff_rooms"
# A range of more than twice this many rows (deliveries and events) is not copied into memory: the
# replica drops its recent cache instead and its streams read the table (one query each), as after
# a restart. It also caps the distinct payloads a burst of notifications collects.
MAX_ROWS = 20_000
RECONNECT_SECONDS = 0.5
POLL_SECONDS = 0.5  # how often the listening thread checks whether it should stop


def null_of(kind: Any) -> Any:
    return cast(null(), kind)


def _range_query(upto_given: bool) -> Any:
    """The statement of `applied_since`, with `after` (and `upto` when given) as parameters."""
    bound: Any = (bindparam("upto", type_=BigInteger) if upto_given else
                  select(rooms_cursor.c.seq).where(rooms_cursor.c.name == CURSOR).scalar_subquery())
    after = bindparam("after", type_=BigInteger)
    d = rooms_deliveries.c
    # Three row kinds in one shape: kind, seq, name, room_id, addressed, body, type.
    cursor = select(literal("c").label("kind"), cast(bound, BigInteger).label("seq"), null_of(String).label("name"),
                    null_of(String).label("room_id"), null_of(Boolean).label("addressed"), null_of(Text).label("body"),
                    null_of(String).label("type"))
    deliveries = select(literal("d"), d.seq, d.agent_id, d.room_id, d.addressed, d.envelope, d.type).where(
        d.seq > after, d.seq <= bound)
    changes = select(literal("e"), events.c.seq, events.c.type, null_of(String), null_of(Boolean),
                     events.c.payload, null_of(String)).where(events.c.seq > after, events.c.seq <= bound,
                                             starts_with(events.c.case_id, PREFIX))
    return union_all(cursor, deliveries, changes).order_by("kind", "seq", "name").limit(2 * MAX_ROWS + 1)


# Built once: every wake-up of every replica runs one, and building the union and its cache key
# anew cost a replica more than the rest of taking in the range.
_RANGE_UPTO, _RANGE_STORED = _range_query(True), _range_query(False)


def applied_since(engine: Engine, after: int, upto: int | None = None) -> tuple[int, Applied | None]:
    """What other processes applied after `after`, up to `upto` or else the stored cursor: that
    cursor, and the range's deliveries and changes (None when the range is too large to copy; then
    the caller drops its caches). One statement, so one round trip and one consistent snapshot."""
    query, params = (_RANGE_STORED, {"after": after}) if upto is None else (_RANGE_UPTO, {"after": after, "upto": upto})
    with engine.connect() as conn:
        rows = conn.execute(query, params).all()
    reached = int(rows[0].seq or 0) if rows and rows[0].kind == "c" else 0
    if len(rows) > 2 * MAX_ROWS:
        return reached, None
    applied = Applied(cursor=reached)
    for r in rows:
        if r.kind == "d":
            applied.deliveries.append(Delivery(r.name, int(r.seq), r.room_id, bool(r.addressed), r.body, r.type))
            applied.keys.update((f"agent:{r.name}", f"room:{r.room_id}"))
            if r.addressed:
                applied.keys.add(f"agent+:{r.name}")
        elif r.kind == "e":
            applied.structural |= r.name in STRUCTURAL
            room_id = json.loads(r.body).get("room_id")
            if isinstance(room_id, str):
                applied.keys.add(f"room:{room_id}")
    return reached, applied


def conninfo(engine: Engine) -> str:
    """The psycopg connection string for a SQLAlchemy PostgreSQL engine."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


class Listener:
    """LISTEN on some channels in a thread of its own, and call `on_wake` from a second thread with
    the payloads that arrived, by channel: once per burst (a burst that arrives while one call runs
    costs one more), and with None each time listening (re)starts, to catch up on everything that
    was notified while nobody listened.

    A notification's payload is only a hint (anyone who may connect to the database may NOTIFY):
    `on_wake` reads the state it concerns from the tables. Payloads that start with `ignore` and a
    space are this process's own and are dropped: a forged one only drops itself."""

    def __init__(self, dsn: str, channels: tuple[str, ...],
                 on_wake: Callable[[dict[str, set[str]] | None], object], ignore: str = "") -> None:
        self._dsn, self._channels, self._on_wake = dsn, channels, on_wake
        self._own = f"{ignore} " if ignore else None
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._wanted = threading.Condition()
        self._pending: dict[str, set[str]] = {}
        self._everything = False
        self._threads = [threading.Thread(target=self._listen, name="rooms-listen", daemon=True),
                         threading.Thread(target=self._follow, name="rooms-follow", daemon=True)]

    def start(self, timeout: float = 10.0) -> bool:
        """Start both threads; True once the channels are listened to (False if not within `timeout`)."""
        for thread in self._threads:
            thread.start()
        return self._listening.wait(timeout)

    def stop(self) -> None:
        self._stop.set()
        with self._wanted:
            self._wanted.notify_all()
        for thread in self._threads:
            thread.join()

    def _wake(self, channel: str | None, payload: str = "") -> None:
        with self._wanted:
            if channel is None:
                self._everything = True
            elif len(self._pending.setdefault(channel, set())) < MAX_ROWS:
                self._pending[channel].add(payload)
            else:
                self._everything = True  # a flood of distinct payloads: catch up on everything instead
            self._wanted.notify_all()

    def _listen(self) -> None:
        # Imported here, on PostgreSQL only: psycopg costs every `signoff` process a third of a
        # second to import, and most of them never listen.
        import psycopg
        from psycopg import sql

        while not self._stop.is_set():
            try:
                with psycopg.connect(self._dsn, autocommit=True) as conn:
                    for channel in self._channels:
                        conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    self._wake(None)  # whatever was notified while nobody listened
                    self._listening.set()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=POLL_SECONDS):
                            if self._own is None or not note.payload.startswith(self._own):
                                self._wake(note.channel, note.payload)
            except psycopg.Error:
                self._listening.clear()
                self._stop.wait(RECONNECT_SECONDS)

    def _follow(self) -> None:
        while True:
            with self._wanted:
                while not self._stop.is_set() and not self._pending and not self._everything:
                    self._wanted.wait()
                if self._stop.is_set():
                    return
                notes = None if self._everything else self._pending
                self._pending, self._everything = {}, False
            try:
                self._on_wake(notes)
            except Exception:  # the database is away: retry shortly; the periodic refresh covers it too
                self._wake(None)
                self._stop.wait(RECONNECT_SECONDS)
