"""Canonical JSON (RFC 8785, JCS): the one byte form that is signed, digested and compared."""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

from signoff.kernel.errors import UsageError


def canonical_bytes(value: Any) -> bytes:
    """Serialise `value` as RFC 8785 canonical JSON.

    Floats that are not finite and integers beyond the I-JSON range cannot be represented
    canonically; they are refused rather than silently rounded.
    """
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
