"""HMAC-SHA256 over exactly the bytes that are sent."""

from __future__ import annotations

import hashlib
import hmac


def sign(secret: str, signed: bytes) -> str:
    digest = hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()
    return digest
