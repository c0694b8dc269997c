"""Delivery: each agent's durable event stream (the `rooms_deliveries` rows the projector writes),
read from a cursor, and the recent part of it kept in memory so live streams do not query the
database for every event."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from signoff.rooms.storage.projection import Delivery
from signoff.rooms.storage.tables import rooms_deliveries

if TYPE_CHECKING:
    from signoff.rooms.storage.store import RoomStore

PER_AGENT = 256  # enough for live streams; a stream further behind reads the table


class RecentDeliveries:
    """Exact for every sequence above its floor; below it, callers read the table."""

    def __init__(self, floor: int, per_agent: int = PER_AGENT) -> None:
        self._lock = threading.Lock()
        self._floor = floor  # every delivery with seq > floor was added here
        self._per_agent = per_agent
        self._by_agent: dict[str, deque[Delivery]] = {}
        self._agent_floor: dict[str, int] = {}

    def reset(self, floor: int) -> None:
        """Another process applied events we never saw: forget everything up to `floor`."""
        with self._lock:
            self._floor = floor
            self._by_agent.clear()
            self._agent_floor.clear()

    def add(self, deliveries: list[Delivery]) -> None:
        with self._lock:
            for d in deliveries:
                queue = self._by_agent.setdefault(d.agent_id, deque())
                queue.append(d)
                if len(queue) > self._per_agent:
                    self._agent_floor[d.agent_id] = queue.popleft().seq

    def read(self, agent_id: str, after: int, limit: int, addressed_only: bool) -> list[Delivery] | None:
        """Deliveries after `after`, or None when the cache does not cover that position."""
        with self._lock:
            floor = max(self._floor, self._agent_floor.get(agent_id, 0))
            if after < floor:
                return None
            out: list[Delivery] = []
            for d in reversed(self._by_agent.get(agent_id, ())):
                if d.seq <= after:
                    break
                if not addressed_only or d.addressed:
                    out.append(d)
            out.reverse()
            return out[:limit]


def _envelope(seq: int, text: str) -> dict[str, Any]:
    env: dict[str, Any] = json.loads(text)
    env["sequence"] = seq
    return env


class Streams:
    def __init__(self, store: RoomStore) -> None:
        self.store = store

    def head(self) -> int:
        """The newest sequence number (a global, durable position; survives restarts)."""
        return self.store.ledger.head()[0]

    def agent_events(self, agent_id: str, after: int, limit: int = 200,
                     addressed_only: bool = False) -> list[dict[str, Any]]:
        """The agent's durable stream after `after`: envelopes with `sequence`, in order (from
        memory when recent, else from the table)."""
        cached = self.recent_events(agent_id, after, limit, addressed_only)
        if cached == []:
            # Memory covers what this process projected, and every local write catches up with
            # other processes' first; a reader that writes nothing (an agent polling while a person
            # acts through `signoff serve`) catches up here, with one small read only when idle.
            self.store.ensure_fresh()
            cached = self.recent_events(agent_id, after, limit, addressed_only)
        if cached is not None:
            return cached
        query = (select(rooms_deliveries.c.seq, rooms_deliveries.c.envelope)
                 .where(rooms_deliveries.c.agent_id == agent_id, rooms_deliveries.c.seq > after)
                 .order_by(rooms_deliveries.c.seq).limit(limit))
        if addressed_only:
            query = query.where(rooms_deliveries.c.addressed.is_(True))
        return [_envelope(int(r.seq), r.envelope) for r in self.store.all(query)]

    def recent_events(self, agent_id: str, after: int, limit: int = 200,
                      addressed_only: bool = False) -> list[dict[str, Any]] | None:
        """Like agent_events, from memory only, without I/O; None when memory does not cover `after`."""
        cached = self.store.recent.read(agent_id, after, limit, addressed_only)
        if cached is None:
            return None
        return [_envelope(d.seq, d.envelope) for d in cached]

    def last_agent_seq(self, agent_id: str) -> int:
        value = self.store.one(select(func.max(rooms_deliveries.c.seq))
                               .where(rooms_deliveries.c.agent_id == agent_id))
        return int(value[0] or 0) if value is not None else 0

    async def subscribe(self, agent_id: str, after: int = 0, poll: float = 1.0) -> AsyncIterator[dict[str, Any]]:
        """Async iterator over the agent's events after `after` (in-process consumers)."""
        key = f"agent:{agent_id}"
        cursor = after
        notifier = self.store.notifier
        while True:
            seen = notifier.version(key)
            batch = self.agent_events(agent_id, cursor)
            for env in batch:
                cursor = env["sequence"]
                yield env
            if not batch:
                await notifier.wait(key, seen, poll)
