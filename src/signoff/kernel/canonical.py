"""Canonical JSON (RFC 8785, JCS): the one byte form that is signed, digested and compared."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

from signoff.kernel.errors import UsageError

_INT_LIMIT = 2**53 - 1  # I-JSON: integers an IEEE double holds exactly


def _plain(value: Any) -> bool:
    """True when the standard library writes `value` byte for byte as RFC 8785 does: only exact
    dicts, lists, strings, booleans, None and integers within +-(2**53 - 1), and every key an ASCII
    string. Floats differ in their notation, non-string keys would be converted instead of refused,
    and keys outside ASCII may sort differently (RFC 8785 sorts by UTF-16 code units). String
    escapes are the same in both: the two short forms and `\\u00xx` for control characters, `"`
    and backslash, nothing else."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_INT_LIMIT <= value <= _INT_LIMIT)
    if kind is dict:
        return all(type(k) is str and k.isascii() and _plain(v) for k, v in value.items())
    if kind is list:
        return all(_plain(v) for v in value)
    return False


def canonical_bytes(value: Any) -> bytes:
    """Serialise `value` as RFC 8785 canonical JSON.

    Floats that are not finite and integers beyond the I-JSON range cannot be represented
    canonically; they are refused rather than silently rounded. Plain values (`_plain`) go through
    the standard library's C encoder, about three times faster than `rfc8785` (the ledger hashes
    every event's payload); anything else, and any string that is not valid Unicode, goes through
    `rfc8785`, which decides what is refused.
    """
    try:
        if _plain(value):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
    except (RecursionError, UnicodeEncodeError):
        pass  # too deep to check here, or a lone surrogate: rfc8785 answers as it always has
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise UsageError(
            f"value cannot be written as canonical JSON: {exc}",
            "use only JSON types: str, finite numbers within +-2**53, bool, None, lists and str-keyed dicts",
        ) from exc


def canonical_text(value: Any) -> str:
    return canonical_bytes(value).decode("utf-8")


def canonical_digest(value: Any) -> str:
    """SHA-256 hex of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
