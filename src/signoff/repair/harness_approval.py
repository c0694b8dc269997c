"""A verification an agent asks for runs only on a frozen harness a person approved, as shown.

The rule every face applies through `verify_fix` (the MCP tool of that name, `signoff repair
verify-fix`): the person's approval card must bind exactly `harness_content` of the frozen
harness, recomputed here from this machine's harness store, and the person must have approved it.
A card for other content, one nobody answered, one declined or expired, or one answered by
someone not listed approves nothing; then nothing runs.

The card's content: the harness digest, then each file with its digest, size and (when it is UTF-8
and the whole fits in a card) its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.repair.harness import FrozenHarness, load, shown_files
from signoff.repair.verifier import VerifyRequest, VerifyResult, harness_store, verify

QUESTION = "Approve this frozen repair harness as the definition of fixed?"
# The most content one approval card shows (signoff.gate.binding.MAX_CONTENT, which this layer
# cannot import; a test keeps the two equal). A larger harness is shown by its files' digests.
CARD_CONTENT_LIMIT = 60 * 1024
_DIGEST = re.compile(r"[0-9a-f]{64}")


def frozen(settings: Settings, digest: str) -> FrozenHarness:
    """A frozen harness from this machine's store, re-digested (an altered copy is refused)."""
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
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
    if len(full.encode("utf-8")) <= CARD_CONTENT_LIMIT:
        return full
    return "\n".join([*head, "(too large to show in a card: compare each file's digest)", *headers])


class Approval(Protocol):
    """A person's answer to an approval card, as the rooms server recorded it (signoff.gate's
    `Decision`): its state, the digest of the content the card binds, who answered, and why not."""

    @property
    def state(self) -> str: ...

    @property
    def content_digest(self) -> str | None: ...

    @property
    def reason(self) -> str: ...


def require_approved_harness(settings: Settings, harness: str, approval_id: str, approval: Approval) -> None:
    """RefusedError unless `approval` approves exactly this frozen harness's card content."""
    content = harness_content(settings, frozen(settings, harness))
    if approval.state == "approved" and approval.content_digest == sha256_bytes(content.encode("utf-8")):
        return
    why = approval.reason if approval.state != "approved" else "the card was for other content"
    raise RefusedError(f"harness {harness[:12]} is not approved by {approval_id!r}: {why or approval.state}",
                       "call request_harness_approval for this harness and wait until a person approves it")


@dataclass(frozen=True)
class FixCheck:
    """What an agent asks `verify_fix` to judge: a candidate against a frozen harness, by its digest."""

    repo: Path
    base: str
    candidate: str
    harness: str  # the frozen harness's digest
    expect: str
    regression: list[str] = field(default_factory=list)
    runner: str = "pytest"
    pythonpath: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    timeout: float = 120.0


def verify_fix(settings: Settings, check: FixCheck, approval_id: str, approval: Approval) -> VerifyResult:
    """The verifier's judgement of `check`, run only when `approval` approves its harness as shown."""
    require_approved_harness(settings, check.harness, approval_id, approval)
    req = VerifyRequest(repo=check.repo, base=check.base, candidate=check.candidate, harness=None,
                        expect=check.expect, regression=list(check.regression), allow=list(check.allow),
                        pythonpath=list(check.pythonpath), runner=check.runner, timeout=check.timeout,
                        approved_digest=check.harness, frozen_digest=check.harness)
    return verify(req, settings)
