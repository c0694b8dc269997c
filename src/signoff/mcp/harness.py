"""What a person approves when they approve a frozen repair harness for `verify_fix`.

The card's content is recomputed from the frozen store every time by the repair facade
(`signoff.repair.harness_content`): the harness digest, then each file with its digest, size and
(when it is UTF-8 and the whole fits in a card) its text. An approval counts for `verify_fix` only
when the card binds exactly this text for exactly this digest (`signoff.repair.verify_fix` checks it).
"""

from __future__ import annotations

from signoff.kernel.settings import Settings
from signoff.repair import HARNESS_QUESTION, FrozenHarness, frozen_harness
from signoff.repair import harness_content as _content

QUESTION = HARNESS_QUESTION


def frozen(settings: Settings, digest: str) -> FrozenHarness:
    """A frozen harness from this server's store, re-digested (an altered copy is refused)."""
    return frozen_harness(settings, digest)


def harness_content(settings: Settings, harness: FrozenHarness) -> str:
    """The card's text for a frozen harness."""
    return _content(settings, harness.digest)
