"""Claims the grader checks against commits in hand (no git): the classes found on the blind26 set of
2026-12-08 (icalendar, transitions, devise, PHPMailer, javaparser, mojo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from signoff.notes.knowledge import Knowledge
from signoff.notes.pulls import diff_words
from signoff.notes.told import told_words

from .test_knowledge_classes import _commit, _hash, _unsupported

REAL = Path(__file__).resolve().parents[2] / "data" / "notes-real"


def _dated(commit: dict[str, Any], day: str) -> dict[str, Any]:
    for who in ("author", "committer"):
        commit[who]["date"] = f"{day}T10:00:00+01:00"
    return commit


def test_the_blind26_set_is_recorded() -> None:
    sets = {json.loads(p.read_text(encoding="utf-8"))["set"] for p in REAL.glob("*/case.json")}
    assert "blind26" in sets


def test_a_line_of_a_version_and_its_iso_date_is_the_release_heading() -> None:
    # mojo (blind26): a Perl `Changes` file's "9.47  2026-07-05" over its items was read as prose, where any
    # version is a mention and a date no release's: the four planted versions and dates were not checkable
    k = Knowledge("v9.46..v9.47", None, [{"name": "v9.47", "commit": _hash(1), "date": "2026-07-05T13:00:00+00:00"}],
                  [_dated(_commit(1, "Added query method to Mojolicious::Lite"), "2026-07-05")])
    section = "9.{n}  2026-07-{d}\n  - Added query method to Mojolicious::Lite.\n"
    assert _unsupported(k, section.format(n=47, d="05")) == set()
    assert _unsupported(k, section.format(n=54, d="05")) == {"9.54"}
    assert _unsupported(k, section.format(n=47, d="08")) == {"2026-07-08"}
    # a sentence naming a version and a date is no heading
    assert _unsupported(k, "Since 9.54 2026-07-08 was planned, nothing changed.\n") == set()


def _devise() -> Knowledge:
    first = _commit(2, "Allow model config to override `sign_in_after_change_password` (#5825)",
                    paths=("CHANGELOG.md", "app/controllers/devise/registrations_controller.rb"))
    second = _commit(1, "Add `sign_in_after_reset_password?` check hook to passwords controller (#5826)",
                     paths=("CHANGELOG.md", "app/controllers/devise/passwords_controller.rb"))
    k = Knowledge("v5.0.1..v5.0.2", None, [], [second, first])
    line = ("  * Allow resource class scopes to override the global configuration for "
            "`sign_in_after_change_password` behaviour. [#{n}](https://github.com/heartcombo/devise/pull/{n})")
    hook = ("  * Add `sign_in_after_reset_password?` check hook to passwords controller, to allow it to be "
            "customized by users. [#5826](https://github.com/heartcombo/devise/pull/5826)")
    head = "diff --git a/CHANGELOG.md b/CHANGELOG.md\n+++ b/CHANGELOG.md\n"
    diffs = {first["hash"]: f"{head}+{line.format(n=5824)}\n"
                            "diff --git a/app/controllers/devise/registrations_controller.rb "
                            "b/app/controllers/devise/registrations_controller.rb\n"
                            "+++ b/app/controllers/devise/registrations_controller.rb\n"
                            "+    resource_class.sign_in_after_change_password?\n",
             second["hash"]: f"{head}-{line.format(n=5824)}\n+{line.format(n=5825)}\n+{hook}\n"
                             "diff --git a/app/controllers/devise/passwords_controller.rb "
                             "b/app/controllers/devise/passwords_controller.rb\n"
                             "+++ b/app/controllers/devise/passwords_controller.rb\n"
                             "+    def sign_in_after_reset_password?\n"}
    k.diff_of = lambda commit: diff_words(diffs.get(commit, "")) | told_words(diffs.get(commit, ""))
    return k


def test_a_pull_request_writing_another_change_s_entry_did_not_write_the_item() -> None:
    # devise 5.0.2 (blind26): #5826 added its own entry and corrected #5825's ("[#5824]" to "[#5825]"), so its
    # diff holds every word of #5825's item; it was taken for the item's writer, which excused the planted
    # "[#5826]" on "Allow resource class scopes to override ... `sign_in_after_change_password` behaviour."
    item = ("* Allow resource class scopes to override the global configuration for "
            "`sign_in_after_change_password` behaviour. [#{n}](https://github.com/heartcombo/devise/pull/{n})\n")
    assert _unsupported(_devise(), item.format(n=5825)) == set()
    assert "#5826" in _unsupported(_devise(), item.format(n=5826))
    # the entry it wrote for itself still cites its own number
    hook = ("* Add `sign_in_after_reset_password?` check hook to passwords controller, to allow it to be customized "
            "by users. [#5826](https://github.com/heartcombo/devise/pull/5826)\n")
    assert _unsupported(_devise(), hook) == set()


def test_a_merge_titled_as_the_commit_it_brought_in_is_that_commit_s_change() -> None:
    # javaparser 3.28.2 (blind26): the merge of #5011, titled "build: add OSGi support to all deployable modules"
    # without the "(#1477)" of the commit it brought in, was taken for the item's own commit; naming no number, it
    # excused the planted "(#1478)" in place of the issue its branch's commit names
    title = "build: add OSGi support to all deployable modules"
    branch = _commit(2, f"{title} (#1477)", author=("Ethan Godden", "ethan@example.org"),
                     committer=("Ethan Godden", "ethan@example.org"), parents=(3,), paths=("pom.xml",))
    merge = _commit(1, title, f"{title} (#1477)", author=("Jean Pierre", "jp@example.org"), parents=(3, 2),
                    paths=("pom.xml",))
    base = _commit(3, "feat: add support for JAVA 26")
    k = Knowledge("javaparser-parent-3.28.1..javaparser-parent-3.28.2", None, [], [merge, branch, base])
    item = ("* build: add OSGi support to all deployable modules (#{n}) "
            "(PR [#5011](https://github.com/javaparser/javaparser/pull/5011) by [@ethan-godden](https://github.com/ethan-godden))\n")
    assert _unsupported(k, item.format(n=1477)) == set()
    assert "#1478" in _unsupported(k, item.format(n=1478))


def test_thanks_on_an_issue_the_maintainer_s_commit_fixes_may_be_for_the_report() -> None:
    # transitions 0.9.3 (blind26): "Bug #692: ... (thanks @drpjm)" for the maintainer's "fix: ... this fixes #692"
    # was "git says Alexander Neumann": the one who reported #692 is thanked, whom git does not know
    fix = _commit(1, "fix: enable override of already initialized FunctionWrapper this fixes #692",
                  author=("Alexander Neumann", "aleneum@example.org"))
    other = _commit(2, "fix: this fixes #701", author=("Alexander Neumann", "aleneum@example.org"))
    k = Knowledge("0.9.2..0.9.3", None, [], [fix, other])
    item = ("- Bug #692: When adding an already constructed `NestedState`, FunctionWrapper was not properly "
            "initialized (thanks @{who})\n"
            "- Bug #701: `Machine.dispatch` should not short-circuit (thanks @Joshuaalbert)\n")
    assert _unsupported(k, item.format(who="drpjm")) == set()
    # a pull request's own number, or a credit saying who made it ("by @x"), is judged as before
    pr = _commit(3, "Improve handling of StrEnum (#696)", author=("Ann Lee", "ann@example.org"))
    k = Knowledge("0.9.3..0.9.4", None, [], [pr, _commit(4, "Fix hierarchical final check (#715)",
                                                         author=("Ann Lee", "ann@example.org"))])
    section = "- PR #696: Improve handling of `StrEnum` (thanks @{who})\n- PR #715: Fix final check (thanks @annlee)\n"
    assert "@jbrocher" in _unsupported(k, section.format(who="jbrocher"))
