"""`SharedRead`: callers share reads, and none gets a value read before it called."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from signoff.kernel.shared_read import SharedRead
from tests.conftest import wait_for


class Store:
    """A stored value and a read of it that can be held open: what a read returns is the value as
    it was when the read started, as a database statement would see it."""

    def __init__(self) -> None:
        self.value = 1
        self.reads = 0
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()
        self.fail_next = False

    def read(self) -> int:
        seen = self.value
        self.reads += 1
        self.started.set()
        self.hold.wait(30)
        if self.fail_next:
            self.fail_next = False
            raise OSError("the database went away")
        return seen


def _waiting(shared: SharedRead[int]) -> int:
    return len(shared._cond._waiters)  # type: ignore[attr-defined]  # CPython's Condition keeps them here


def test_callers_arriving_during_a_read_never_get_its_older_value_and_share_the_next() -> None:
    store = Store()
    shared = SharedRead(store.read)
    store.hold.clear()
    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(shared.get)
        assert store.started.wait(30)
        store.value = 2  # committed while the first read runs: it may or may not see it
        later: list[Future[int]] = [pool.submit(shared.get) for _ in range(5)]
        assert wait_for(lambda: _waiting(shared) == 5)
        store.hold.set()
        assert first.result(30) == 1
        assert [f.result(30) for f in later] == [2] * 5
    assert store.reads == 2  # five callers, one read between them


def test_a_failed_read_fails_its_caller_alone_and_a_waiter_reads_again() -> None:
    store = Store()
    shared = SharedRead(store.read)
    store.hold.clear()
    store.fail_next = True
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(shared.get)
        assert store.started.wait(30)
        later = [pool.submit(shared.get) for _ in range(2)]
        assert wait_for(lambda: _waiting(shared) == 2)
        store.hold.set()
        with pytest.raises(OSError, match="went away"):
            first.result(30)
        assert [f.result(30) for f in later] == [1, 1]
    assert store.reads == 2


def test_a_caller_after_a_finished_read_reads_again() -> None:
    store = Store()
    shared = SharedRead(store.read)
    assert shared.get() == 1
    store.value = 5
    assert shared.get() == 5
    assert store.reads == 2
