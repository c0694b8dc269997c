"""What a person approves when they approve a frozen repair harness for `verify_fix`.

The card's content is recomputed from the frozen store every time: the harness digest, then each
file with its digest, size and (when it is UTF-8 and the whole fits in a card) its text. An approval
counts for `verify_fix` only when the card binds exactly this text for exactly this digest.
"""

from __future__ import annotations

from signoff.gate.binding import MAX_CONTENT
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.settings import Settings
from signoff.repair.harness import FrozenHarness, load
from signoff.repair.verifier import harness_store

QUESTION = "Approve this frozen repair harness as the definition of fixed?"


def frozen(settings: Settings, digest: str) -> FrozenHarness:
    """A frozen harness from this server's store, re-digested (an altered copy is refused)."""
    from signoff.kernel.errors import UsageError

    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise UsageError(f"bad harness id {digest!r}", "pass the 64-hex digest `signoff repair freeze DIR` printed")
    return load(harness_store(settings), digest)


def harness_content(harness: FrozenHarness) -> str:
    head = [f"signoff repair harness sha256:{harness.digest}", f"{len(harness.files)} files"]
    headers: list[str] = []
    bodies: list[str] = []
    for rel in harness.files:
        data = (harness.path / rel).read_bytes()
        headers.append(f"--- {rel} (sha256:{sha256_bytes(data)}, {len(data)} bytes)")
        try:
            bodies.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            bodies.append("(not UTF-8 text; compare the digest)")
    full = "\n".join(head + [part for pair in zip(headers, bodies, strict=True) for part in pair])
    if len(full.encode("utf-8")) <= MAX_CONTENT:
        return full
    return "\n".join([*head, "(too large to show in a card: compare each file's digest)", *headers])
