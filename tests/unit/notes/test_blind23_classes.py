"""Claims the grader checks against commits in hand (no git): the classes found on the blind23 set of
2026-12-07 (pint's items citing the issue their own pull request wrote into `CHANGES`)."""

from __future__ import annotations

import json
from pathlib import Path

from signoff.notes.knowledge import Knowledge
from signoff.notes.meaning import read_claims
from signoff.notes.pulls import diff_words

from .test_knowledge_classes import _commit, _unsupported

REAL = Path(__file__).resolve().parents[2] / "data" / "notes-real"


def test_the_blind23_set_is_recorded() -> None:
    sets = {json.loads(p.read_text(encoding="utf-8"))["set"] for p in REAL.glob("*/case.json")}
    assert "blind23" in sets


def test_an_item_its_own_pull_request_wrote_with_its_number_cites_what_the_author_chose() -> None:
    # pint 0.25.3 (blind23): "Defer expensive loading of dask.array (#2265)" was "git says #2276": the squashed
    # pull request #2276 wrote that very line, issue number included, into `CHANGES` (three false alarms)
    k = Knowledge("0.25.1..0.25.3", None, [], [
        _commit(1, "Enh: Defer expensive loading of dask.array (#2276)", paths=("CHANGES", "pint/compat.py"))])
    k.diff_of = lambda commit: diff_words(
        "+++ b/CHANGES\n+- Defer expensive loading of dask.array (#2265)\n"
        "+++ b/pint/compat.py\n+    import dask.array  # deferred until first use\n")
    line = "- Defer expensive loading of dask.array (#{n})\n"
    assert _unsupported(k, line.format(n=2265)) == set()
    assert _unsupported(k, line.format(n=2276)) == set()
    # a number the line it wrote does not say is still contradicted by the commit's own
    assert _unsupported(k, line.format(n=2266)) == {"#2266"}
    # and one a commit wrote without touching the changelog names no entry of its own
    k2 = Knowledge("0.25.1..0.25.3", None, [], [
        _commit(1, "Enh: Defer expensive loading of dask.array (#2276)", paths=("pint/compat.py",))])
    k2.diff_of = lambda commit: diff_words("+++ b/pint/compat.py\n+    # see 2265: import dask.array lazily\n")
    assert _unsupported(k2, line.format(n=2265)) == {"#2265"}


def test_a_bare_number_above_the_issue_a_rebased_commit_fixes_may_be_its_lost_pull_request() -> None:
    # jq 1.7.1 (blind23): "Reject U+001F in string literals. @torsten-schenk @itchyny @wader #2911" was "git says
    # #2909": the maintainer rebased #2911 as "Reject U+001F in string literals (fix #2909)", keeping only the issue
    from .test_blind20_classes import _landed
    item = "- Implicitly registered group routes should be allowed overwritten in default routes. #{n}\n"
    k = _landed(numbered=False)
    assert _unsupported(k, item.format(n=3049)) == set()
    # a number below the issue it fixes is neither that issue nor a pull request opened to fix it
    assert _unsupported(k, item.format(n=3046)) == {"#3046"}
    # a subject's own "(#3036)" is no issue it fixes: a bare number beside it is judged as before
    said = "- feat: add support for HTTP QUERY method #{n}\n"
    assert _unsupported(k, said.format(n=3038)) == {"#3038"}


def test_a_bare_number_beside_the_one_issue_its_commit_says_it_fixes_is_contradicted() -> None:
    # dart_style 3.1.10 (blind23): the planted "Prefer to split call chains for single-element targets (#1733)" was
    # supported: the changelog cites issues, and #1733 is below the pull request #1842, whose message says "Fix #1732"
    k = Knowledge("v3.1.9..v3.1.10", None, [], [
        _commit(1, "Prefer to split call chains for single-element targets. (#1842)", "Fix #1732"),
        _commit(2, "Separate imports into sections. (#1843)", "Fix #1120")])
    section = ("* Separate imports into sections (#1120).\n\n"
               "* Prefer to split call chains for single-element targets (#{n}).\n")
    assert _unsupported(k, section.format(n=1732), "CHANGELOG.md") == set()
    assert _unsupported(k, section.format(n=1842), "CHANGELOG.md") == set()
    assert _unsupported(k, section.format(n=1733), "CHANGELOG.md") == {"#1733"}


