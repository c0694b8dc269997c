"""A read that concurrent callers share, without any of them getting a value older than its call.

Every caller of `SharedRead.get()` gets the result of a read that started after it called: either
it starts one itself, or it waits for the next one to start and finish. So callers that arrive
while a read is running share the one after it: under load, many requests cost one round trip,
and none sees a value from before it arrived (a check that must cover everything committed before
the request came keeps that guarantee).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class SharedRead(Generic[T]):
    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._cond = threading.Condition()
        self._running = False
        self._started = 0  # reads started so far; the running one, if any, is number `_started`
        self._done = 0  # the number of the latest read that finished
        self._value: T | None = None

    def get(self) -> T:
        with self._cond:
            need = self._started + 1  # the first read that starts after this call
            while self._done < need:
                if not self._running:
                    self._running = True
                    self._started += 1
                    mine = self._started
                    break
                self._cond.wait()
            else:
                return cast(T, self._value)  # set by the read numbered `_done`, which started after us
        try:
            value = self._read()
        except BaseException:
            with self._cond:  # a waiter starts the next read itself
                self._running = False
                self._cond.notify_all()
            raise
        with self._cond:
            self._value, self._done, self._running = value, mine, False
            self._cond.notify_all()
        return value
