"""The kinds of rooms bearer token; minting, digests and comparison are trust.credentials'."""

from __future__ import annotations

from signoff.trust import credentials

PREFIXES = {"user": "sou", "agent": "soa", "registration": "sor"}
digest = credentials.digest
same_digest = credentials.matches


def mint(kind: str) -> str:
    return credentials.mint(PREFIXES[kind])
