"""Replacing a file whole: the new content is written beside it under a name no other writer
shares, then renamed over it, so a reader sees the old file or the new one and never half of one.

The staging name is unique per write (`tempfile.mkstemp`, created with O_EXCL): two writers of
the same file (two threads, two server processes on one home) never rename each other's staged
file away, and a link planted at a guessable name is never written through.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def staged(path: Path, *, private: bool = False, buffering: int = -1) -> Iterator[IO[bytes]]:
    """A binary file that takes `path`'s place when the block ends without an exception (and is
    removed when it raises). `private` keeps it readable by its owner only (0600) from the first
    byte; otherwise it is 0644."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".staged")
    try:
        if not private:
            os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb", buffering=buffering) as fh:
            yield fh
        os.replace(name, path)  # replaces a link at `path` itself, never the file it points to
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def replace_bytes(path: Path, data: bytes, *, private: bool = False) -> None:
    """Put `data` at `path` whole (see `staged`)."""
    with staged(path, private=private) as fh:
        fh.write(data)


def replace_text(path: Path, text: str, *, private: bool = False) -> None:
    """Put `text` (UTF-8) at `path` whole (see `staged`)."""
    replace_bytes(path, text.encode("utf-8"), private=private)


def staging_file(beside: Path, suffix: str) -> Path:
    """An empty file of this call's own in `beside`'s folder (created with O_EXCL, 0600), for a program
    that writes by name (sqlite, pg_dump, git) before the caller puts it in place: two writers at once
    never share it, and a link planted at a guessable name is never written through."""
    beside.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=beside.parent, prefix=f".{beside.name}.", suffix=suffix)
    os.close(fd)
    return Path(name)
