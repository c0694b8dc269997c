"""Claims the grader checks against commits in hand (no git): the classes found on the blind17 sets of
2026-12-07 (libuv's plain-text `ChangeLog`, whose release lines date a named version; fmt's "Thanks @a, @b and
@c" after an item naming several pull requests, some of whose authors' accounts git never states, and one of
whose numbers no commit of the range carries)."""

from __future__ import annotations

from signoff.notes.grade import units_of
from signoff.notes.knowledge import Knowledge

from .test_knowledge_classes import _commit, _dated, _unsupported

LIBUV = ("2026.03.06, Version 1.52.1 (Stable), {hash}\n"
         "\n"
         "Changes since version 1.52.0:\n"
         "\n"
         "* unix: fix discard const (Rudi Heitbaum)\n")


def test_a_line_alone_dating_a_named_version_is_a_release_heading() -> None:
    # libuv 1.50.0-1.52.1 (blind17): the release line was a paragraph, its version a mention any tag supports,
    # so the planted `1.52.8` passed in all four sections
    tip = "1cfa32ff59c076ffb6ed735bbc8c18361558661f"
    section = LIBUV.format(hash=tip)
    assert units_of(section)[0] == (section.splitlines()[0], True)
    tags = [{"name": "v1.52.1", "commit": tip, "date": "2026-03-06T21:29:19+01:00"},
            {"name": "v1.52.8", "commit": "d" * 40, "date": "2026-09-01T10:00:00+00:00"}]
    fix = _dated(_commit(1, "unix: fix discard const (#5041)", author=("Rudi Heitbaum", "rudi@example.org")),
                 "2026-03-01")
    k = Knowledge("v1.52.0..v1.52.1", tip, tags, [fix, {**_dated(_commit(2, "2026.03.06, Version 1.52.1 (Stable)"),
                                                                "2026-03-06"), "hash": tip}])
    assert _unsupported(k, section, "ChangeLog") == set()
    assert _unsupported(k, section.replace("1.52.1", "1.52.8", 1), "ChangeLog") == {"1.52.8"}
    # a sentence of prose naming a version and a date is no heading, nor is a line inside a paragraph
    assert units_of("Version 1.2.3 was released on 2024-01-01 and\nfixed the build.\n") == [
        ("Version 1.2.3 was released on 2024-01-01 and fixed the build.", False)]
    assert not units_of("Some prose.\n2024-01-01, Version 1.2.3 (Stable)\n")[0][1]


ITEM = ("- Made various code improvements (https://github.com/o/fmt/pull/11, https://github.com/o/fmt/pull/12,\n"
        "  https://github.com/o/fmt/pull/13). Thanks @{a}, @{b} and @{c}.\n")


def test_a_handle_among_several_may_be_an_author_whose_account_git_does_not_state() -> None:
    # fmt 12.0.0 (blind17): "Thanks @arBmind, @tkhyn, @Mishura4, @anonymouspc and @autoantwort" over five pull
    # requests, two of them from no-reply addresses: @arBmind (Andreas Reischuck, whose account git never
    # states) was "git says ... (@autoantwort) (@mishura4)"
    k = Knowledge("v1..v2", None, [], [
        _commit(1, "Fix the module build (#11)", author=("Andreas Reischuck", "andreas@example.org")),
        _commit(2, "Use a constexpr (#12)", author=("autoantwort", "41973254+autoantwort@users.noreply.github.com")),
        _commit(3, "Drop a cast (#13)", author=("Miuna", "809642+Mishura4@users.noreply.github.com"))])
    assert _unsupported(k, ITEM.format(a="arBmind", b="autoantwort", c="Mishura4"), "ChangeLog.md") == set()
    # where git states every author's account, a handle none of them is still wrong
    stated = Knowledge("v1..v2", None, [], [
        _commit(1, "Fix the module build (#11)", author=("Andreas R", "7+arBmind@users.noreply.github.com")),
        _commit(2, "Use a constexpr (#12)", author=("autoantwort", "41973254+autoantwort@users.noreply.github.com")),
        _commit(3, "Drop a cast (#13)", author=("Miuna", "809642+Mishura4@users.noreply.github.com"))])
    assert _unsupported(stated, ITEM.format(a="arBmind", b="autoantwort", c="Mishura4"), "ChangeLog.md") == set()
    assert _unsupported(stated, ITEM.format(a="someone", b="autoantwort", c="Mishura4"), "ChangeLog.md") == {
        "@someone"}


def test_a_handle_among_several_may_be_for_the_change_git_does_not_number() -> None:
    # fmt 12.0.0 (blind17): "(#4445, #4448, #4473, #4522). Thanks @localspook, @tchaikov and @way4sahil": no
    # commit of the range names #4473, and Sahil Sinha's "Add double and float support to scan test" names no
    # number; @way4sahil, tied by git to that commit, was "git says Kefu Chai, Victor Chernyakin"
    people = [("Victor Chernyakin", "victor@example.org"), ("Kefu Chai", "kefu@example.org")]
    commits = [_commit(1, "Remove some redundant consts (#11)", author=people[0]),
               _commit(2, "Fix some typos in comments (#12)", author=people[1]),
               _commit(4, "Add double and float support to scan test", author=("Sahil Sinha", "sahil@example.org"))]
    item = ITEM.format(a="localspook", b="tchaikov", c="way4sahil")
    assert _unsupported(Knowledge("v1..v2", None, [], commits), item, "ChangeLog.md") == set()
    # with every number carried, a handle git ties to another change of the range is still wrong
    numbered = [*commits, _commit(3, "Drop a cast (#13)", author=people[0])]
    assert _unsupported(Knowledge("v1..v2", None, [], numbered), item, "ChangeLog.md") == {"@way4sahil"}
