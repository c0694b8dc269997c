"""What a person approves when they approve a frozen repair harness for `verify_fix`.

The card's content is recomputed from the frozen store every time: the harness digest, then each
file with its digest, size and (when it is UTF-8 and the whole fits in a card) its text. An approval
counts for `verify_fix` only when the card binds exactly this text for exactly this digest.
"""

from __future__ import annotations

from signoff.kernel.settings import Settings
from signoff.repair.harness import FrozenHarness, load, shown_files
from signoff.repair.verifier import harness_store
from signoff.rooms.bound import MAX_CONTENT

QUESTION = "Approve this frozen repair harness as the definition of fixed?"


def frozen(settings: Settings, digest: str) -> FrozenHarness:
    """A frozen harness from this server's store, re-digested (an altered copy is refused)."""
    from signoff.kernel.errors import UsageError

    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise UsageError(f"bad harness id {digest!r}", "pass the 64-hex digest `signoff repair freeze DIR` printed")
    return load(harness_store(settings), digest)


def harness_content(settings: Settings, harness: FrozenHarness) -> str:
    """The card's text: the files as `repair.harness.shown_files` reads them (each file's bytes
    checked against the digest they are shown under), the way every face shows a harness."""
    files = shown_files(harness_store(settings), harness.digest)
    head = [f"signoff repair harness sha256:{harness.digest}", f"{len(files)} files"]
    headers = [f"--- {f.path} (sha256:{f.sha256}, {f.size} bytes)" for f in files]
    bodies = [f.text if f.text is not None else "(not UTF-8 text, or too long; compare the digest)" for f in files]
    full = "\n".join(head + [part for pair in zip(headers, bodies, strict=True) for part in pair])
    if len(full.encode("utf-8")) <= MAX_CONTENT:
        return full
    return "\n".join([*head, "(too large to show in a card: compare each file's digest)", *headers])
