"""Bearer tokens: generated once, shown once, stored only as SHA-256 digests."""

from __future__ import annotations

import hashlib
import hmac

from signoff.kernel.ids import new_token

PREFIXES = {"user": "sou_", "agent": "soa_", "registration": "sor_"}


def mint(kind: str) -> str:
    return PREFIXES[kind] + new_token(32)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_digest(stored: str, token: str) -> bool:
    """Constant-time comparison of a stored digest with a presented token's digest."""
    return hmac.compare_digest(stored.encode(), digest(token).encode())
