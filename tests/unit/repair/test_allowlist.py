"""Repair's allowlist is read with git's semantics: `*` never crosses `/`, so an allowed glob
cannot widen to a folder below it."""

from __future__ import annotations

import pytest

from signoff.git import Change
from signoff.repair import paths


@pytest.mark.parametrize(("changed", "allow", "refused"), [
    ("src/payments/charge.py", ["src/*.py"], True),  # fnmatch's `*` crossed `/`: this was allowed
    ("src/cart.py", ["src/*.py"], False),
    ("lib/cart.py", ["cart.py"], False),  # a bare name matches that file anywhere
    ("lib/deep/cart.py", ["lib/**"], False),
    ("docs/x/y.md", ["docs/*"], True),  # a trailing /* is the folder's own files only
])
def test_the_allowlist_never_widens_across_a_slash(changed: str, allow: list[str], refused: bool) -> None:
    assert paths.disallowed([Change("M", changed)], allow) == ([changed] if refused else [])
