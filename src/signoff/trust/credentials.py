"""Bearer credentials and shared secrets: minted once, shown once, stored only as SHA-256 digests.

Every token signoff issues (rooms users, agents and registration keys; desk roles) is a prefix
naming its kind and 256 random bits. Only `digest(token)` is stored, and a presented token is
compared with a stored digest in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from signoff.kernel.ids import new_token


def mint(prefix: str) -> str:
    """A new token of the kind `prefix` names (`sou`, `dke`, ...): shown once, never stored."""
    return f"{prefix}_{new_token(32)}"


def digest(token: str) -> str:
    """What is stored for a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def matches(stored: str, token: str) -> bool:
    """Constant-time comparison of a stored digest with a presented token's digest."""
    return hmac.compare_digest(stored.encode(), digest(token).encode())


def shared_secret(path: Path) -> bytes:
    """The secret kept in `path` (mode 0600), created on first use.

    Processes that start together must end up with one secret, so the file appears complete or not
    at all: each writer fills its own exclusively created temporary file and links it into place;
    `link` refuses when the name exists, and the losers read the winner's secret.
    """
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{new_token(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(new_token())
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process won the race: its secret is the one
    finally:
        tmp.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> bytes:
    return path.read_text().strip().encode()
