"""What every rooms aggregate shares: the ledger, the projector that keeps the query tables, the
hot-path cache, group commit, and the live connections and notifier.

Every change is a ledger event under a `rooms.*` case; the query tables follow through the
projector before a write returns, so a caller reads its own writes.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select

from signoff.kernel.clock import Clock
from signoff.kernel.ids import new_id
from signoff.ledger import AppendResult, NewEvent, SqlLedger
from signoff.ledger.engine import is_postgres
from signoff.rooms.storage import connections, fanout
from signoff.rooms.storage.connections import ConnectionRegistry
from signoff.rooms.storage.delivery import RecentDeliveries
from signoff.rooms.storage.notify import Notifier
from signoff.rooms.storage.projection import Applied, Projector

# Set for one request by `one_freshness_check`: True once its freshness check has run.
_CHECKED: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("signoff_rooms_checked", default=None)


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass
class _Pending:
    case_id: str
    events: list[NewEvent]
    seqs: tuple[int, ...] | None = None
    error: BaseException | None = None
    done: bool = False


class RoomStore:
    def __init__(self, ledger: SqlLedger, clock: Clock | None = None) -> None:
        self.ledger = ledger
        self.clock: Clock = clock or ledger.clock
        self.notifier = Notifier()
        self._cache: dict[tuple[str, ...], Any] = {}
        self._cache_lock = threading.Lock()
        self._cache_generation = 0
        self._group = threading.Condition()
        self._pending: list[_Pending] = []
        self._leader = False
        self.origin = new_id()  # names this process in its notifications
        self.projector = Projector(ledger, on_applied=self._applied, on_skip=self._skipped, channel=fanout.CHANNEL,
                                   origin=self.origin)
        self.recent = RecentDeliveries(self.projector.cursor())
        self.connections = ConnectionRegistry(
            ledger, self.clock,
            on_change=lambda agent_id: self.notifier.notify([f"agent:{agent_id}", f"agent+:{agent_id}"]),
            origin=self.origin)
        self.projector.catch_up()

    def _applied(self, applied: Applied) -> None:
        if applied.foreign or applied.structural:
            with self._cache_lock:
                self._cache.clear()
                self._cache_generation += 1
        if applied.foreign:
            self.recent.reset(applied.cursor)
            self.notifier.notify_all()
            return
        self.recent.add(applied.deliveries)
        self.notifier.notify(applied.keys)

    def _skipped(self, after: int, upto: int) -> None:
        """Another process (a replica) applied (after, upto]: take in exactly what it holds."""
        _, applied = fanout.applied_since(self.ledger.engine, after, upto)
        self._applied(applied if applied is not None else Applied(foreign=True, cursor=upto))

    def _followed(self, after: int) -> int:
        """Take in what other replicas applied after `after`, up to the stored cursor; returns it."""
        upto, applied = fanout.applied_since(self.ledger.engine, after)
        if upto > after:
            self._applied(applied if applied is not None else Applied(foreign=True, cursor=upto))
        return upto

    def _woken(self, notes: dict[str, set[str]] | None) -> None:
        """Other replicas changed something (None: maybe anything, while this one was not listening)."""
        if notes is None or fanout.CHANNEL in notes:
            self.projector.follow(self._followed)
        if notes is None:
            self.connections.reload_all()
        elif connections.CHANNEL in notes:
            self.connections.reload(note.rpartition(" ")[2] for note in notes[connections.CHANNEL])

    @contextlib.contextmanager
    def fanout(self) -> Iterator[None]:
        """While open (on PostgreSQL), events other replicas apply reach this process's streams as
        they commit, through LISTEN/NOTIFY; without it they arrive with the next `refresh`."""
        if not is_postgres(self.ledger.engine):
            yield
            return
        listener = fanout.Listener(fanout.conninfo(self.ledger.engine), (fanout.CHANNEL, connections.CHANNEL),
                                   self._woken, ignore=self.origin)
        listener.start()
        try:
            yield
        finally:
            listener.stop()

    # Hot-path reads (posting) come from a cache of rooms, members, roles and agent settings. It is
    # exact whenever the projector is caught up: every change to those goes through the projector,
    # which clears the cache (and another process's changes are detected as foreign).
    def cached(self, key: tuple[str, ...], load: Callable[[], Any], keep_none: bool = True) -> Any:
        """The cached value of `key`, else `load()` (kept unless it is None and not `keep_none`:
        what anyone may ask for, such as unknown tokens, must not grow the cache)."""
        with self._cache_lock:
            if key in self._cache:
                return self._cache[key]
            generation = self._cache_generation
        value = load()
        with self._cache_lock:
            if generation == self._cache_generation and (keep_none or value is not None):
                self._cache[key] = value
        return value

    @contextlib.contextmanager
    def one_freshness_check(self) -> Iterator[None]:
        """Within the block (one request, in one thread), `ensure_fresh` reads the stored cursor
        once: the first check already covers everything committed before the request arrived, and
        what commits during it is concurrent with it either way. Its own writes project in its own
        pass, so they need no check."""
        reset = _CHECKED.set([False])
        try:
            yield
        finally:
            _CHECKED.reset(reset)

    def ensure_fresh(self) -> None:
        """Make the cache exact before a check: if the stored projection cursor is ahead of ours,
        another process (or a pass of ours about to report) moved it, so take in what it applied (one
        more statement, none when our own pass covered it; events appended but not yet applied by
        anyone are not in the tables either, and the next pass or housekeeping applies them). One
        small read, and no lock, otherwise: requests must not queue behind a pass."""
        checked = _CHECKED.get()
        if checked is not None:
            if checked[0]:
                return
            checked[0] = True
        stored, ours = self.projector.stored_cursor(), self.projector.cursor()
        if stored > ours:
            self.projector.follow(lambda after: after if after >= stored else self._followed(after))
        elif stored < ours:  # the tables were rebuilt meanwhile
            self.projector.catch_up()

    def group_append(self, case_id: str, events: Sequence[NewEvent]) -> tuple[int, ...]:
        """Append and project, committing concurrent callers' events together (group commit):
        one transaction and one projection pass for everything that queued meanwhile."""
        item = _Pending(case_id, list(events))
        with self._group:
            self._pending.append(item)
            while not item.done and self._leader:
                self._group.wait()
            if not item.done:
                self._leader = True
                batch, self._pending = self._pending, []
            else:
                batch = []
        if batch:
            try:
                by_case: dict[str, list[_Pending]] = {}
                for it in batch:
                    by_case.setdefault(it.case_id, []).append(it)
                for case, items in by_case.items():
                    try:
                        result = self.ledger.append(case, None, [e for it in items for e in it.events])
                    except Exception as exc:  # every caller of this case gets the failure
                        for it in items:
                            it.error = exc
                        continue
                    offset = 0
                    for it in items:
                        it.seqs = result.seqs[offset:offset + len(it.events)]
                        offset += len(it.events)
                self.projector.catch_up()
            finally:
                with self._group:
                    for it in batch:
                        it.done = True
                    self._leader = False
                    self._group.notify_all()
        if item.error is not None:
            raise item.error
        assert item.seqs is not None
        return item.seqs

    def append(self, case_id: str, events: Sequence[NewEvent], expected: int | None = None,
               idempotency_key: str | None = None) -> AppendResult:
        result = self.ledger.append(case_id, expected, events, idempotency_key=idempotency_key)
        self.projector.catch_up()
        return result

    def all(self, query: Select[Any]) -> list[Any]:
        with self.ledger.engine.connect() as conn:
            return list(conn.execute(query).all())

    def one(self, query: Select[Any]) -> Any:
        with self.ledger.engine.connect() as conn:
            return conn.execute(query).first()

    def now_ms(self) -> int:
        return int(self.clock.now() * 1000)
