"""`render --pr-url/--commit-url`: the reference a writer's line ends with becomes a link."""

from __future__ import annotations

from signoff.notes.render import link_reference

COMMIT = {"kind": "commit", "hash": "d90af45f18db093396b41196830b04e6930aa542"}
PR, HASH = "https://github.com/o/r/pull/{number}", "https://github.com/o/r/commit/{hash}"


def test_the_closing_pull_request_and_hash_are_linked() -> None:
    assert link_reference("Fix a crash (#2461).", [COMMIT], HASH, PR) == \
        "Fix a crash ([#2461](https://github.com/o/r/pull/2461))."
    assert link_reference("Yargs is now ESM first (d90af45f18).", [COMMIT], HASH, PR) == \
        f"Yargs is now ESM first ([d90af45f18](https://github.com/o/r/commit/{COMMIT['hash']}))."


def test_only_the_closing_reference_of_a_cited_commit_is_linked() -> None:
    assert link_reference("Fix #12 in the parser.", [COMMIT], HASH, PR) == "Fix #12 in the parser."
    assert link_reference("Revert (abcdef1234).", [COMMIT], HASH, PR) == "Revert (abcdef1234)."  # not cited
    assert link_reference("Fix a crash (#2461).", [COMMIT], HASH, None) == "Fix a crash (#2461)."
