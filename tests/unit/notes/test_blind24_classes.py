"""Claims the grader checks against commits in hand (no git): the classes found on the blind24 set of
2026-12-07 (FluentValidation's plain-text `Changelog.txt`, griffe's git-changelog sections, commonmark's and
faker's items)."""

from __future__ import annotations

import json
from pathlib import Path

from signoff.notes.knowledge import Knowledge

from .test_knowledge_classes import _commit, _hash, _unsupported

REAL = Path(__file__).resolve().parents[2] / "data" / "notes-real"


def test_the_blind24_set_is_recorded() -> None:
    sets = {json.loads(p.read_text(encoding="utf-8"))["set"] for p in REAL.glob("*/case.json")}
    assert "blind24" in sets


def _fluent(prepared: str = "2025-05-04T18:30:58+01:00") -> Knowledge:
    tags = [{"name": "11.11.0", "commit": "d" * 40, "date": "2024-11-16T19:45:21+00:00"},
            {"name": "12.0.0", "commit": _hash(1), "date": "2025-05-04T18:31:20+01:00"}]
    old = _commit(3, "12.0 upgrade guide and other minor docs tweaks")
    old["author"]["date"] = old["committer"]["date"] = "2022-11-23T11:24:56+00:00"
    release = _commit(1, "Prepare for 12.0 release")
    release["author"]["date"] = release["committer"]["date"] = prepared
    return Knowledge("11.11.0..12.0.0", _hash(1), tags, [
        release, _commit(2, "Add support for dependent rules for custom rules (#2170)"),
        _commit(4, "Removes deprecated transform methods (#2027)"), old])


def test_a_plain_text_changelog_of_one_change_a_line_under_a_dashed_date() -> None:
    # FluentValidation 12.0.0 (blind24): `12.0.0 - 5 May 2025` over lines with no list marker was one paragraph: the
    # planted `12.0.7` in it was a version mentioned, and `(#2171)` for #2170 an item naming three numbers
    section = ("{v} - 5 May 2025\n"
               "Add support for dependent rules for custom rules (#{n})\n"
               "Removes deprecated DI extensions\n"
               "Removes deprecated transform methods (#2027)\n")
    k = _fluent()
    assert _unsupported(k, section.format(v="12.0.0", n=2170), "Changelog.txt") == set()
    assert _unsupported(k, section.format(v="12.0.7", n=2170), "Changelog.txt") == {"12.0.7"}
    assert _unsupported(k, section.format(v="12.0.0", n=2171), "Changelog.txt") == {"#2171"}
    # wrapped prose is no list of changes: its lines do not end with their numbers
    prose = ("{v} - 5 May 2025\n"
             "Drops support for netstandard2.0 and .net 7; the minimum\n"
             "supported platform is now .net 8.\n")
    assert _unsupported(k, prose.format(v="12.0.7"), "Changelog.txt") == {"12.0.7"}


def test_a_commit_naming_the_version_before_the_range_began_prepared_no_release() -> None:
    # FluentValidation 12.0.0 (blind24): dated the day after its tag, as uploads are, but "12.0 upgrade guide ..."
    # of 2022, written beside the 11.x releases, was taken for the day the release was prepared: no day but the
    # tag's was allowed
    k = _fluent()
    assert _unsupported(k, "12.0.0 - 5 May 2025\n", "Changelog.txt") == set()
    assert _unsupported(k, "12.0.0 - 8 May 2025\n", "Changelog.txt") == {"8 May 2025"}
    # a release prepared days before its tag, within the range, is still dated that day or the tag's only
    early = _fluent(prepared="2025-05-01T10:00:00+01:00")
    assert _unsupported(early, "12.0.0 - 1 May 2025\n", "Changelog.txt") == set()
    assert _unsupported(early, "12.0.0 - 5 May 2025\n", "Changelog.txt") == {"5 May 2025"}


def test_git_changelog_items_name_their_commit_and_pull_request() -> None:
    # griffe 2.2.0 and 2.1.0 (blind24): `[PR-480](.../pull/480)` was an external ticket id and a `/pull/` link no
    # commit carries, though the item names its commit by hash and that commit's last line says "PR-479: ..."
    k = Knowledge("2.1.0..2.2.0", None, [], [
        _commit(1, "feat: Support `await` expressions", "PR-479: https://github.com/mkdocstrings/griffe/pull/479"),
        _commit(2, "fix: Make stringified expressions valid and faithful Python",
                "PR-478: https://github.com/mkdocstrings/griffe/pull/478")])
    item = ("- Support `await` expressions ([{h}](https://github.com/mkdocstrings/griffe/commit/{h}) by Vincent Gao). "
            "[PR-{n}](https://github.com/mkdocstrings/griffe/pull/{n})\n")
    assert _unsupported(k, item.format(h=_hash(1)[:7], n=479), "CHANGELOG.md") == set()
    assert _unsupported(k, item.format(h=_hash(1)[:7], n=480), "CHANGELOG.md") == {"PR-480", "/pull/480"}