def _jq() -> Knowledge:
    itchyny = ("itchyny", "itchyny@example.org")
    return Knowledge("jq-1.8.1..jq-1.8.2", None, [], [
        _commit(1, "Fix use-after-free in args2obj() array argument path (#3498)",
                author=("Scott Seal", "ss@example.org")),
        _commit(2, "Fix syntax error assertion failure (fix #3348) (#3350)", author=itchyny),
        _commit(3, "Refactor @uri and @urid to fix multi-byte UTF-8 corruption (#3495)", author=itchyny),
        _commit(4, "Fix the default colors to use 39, the default foreground color (#2904)",
                author=("taoky", "taoky@example.org"))])


def test_a_handle_signing_an_item_before_its_number_is_a_credit() -> None:
    # jq 1.8.2 (blind23): "Fix use-after-free in `args2obj()` array argument path. @sseal #3498" credits @sseal, but
    # the signature was read as no claim: the planted @itchyny, who made other changes of the release, was missed
    section = ("- Fix use-after-free in `args2obj()` array argument path. {who} #3498\n"
               "- Fix assertion failure when syntax error happens at the end of the query. @itchyny #3350\n"
               "- Refactor @uri and @urid to fix multi-byte UTF-8 corruption. @itchyny #3495\n")
    assert _unsupported(_jq(), section.format(who="@sseal"), "NEWS.md") == set()
    assert _unsupported(_jq(), section.format(who="@itchyny"), "NEWS.md") == {"@itchyny"}
    # a handle in the item's text is no signature, and neither is one before other words
    assert [c.kind for c in read_claims("- Use @property for the getter #12\n")] == ["ref"]


def test_several_handles_signing_an_item_may_have_helped() -> None:
    # jq 1.7.1 (blind23): "... bright backgrounds. @mjarosie @taoky @nicowilliams @itchyny #2904", a change by
    # taoky: those who reviewed or rewrote it sign beside its author, and tie none of them to another change
    section = ("- Make the default background color more suitable. @mjarosie @taoky @nicowilliams @itchyny #2904\n"
               "- Fix assertion failure when syntax error happens at the end of the query. @itchyny #3350\n")
    assert _unsupported(_jq(), section, "NEWS.md") == set()


def test_a_handle_credited_for_a_co_authored_change_is_no_one_else() -> None:
    # jq 1.8.2 (blind23): "@wader" signs Mattias Wadman's "Add wiki link to navigation bar" and itchyny's CVE fix
    # that Mattias Wadman co-authored: each was "the changelog credits @wader for a change by someone else"
    k = Knowledge("jq-1.8.1..jq-1.8.2", None, [], [
        _commit(1, "website: Add wiki link to navigation bar (#3424)", author=("Mattias Wadman", "mw@example.org")),
        _commit(2, "Fix out-of-bounds read in jv_parse_sized() (#3501)",
                "Co-authored-by: Mattias Wadman <mw@example.org>", author=("itchyny", "itchyny@example.org")),
        _commit(3, "Fix memory leak in the fuzzer (#3502)", author=("David K", "dk@example.org"))])
    section = ("- Add wiki link to navigation bar. @wader #3424\n"
               "- Fix out-of-bounds read in `jv_parse_sized()`. @wader #3501\n"
               "- Fix memory leak in the fuzzer. {who} #3502\n")
    assert _unsupported(k, section.format(who="@davidk"), "NEWS.md") == set()
    assert _unsupported(k, section.format(who="@wader"), "NEWS.md") == {"@wader"}
    # a signature on an item whose number no commit carries is judged by no commit its words restate
    assert "@wader" not in _unsupported(k, section.format(who="@wader").replace("#3502", "#3970"), "NEWS.md")
