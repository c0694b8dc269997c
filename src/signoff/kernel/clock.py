"""An injectable clock, so time-dependent rules (leases, expiry, rate limits) are testable."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class FixedClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._t = start
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._t

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._t += seconds


def utc_iso(ts: float) -> str:
    """RFC 3339 UTC timestamp with microseconds, e.g. 2026-11-30T01:40:54.123456Z."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_minute(ts: float | None) -> str:
    """A time as people read it on a card, to the minute: "2026-11-30 01:40 UTC" ("unknown": None)."""
    return "unknown" if ts is None else datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M UTC")