def test_a_fix_naming_the_release_its_bug_came_from_is_no_release_commit() -> None:
    # commonmark 2.9.2 (blind24): "Fix 2.9.0 regression: restore Cursor::match() remainder semantics (#1146)" wrote
    # the item, "(#1145)" and all, into CHANGELOG.md, but naming a version it was taken for a release's commit,
    # which writes every item: "git says #1146"
    from signoff.notes.pulls import diff_words
    tags = [{"name": "2.9.0", "commit": "e" * 40, "date": "2026-08-03T10:00:00+00:00"},
            {"name": "2.9.1", "commit": "d" * 40, "date": "2026-08-09T10:00:00+00:00"}]
    k = Knowledge("2.9.1..2.9.2", None, tags, [
        _commit(1, "Fix 2.9.0 regression: restore Cursor::match() remainder semantics (#1146)",
                paths=("CHANGELOG.md", "src/Parser/Cursor.php"))])
    k.diff_of = lambda commit: diff_words(
        "+++ b/CHANGELOG.md\n+- Fixed a regression introduced in 2.9.0 where `Cursor::match()` treated text before "
        "the cursor as part of the match subject (#1145). `match()` once again matches against the remainder, its "
        "semantics restored\n+++ b/src/Parser/Cursor.php\n+    return $this->match();\n")
    item = ("- Fixed a regression introduced in 2.9.0 where `Cursor::match()` treated text before the cursor as part "
            "of the match subject (#{n}). `match()` once again matches against the remainder, its semantics restored\n")
    assert _unsupported(k, item.format(n=1145), "CHANGELOG.md") == set()
    assert _unsupported(k, item.format(n=1147), "CHANGELOG.md") == {"#1147"}


def test_code_an_item_names_is_not_in_a_diff_of_one_line_of_data() -> None:
    # faker 3.7.1 (blind24): the invented "Add a `retry_forever` option ... (#3238)" was supported: #3238's diff is
    # one line of `book.yml` (two words), too few for the diff to decide anything, though it holds no part of the code
    from signoff.notes.pulls import diff_words
    k = Knowledge("v3.6.1..v3.7.1", None, [], [
        _commit(1, "Remove duplicate 'Recalled to Life' book title (#3238)",
                "The title has appeared twice in the book title list since #484, when the list was replaced with "
                "titles sourced from Wikipedia.", paths=("lib/locales/en/book.yml",)),
        _commit(2, "Added additional football teams (#3231)", paths=("lib/locales/en/football.yml",))])
    k.diff_of = lambda commit: diff_words("+++ b/lib/locales/en/book.yml\n-      - Recalled to Life\n")
    assert _unsupported(k, "- Remove duplicate 'Recalled to Life' book title (#3238).\n", "CHANGELOG.md") == set()
    invented = "- Add a `retry_forever` option that keeps every failed upload in a local queue (#3238).\n"
    assert _unsupported(k, invented, "CHANGELOG.md") == {"#3238"}


def test_the_writer_cites_the_pull_request_a_rebased_commit_states_on_its_last_line() -> None:
    # griffe (blind24): the writer listed 0 of the 13 pull request references of its newest sections: its pull
    # requests are rebased, each commit's number only on its last line, "PR-479: https://.../pull/479"
    from signoff.notes.changes import changelog_lines
    from signoff.notes.facts import commit_fact
    commits = [commit_fact(_commit(i, f"feat: Support `{word}` expressions",
                                   f"PR-{n}: https://github.com/mkdocstrings/griffe/pull/{n}"))
               for i, (word, n) in enumerate((("await", 479), ("yield", 478), ("lambda", 477)), 1)]
    assert [f["pr"] for f in commits] == ["479", "478", "477"]
    texts = [line.text for line in changelog_lines(commits)]
    assert texts[0] == "Support `await` expressions (#479)."
    # a trailer naming another pull request than its number's link states none
    assert commit_fact(_commit(9, "fix: x", "PR-12: https://github.com/o/r/pull/13"))["pr"] is None
