"""Identifiers and secrets."""

from __future__ import annotations

import re
import secrets
import uuid

_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def new_id(prefix: str = "") -> str:
    """A random, sortable-enough unique id: `<prefix>_<32 hex>` or plain hex."""
    raw = uuid.uuid4().hex
    return f"{prefix}_{raw}" if prefix else raw


def new_token(nbytes: int = 32) -> str:
    """A URL-safe secret for bearer tokens and capabilities."""
    return secrets.token_urlsafe(nbytes)


def readable_id(prefix: str, number: int, width: int = 4) -> str:
    """Readable sequential ids such as BUG-0001 or INC-0001."""
    if not _PREFIX.match(prefix):
        raise ValueError(f"id prefix must be letters and digits starting with a letter, got {prefix!r}")
    return f"{prefix}-{number:0{width}d}"
