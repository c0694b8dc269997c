"""Pure helpers with no I/O beyond reading files to digest them: canonical JSON, digests, ids, clock,
errors, settings."""

from signoff.kernel.canonical import canonical_bytes, canonical_digest, canonical_text
from signoff.kernel.clock import Clock, FixedClock, SystemClock, utc_iso
from signoff.kernel.digests import sha256_bytes, sha256_file, tree_digest, tree_manifest
from signoff.kernel.errors import (
    ConflictError,
    IntegrityError,
    NotFoundError,
    RefusedError,
    SignoffError,
    UnavailableError,
    UsageError,
)
from signoff.kernel.ids import new_id, new_token, readable_id
from signoff.kernel.settings import Settings

__all__ = [
    "Clock",
    "ConflictError",
    "FixedClock",
    "IntegrityError",
    "NotFoundError",
    "RefusedError",
    "Settings",
    "SignoffError",
    "SystemClock",
    "UnavailableError",
    "UsageError",
    "canonical_bytes",
    "canonical_digest",
    "canonical_text",
    "new_id",
    "new_token",
    "readable_id",
    "sha256_bytes",
    "sha256_file",
    "tree_digest",
    "tree_manifest",
    "utc_iso",
]
