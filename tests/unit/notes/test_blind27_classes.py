"""Claims the grader checks against commits in hand (no git): the classes found on the blind27 set of
2026-12-08 (bytes, cJSON, req, coil, postcss, Kingfisher)."""

from __future__ import annotations

import json
from pathlib import Path

from signoff.notes.knowledge import Knowledge
from signoff.notes.meaning import read_claims

from .test_knowledge_classes import _commit, _unsupported

REAL = Path(__file__).resolve().parents[2] / "data" / "notes-real"


def test_the_blind27_set_is_recorded() -> None:
    sets = {json.loads(p.read_text(encoding="utf-8"))["set"] for p in REAL.glob("*/case.json")}
    assert "blind27" in sets


KINGFISHER = ("* Add an opt-in `asyncCacheTypeCheck` option that moves the cache probe off the caller thread."
              " [#2521](https://github.com/onevcat/Kingfisher/pull/2521) {handle}\n")


def test_a_handle_signing_an_item_after_its_references_is_its_author() -> None:
    # Kingfisher 8.9.0 (blind27): "... scrolls through many cached images. [#2521](.../pull/2521) @onevcat", the
    # handle after the item's references at the line's end, was read as no credit: a planted @FaizanDurrani missed
    item = KINGFISHER.format(handle="@onevcat")
    assert [c.token for c in read_claims(item) if c.kind == "author"] == ["@onevcat"]
    k = Knowledge("8.8.1..8.9.0", None, [], [_commit(
        1, "Merge pull request #2521 from onevcat/feat/async-cache-type-check", "Add asyncCacheTypeCheck option",
        author=("onevcat", "onevcat@gmail.com"), parents=(2, 3))])
    assert _unsupported(k, item) == set()
    assert _unsupported(k, KINGFISHER.format(handle="@FaizanDurrani")) == {"@FaizanDurrani"}
    # a handle in prose after a reference is no signature ("see #12 @property" is not at the item's end)
    assert [c.token for c in read_claims("* Fixed a crash. #12 @property is read lazily now.\n")
            if c.kind == "author"] == []


def test_a_number_an_item_says_it_fixes_is_no_pull_request_a_rebase_lost() -> None:
    # cJSON 1.7.19 (blind27, a planted number missed): "Fix #882, check overlap before calling strcpy ..." for a
    # contributor's commit a maintainer rebased, "fix #881, check overlap before calling strcpy in
    # cJSON_SetValuestring", was "pull request landed by a maintainer's rebase, its number lost"
    alan, nicolas = ("Alan Wang", "alan@example.org"), ("Nicolas Badoux", "nicolas@example.org")
    k = Knowledge("v1.7.18..v1.7.19", None, [], [
        _commit(1, "fix #881, check overlap before calling strcpy in cJSON_SetValuestring", author=nicolas,
                committer=alan),
        _commit(2, "Check for NULL in cJSON_DetachItemViaPointer", author=nicolas, committer=alan),
        _commit(3, "Added max recursion depth for cJSONDuplicate", author=nicolas, committer=alan),
        _commit(4, "Fix spelling errors found by CodeSpell", author=("Shaun Case", "shaun@example.org"),
                committer=alan)])
    item = "* Fix #{n}, check overlap before calling strcpy in cJSON_SetValuestring, see #885\n"
    assert _unsupported(k, item.format(n=881)) == set()
    assert _unsupported(k, item.format(n=882)) == {"#882"}


def test_see_before_an_item_s_reference_is_no_word_of_its_change() -> None:
    # cJSON 1.7.16 (blind27, a false alarm): "Fix conflicting target names 'uninstall', see #617" for "fix: for
    # issue #569, now use the guard to turn it off (#617)", whose diff holds `target` and `uninstall`: with `see`
    # counted, the diff held 2 of the item's 5 words, short of half, and #617 was "git says #617 is '...'"
    k = Knowledge("v1.7.15..v1.7.16", None, [], [
        _commit(1, "fix: for issue #569, now use the guard to turn it off (#617)", paths=("CMakeLists.txt",))])
    diff = set("add_custom_target cmake_command command creat custom enable_cjson_uninstall endif option project "
               "project_source_dir sourc target uninstall".split())
    k.diff_of = lambda commit: diff
    assert _unsupported(k, "* Fix conflicting target names 'uninstall', see #617\n") == set()
    assert _unsupported(k, "* Add a retry option that keeps failed uploads in a local queue, see #617\n") == {"#617"}
