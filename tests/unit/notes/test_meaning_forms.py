"""Changelog forms the grader reads (found on the blind set of 2026-12-06: agronholm/anyio's bold
version headings, Delgan/loguru's reStructuredText hyperlink references)."""

from __future__ import annotations

from signoff.notes.grade import units_of
from signoff.notes.meaning import read_claims


def test_a_bold_version_alone_on_its_line_is_a_release_heading() -> None:
    assert units_of("**4.14.2**\n\n- Fixed a hang (#12)\n") == [("**4.14.2**", True), ("Fixed a hang (#12)", False)]
    assert units_of("**Note** this is 4.14.2 territory\n")[0][1] is False  # bold words in a paragraph



def test_restructuredtext_link_targets_are_lines_of_their_own_not_an_item() -> None:
    # python-semantic-release 9.21.2 (blind10): a block of targets with no blank line between them was
    # read as one item citing #1426 and #1450 in words that describe no change.
    section = ("* **fix**: mask credentials (`PR#1450`_, `128f06a`_)\n\n"
               ".. _#1426: https://github.com/o/r/issues/1426\n"
               ".. _128f06a: https://github.com/o/r/commit/128f06a\n"
               ".. _`#12`: https://github.com/o/r/pull/12\n")
    assert units_of(section) == [("**fix**: mask credentials (`PR#1450`_, `128f06a`_)", False),
                                 (".. _#1426: https://github.com/o/r/issues/1426", True),
                                 (".. _128f06a: https://github.com/o/r/commit/128f06a", True),
                                 (".. _`#12`: https://github.com/o/r/pull/12", True)]
    assert units_of(".. note:: this release drops Python 3.8\n") == [
        (".. note:: this release drops Python 3.8", False)]  # a directive is no target

def test_a_restructuredtext_hyperlink_reference_is_text_not_code() -> None:
    heading = [(c.kind, c.value, c.role) for c in read_claims("`0.7.3`_ (2024-12-06)", release=True)]
    assert heading == [("version", "0.7.3", "release"), ("date", "2024-12-06", "release")]
    item = read_claims("Fix a leak (`#1184 <https://github.com/Delgan/loguru/issues/1184>`_).")
    assert {(c.kind, c.value) for c in item} == {("ref", "1184")}
    assert read_claims("Use ``foo 1.2.3`` or `bar 2.3.4` there.") == []  # code spans stay code


def test_a_number_written_as_a_link_to_an_issue_is_an_issue_reference() -> None:
    # agronholm/anyio 4.14.0: "(`#1067 <https://github.com/agronholm/anyio/issues/1067>`_)" beside a
    # commit "(#1119)": an issue fixed by that pull request, not a wrong pull request number.
    for text in ("Added local_port (`#1067 <https://github.com/o/r/issues/1067>`_).",
                 "Added local_port ([#1067](https://github.com/o/r/issues/1067)).",
                 "Added local_port ([#1067](https://github.com/o/r/issues/1067), #1119)."):
        roles = {(c.token, c.role) for c in read_claims(text) if c.value == "1067"}
        assert roles == {("#1067", "issue"), ("/issues/1067", "issue")}, text
    assert [c.role for c in read_claims("Added local_port (#1067).")] == ["any"]
