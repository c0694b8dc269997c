"""Wake-ups for waiting streams, safe to trigger from any thread.

Keys are strings ("agent:<id>", "room:<id>"). Each key has a counter; a waiter passes the counter
it saw before reading, so a notification that lands between its read and its wait is never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable


class Notifier:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, int] = {}
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    def version(self, key: str) -> int:
        with self._lock:
            return self._counters.get(key, 0)

    def notify(self, keys: Iterable[str]) -> None:
        wake: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        with self._lock:
            for key in set(keys):
                self._counters[key] = self._counters.get(key, 0) + 1
                wake.extend(self._waiters.get(key, ()))
        for loop, event in wake:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(event.set)

    def notify_all(self) -> None:
        """Wake every waiter (after changes this process cannot attribute to keys)."""
        with self._lock:
            keys = list(self._waiters)
        self.notify(keys)

    async def wait(self, key: str, seen: int, timeout: float) -> bool:
        """Wait until `key` changes past `seen` or `timeout` passes; True when it changed."""
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        entry = (loop, event)
        with self._lock:
            if self._counters.get(key, 0) != seen:
                return True
            self._waiters.setdefault(key, set()).add(entry)
        # Not asyncio.wait_for: on Python 3.11 a cancellation racing the event's wake-up could leave
        # the cancelled stream waiting forever (a client's close() then hung).
        waiter = asyncio.ensure_future(event.wait())
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
            return bool(done) or self.version(key) != seen
        finally:
            waiter.cancel()
            with self._lock:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.discard(entry)
                    if not waiters:
                        del self._waiters[key]
