"""Identifiers and secrets, and the one grammar every id passed between components follows.

An id travels as a URL path segment, a header, a ledger case name and a page's form field. Free
text there is an attack: `x/../<other id>` shows one card and answers another once an HTTP client
removes dot segments, and `x/../../health?` turns a key check into a health check. So an id that
a client supplies is refused at creation unless it fits `ID_RE`, and every client puts an id into
a URL only through `id_path`, which checks it again and percent-encodes it whole.
"""

from __future__ import annotations

import re
import secrets
import string
import uuid
from typing import Any
from urllib.parse import quote

from signoff.kernel.errors import UsageError

_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
# ASCII letters and digits first (so never "." or ".."), then letters, digits and . _ : @ -
# (no "/", "%", "?", "#", "\", space, control or non-ASCII character). Always fullmatch.
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}")
ID_RULE = ("ids are 1-200 characters of A-Z, a-z, 0-9, '.', '_', ':', '@' or '-', starting with a "
           "letter or digit (no '/', '%', '?', '#', spaces or other characters)")


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


def is_id(value: Any) -> bool:
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None


def check_id(kind: str, value: Any) -> str:
    """`value` if it fits the id grammar, else a UsageError naming the rule."""
    if not is_id(value):
        shown = repr(value) if not isinstance(value, str) or len(value) <= 80 else repr(value[:80]) + "..."
        raise UsageError(f"bad {kind} {shown}", ID_RULE)
    return str(value)


def id_path(template: str, **ids: str) -> str:
    """A URL path with each `{name}` of `template` filled by the id `ids[name]`, checked against the
    grammar and percent-encoded whole (so no id can add, remove or climb a path segment, or start a
    query or fragment): `id_path("/agents/{agent_id}/ops/{op}", agent_id=a, op="post_message")`."""
    fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    if fields != set(ids):
        raise ValueError(f"id_path({template!r}) needs exactly {sorted(fields)}, got {sorted(ids)}")
    return template.format(**{name: quote(check_id(name.replace("_", " "), value), safe="")
                              for name, value in ids.items()})
