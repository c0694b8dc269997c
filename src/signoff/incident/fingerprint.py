"""Salted fingerprints of raw JSON bytes.

A fingerprint says, for one event, how long the bytes were and, for every leaf, where it was, how
long, whether it held non-ASCII bytes or \\u escapes, and HMAC-SHA256(salt, raw slice). No value and
no unsalted hash of a value is in it: hashes compare only under the same incident's salt. Keys that
are not identifiers (they might be data, such as a map keyed by name) appear salted too.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from typing import Any

from signoff.incident.wirecheck import render_path, scan
from signoff.kernel.errors import UsageError

FINGERPRINT_VERSION = "signoff.incident.fingerprint/v1"
BOM = b"\xef\xbb\xbf"


def salted(salt: bytes, data: bytes) -> str:
    return hmac.new(salt, data, hashlib.sha256).hexdigest()


def salt_id(salt: bytes) -> str:
    """A short public name for a salt, so two fingerprints can show they share one."""
    return hashlib.sha256(b"signoff-incident-salt:" + salt).hexdigest()[:16]


def fingerprint(event_id: str, raw: bytes, salt: bytes, incident: str) -> dict[str, Any]:
    if len(salt) < 16:
        raise UsageError("salt is shorter than 16 bytes", "use the salt the notary issued for the incident")
    # A UTF-8 byte order mark is no JSON (RFC 8259), but some senders write one: it is measured as
    # bytes before the document (in the total and the digest), and the document after it is scanned.
    start = len(BOM) if raw.startswith(BOM) else 0
    leaves = [replace(leaf, offset=leaf.offset + start) for leaf in scan(raw[start:])]

    def key_label(key: str) -> str:
        return "#" + salted(salt, key.encode("utf-8"))[:16]

    fields = []
    for leaf in leaves:
        row: dict[str, Any] = {
            "path": render_path(leaf.parts, key_label),
            "offset": leaf.offset,
            "length": leaf.length,
            "type": leaf.type,
            "hash": salted(salt, raw[leaf.offset:leaf.offset + leaf.length]),
            "non_ascii": leaf.non_ascii,
            "escaped": leaf.escaped,
        }
        if leaf.duplicate:
            row["duplicate"] = True
        fields.append(row)
    return {
        "version": FINGERPRINT_VERSION,
        "event_id": event_id,
        "incident": incident,
        "salt_id": salt_id(salt),
        "total_bytes": len(raw),
        "digest": salted(salt, raw),
        "fields": fields,
        "duplicates": sorted({f["path"] for f in fields if f.get("duplicate")}),
    } | ({"bom": True} if start else {})
