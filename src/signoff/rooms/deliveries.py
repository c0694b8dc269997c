"""Recent deliveries per agent, kept in memory so live streams do not query the database for
every event. Exact for every sequence above its floor; below it, callers read the table."""

from __future__ import annotations

import threading
from collections import deque

from signoff.rooms.projection import Delivery

PER_AGENT = 256  # enough for live streams; a stream further behind reads the table


class RecentDeliveries:
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
