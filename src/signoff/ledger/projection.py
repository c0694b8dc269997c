"""Projections: query tables kept from the events of the cases whose ids start with a prefix.

The tables are a cache of the events: `rebuild()` drops their rows and replays every event. A
cursor row (one per projection, in a table with `name` and `seq` columns) records the last event
applied; it is advanced in the same transaction as the rows it covers, with a compare-and-set, so
two processes catching up at once never apply an event twice. A workflow supplies only its
handlers: `apply(conn, event, into)` writes the rows of one event and notes what changed in `into`,
a fresh `start()` value per pass; an optional `finish(conn, into)` writes, once per pass, rows that
`apply` only collected (no handler may read them back within the pass).

On PostgreSQL a projection may name a `channel`: each pass then sends `NOTIFY channel, '<origin>
<cursor>'` in its own transaction, so other processes learn of the rows at commit (see `follow`);
`origin` names the sender, so that it can ignore its own notifications.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from sqlalchemy import Connection, Table, delete, insert, select, text, update

from signoff.kernel.shared_read import SharedRead
from signoff.ledger.engine import is_postgres, single_statement
from signoff.ledger.schema import events, starts_with
from signoff.ledger.store import Event, SqlLedger

R = TypeVar("R")
BATCH = 500


class Projector(Generic[R]):
    """Applies the events of one prefix, in chain order, to a projection's tables.

    After every pass `on_pass(result, cursor)` is called: `result` is what `apply` noted, or None
    when this process must drop what it derived in memory (another process applied events this
    one never saw, or the tables were rebuilt). With `on_skip`, a range another process applied is
    reported as `on_skip(after, upto)` instead (the rows of that range are committed and readable),
    so the caller can pick up exactly what changed rather than drop everything.
    """

    def __init__(self, ledger: SqlLedger, *, name: str, prefix: str, cursor_table: Table, tables: Sequence[Table],
                 start: Callable[[], R], apply: Callable[[Connection, Event, R], None],
                 finish: Callable[[Connection, R], None] | None = None,
                 on_pass: Callable[[R | None, int], None] | None = None,
                 on_skip: Callable[[int, int], None] | None = None, channel: str | None = None,
                 origin: str = "", batch: int = BATCH) -> None:
        self.ledger = ledger
        self.name, self.prefix = name, prefix
        self._cursors, self._tables = cursor_table, tuple(tables)
        self._start, self._apply, self._finish = start, apply, finish
        self._on_pass, self._on_skip = on_pass, on_skip
        self._notify = text("SELECT pg_notify(:channel, :cursor)") if channel and is_postgres(ledger.engine) else None
        self._cursor_query = select(cursor_table.c.seq).where(cursor_table.c.name == name)
        self._cursor_locked = self._cursor_query.with_for_update()
        self._shared_cursor = SharedRead(self._stored_cursor_now)
        self.channel, self._origin = channel, origin
        self._batch_size = batch
        self._lock = threading.Lock()
        self._cursor = self.stored_cursor()

    def cursor(self) -> int:
        """The last event this process applied or saw applied."""
        return self._cursor

    def stored_cursor(self) -> int:
        """The cursor as stored (moved by any process that applied events), as read by a statement
        that started after this call. Requests read it before every check, so concurrent callers
        share one read (`SharedRead`)."""
        return self._shared_cursor.get()

    def _stored_cursor_now(self) -> int:
        # One statement outside a transaction: a BEGIN/ROLLBACK around it doubled its round trips.
        with single_statement(self.ledger.engine) as conn:
            return self._read_cursor(conn) or 0

    def _read_cursor(self, conn: Connection, for_update: bool = False) -> int | None:
        # Built once: making the statement and its cache key anew cost as much as running it.
        value = conn.execute(self._cursor_locked if for_update else self._cursor_query).scalar()
        return None if value is None else int(value)

    def _batch(self, after: int) -> tuple[int, list[Event]]:
        """The stored cursor, and the events after `after` unless another process already moved the
        cursor past it (then there is no point in a write transaction that would find it moved)."""
        query = (select(events).where(events.c.seq > after, starts_with(events.c.case_id, self.prefix))
                 .order_by(events.c.seq).limit(self._batch_size))
        with self.ledger.engine.connect() as conn:
            stored = self._read_cursor(conn) or 0
            rows = conn.execute(query).all() if stored <= after else []
        return stored, [Event(int(r.seq), r.case_id, int(r.version), r.type, json.loads(r.payload), r.recorded_at,
                      r.prev_hash, r.hash) for r in rows]

    def catch_up(self) -> int:
        """Apply every event not applied yet; returns the cursor."""
        with self._lock:
            while True:
                stored, batch = self._batch(self._cursor)
                if stored > self._cursor:
                    self._skip_to(stored)
                    continue
                if not batch:
                    return self._cursor
                expected = self._cursor

                def run(conn: Connection, batch: list[Event] = batch,
                        expected: int = expected) -> tuple[R | None, int]:
                    # The cursor row's lock makes passes of several processes take turns; appends
                    # go on meanwhile (the events read are a gapless prefix of the chain: sequence
                    # numbers are taken under the chain lock, held to commit). A first pass that
                    # races another to insert the row fails on its key and is retried.
                    current = self._read_cursor(conn, for_update=True)
                    if (current or 0) != expected:
                        # Another process applied events meanwhile: take its cursor and read again.
                        return None, current or 0
                    result = self._start()  # fresh per attempt: a retried transaction starts over
                    for event in batch:
                        self._apply(conn, event, result)
                    if self._finish is not None:
                        self._finish(conn, result)
                    last = batch[-1].seq
                    if current is None:
                        conn.execute(insert(self._cursors).values(name=self.name, seq=last))
                    else:
                        conn.execute(update(self._cursors).where(self._cursors.c.name == self.name).values(seq=last))
                    if self._notify is not None:
                        conn.execute(self._notify, {"channel": self.channel, "cursor": f"{self._origin} {last}"})
                    return result, last

                result, cursor = self.ledger.transact(run, lock_chain=False)
                if result is None and cursor > expected:
                    self._skip_to(cursor)
                    continue
                self._cursor = cursor
                if self._on_pass is not None:
                    self._on_pass(result, self._cursor)
                if result is not None and len(batch) < self._batch_size:
                    return self._cursor

    def follow(self, read: Callable[[int], int]) -> int:
        """Take what other processes applied (after their notification), applying nothing here:
        `read(cursor)`, run under this projector's lock, picks up what they applied after `cursor`
        and returns the stored cursor it read up to. Returns the cursor."""
        with self._lock:
            upto = read(self._cursor)
            self._cursor = max(self._cursor, upto)
            return self._cursor

    def _skip_to(self, upto: int) -> None:
        after, self._cursor = self._cursor, upto
        if self._on_skip is not None:
            self._on_skip(after, upto)
        elif self._on_pass is not None:
            self._on_pass(None, upto)

    def rebuild(self) -> int:
        """Forget the tables and replay every event (after a schema change or for a check)."""
        with self._lock:

            def run(conn: Connection) -> None:
                for table in self._tables:
                    conn.execute(delete(table))
                conn.execute(delete(self._cursors).where(self._cursors.c.name == self.name))

            self.ledger.transact(run)
            self._cursor = 0
            if self._on_pass is not None:
                self._on_pass(None, 0)
        return self.catch_up()
