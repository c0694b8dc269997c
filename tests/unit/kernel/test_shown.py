"""The digest of what a face showed, and the refusal of a decision that names anything else."""

from __future__ import annotations

import pytest

from signoff.kernel.errors import ConflictError, UsageError
from signoff.kernel.shown import check_shown, names, short, shown_digest

SHOWN = [{"id": "S2", "text": "The parser moved to its own module.", "facts": ["F3"]}]


def test_the_digest_or_its_first_twelve_digits_names_what_was_shown() -> None:
    digest = shown_digest(SHOWN)
    check_shown(digest, SHOWN, "sentence S2", "reload")
    check_shown(short(digest), SHOWN, "sentence S2", "reload")
    check_shown(digest.upper(), SHOWN, "sentence S2", "reload")
    assert names(short(digest), digest) and not names(digest[:11], digest) and not names("", digest)


@pytest.mark.parametrize("changed", [
    [{**SHOWN[0], "text": "The parser moved to its own module!"}],  # one character
    [{**SHOWN[0], "facts": ["F4"]}],  # the same words citing another fact
    [*SHOWN, {"id": "S3", "text": "x", "facts": []}],  # one more sentence in the set
    [],
])
def test_anything_else_is_refused_with_a_fix(changed: list[dict[str, object]]) -> None:
    with pytest.raises(ConflictError, match="changed since it was shown") as refused:
        check_shown(shown_digest(SHOWN), changed, "sentence S2", "reload and review")
    assert refused.value.fix == "reload and review"


@pytest.mark.parametrize("given", [None, "", "   ", "#", "xyz" * 5, "0" * 11, "0" * 65, "a b c d e f g h i j k l"])
def test_a_decision_that_names_no_digest_is_bad_input(given: str | None) -> None:
    with pytest.raises(UsageError):
        check_shown(given, SHOWN, "sentence S2", "reload")
