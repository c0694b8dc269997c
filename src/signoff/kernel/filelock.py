"""One writer at a time across threads and processes: an exclusive `flock` on a lock file beside
what is guarded (two servers on one home, two verifications filling one cache, commands ending at
once). The lock goes with the open file, so a crashed holder never leaves it held."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """Hold `lock` (created, with its folder, if missing) for the block; others wait their turn."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
