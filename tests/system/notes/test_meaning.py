"""Claims read by meaning and checked against what git says, on a small real repository that
reproduces real projects' facts: subjects and pull request numbers of encode/starlette 0.47.0..0.47.1
(739ea492, e741635e, fa535544; release notes in docs/release-notes.md at cb8f84f5284d), pytest-dev/pluggy
1.5.0 (4326ced, #481) and koajs/koa 2.13.1 (b5472f4, "fix #1513 (#1518)"), plus a merge commit, a
body, a towncrier fragment, a backport and annotated tag dates."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from signoff.notes.grade import grade_text
from signoff.notes.meaning import read_claims
from signoff.notes.snapshot import take_snapshot
from tests.support.gitrepo import Repo


def _tag(r: Repo, name: str, when: str) -> None:
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_COMMITTER_NAME": "Rel", "GIT_COMMITTER_EMAIL":
           "rel@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(r.path), "tag", "-a", name, "-m", name], env=env, check=True)


@pytest.fixture(scope="module")
def snap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("meaning")
    r = Repo(root / "repo")
    r.write("a.py", "0\n")
    r.commit("Initial import")
    _tag(r, "0.47.0", "2025-05-29T10:00:00+00:00")
    r.write("a.py", "1\n")
    r.commit("Allow async exception handlers to type-check (#2949)", author=("Kim", "kim@example.org"))
    r.write("b.py", "1\n")
    r.commit("Use `Self` in `TestClient.__enter__` (#2951)")
    r.git("checkout", "-q", "-b", "feature")
    r.write("c.py", "1\n")
    r.commit("frobnicate", author=("Lee", "lee@example.org"))
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "-m", "Merge pull request #3010 from lee/frob\n\nAdd the frobnicator to the "
          "request pipeline", "feature")
    r.write("d.py", "1\n")
    r.commit("Handle overflow in timed unsign\n\nFixes #77, see also https://github.com/o/r/pull/3020")
    r.write("changes/481.bugfix.rst", "fixed\n")
    r.write("e.py", "1\n")
    r.commit("PluginManager.get_plugins no longer returns None for blocked plugins")
    r.write("f.py", "1\n")
    r.commit("[0.47.x] Fix crash when the body is empty (#3030)\n\n(cherry picked from commit 0123456789abcdef)")
    r.write("h.py", "1\n")
    r.commit("fix: make ESM transpiled CommonJS play nice for TS folks, fix #1513 (#1518)")
    r.write("g.py", "1\n")
    r.commit("Version 0.47.1 (#2952)")
    _tag(r, "0.47.1", "2025-06-21T22:30:00-04:00")  # the 22nd in UTC
    out = root / "s.json"
    take_snapshot(r.path, "0.47.0..0.47.1", out)
    return out


def verdicts(text: str, snap: Path) -> dict[str, str]:
    graded = grade_text(text, "CHANGES.md", snap)
    out = {u["token"]: "supported" for u in []}
    for u in graded["unsupported"]:
        out[u["token"]] = "unsupported: " + u["reason"]
    for u in graded["not_checkable"]:
        out[u["token"]] = "not checkable: " + u["why"]
    return out


TRUE_SECTION = """\
## [0.47.1](https://github.com/o/r/compare/0.47.0...0.47.1) (June 21, 2025)

Released 21st June, 2025. This release has 8 commits from 3 contributors, 2 new contributors.

### Fixed

* Use `Self` in `TestClient.__enter__` [#2951](https://github.com/o/r/pull/2951).
* Allow async exception handlers to type-check (#2949) by @kim
* Add the frobnicator to the request pipeline. :pr:`3010`
* Handle overflow in timed unsign. :issue:`77` {pr}`3020`
* `#481 <https://github.com/o/r/issues/481>`_: get_plugins no longer returns None for blocked plugins.
* Fix crash when the body is empty. :pr:`2990`
* Requires ItsDangerous >= 2.2 and Python 3.9; follows PEP 681 and metadata version 2.3. See ABC-123.
* Deprecated in 0.46 and removed in 1.0; about 30% faster. :issue:`4242`
"""


def test_a_true_section_has_no_unsupported_claim(snap: Path) -> None:
    graded = grade_text(TRUE_SECTION, "CHANGES.md", snap)
    assert graded["unsupported"] == [], graded["unsupported"]
    assert graded["claims"]["total"] >= 15
    kinds = {u["token"]: u["why"] for u in graded["not_checkable"]}
    assert kinds["2.2"] == "dependency version" and kinds["3.9"] == "dependency version"
    assert kinds["PEP 681"] == kinds["metadata version 2.3"] == "standard or platform version"
    assert kinds["ABC-123"] == "external ticket id"
    assert kinds[":pr:`2990`"] == "backport whose commit lost the number"
    assert kinds[":issue:`4242`"] == "issue link no commit carries"
    assert kinds["30%"] == "measurement"
    assert kinds["1.0"] == "version no tag names"


@pytest.mark.parametrize("false, true, reason", [
    ("## 0.47.2 (2025-06-21)", "## 0.47.1 (2025-06-21)", "the range's tags are 0.47, 0.47.1"),
    ("## 0.47.12 (2025-06-21)", "## 0.47.1 (2025-06-21)", "the range's tags are 0.47, 0.47.1"),  # never cut
    ("## 0.47.1 (2025-06-25)", "## 0.47.1 (2025-06-22)", "git says"),
    ("Released Nov 28, 2024.", "Released Jun 22, 2025.", "git says"),
    ("This release has 12 commits.", "This release has 9 commits.", "git says one of [8, 9] commits"),
    ("Thanks to 4 new contributors.", "Thanks to 2 new contributors.", "git says 2 new contributors"),
    ("* Use `Self` in `TestClient.__enter__` (#2950).", "* Use `Self` in `TestClient.__enter__` (#2951).",
     "git says #2951"),
    ("* Allow async exception handlers to type-check https://github.com/o/r/pull/2952",
     "* Allow async exception handlers to type-check https://github.com/o/r/pull/2949", "git says #2949"),
    ("* Make ESM transpiled CommonJS play nice for TS folks, fix #1514 (#1518)",
     "* Make ESM transpiled CommonJS play nice for TS folks, fix #1513 (#1518)", "git says #1513"),
    ("Fixed in deadbee1.", "Fixed in {head}.", "no commit in 0.47.0..0.47.1 starts with deadbee1"),
    # An issue link is contradicted by what the item's own commit says its entry is (the fragment it
    # adds, the issue it closes).
    ("* PluginManager.get_plugins no longer returns None for blocked plugins (https://github.com/o/r/issues/482)",
     "* PluginManager.get_plugins no longer returns None for blocked plugins (https://github.com/o/r/issues/481)",
     "git says #481"),
    ("* Handle overflow in timed unsign. :issue:`78`", "* Handle overflow in timed unsign. :issue:`77`",
     "git says #77"),
    # ... or by being higher than the commit's own pull request (release-please links pull requests
    # as /issues/N; an issue fixed by a pull request was opened before it).
    ("* Use `Self` in `TestClient.__enter__` ([#2952](https://github.com/o/r/issues/2952))",
     "* Use `Self` in `TestClient.__enter__` ([#2951](https://github.com/o/r/issues/2951))", "git says #2951"),
])
def test_a_planted_false_claim_is_flagged_and_its_true_twin_is_not(snap: Path, false: str, true: str,
                                                                    reason: str) -> None:
    if "{head}" in true:
        from signoff.notes.snapshot import Snapshot

        true = true.replace("{head}", (Snapshot(snap).head or "")[:9])
    bad = grade_text(false + "\n", "x.md", snap)
    assert not bad["ok"] and reason in bad["unsupported"][0]["reason"], bad["unsupported"]
    good = grade_text(true + "\n", "x.md", snap)
    assert good["ok"] and good["claims"]["supported"] >= 1, good["unsupported"]


def test_a_version_is_read_whole_and_never_as_a_count() -> None:
    claims = read_claims("0.28.2 (28th November, 2024)", release=True)
    assert [(c.kind, c.token, c.value) for c in claims] == [("version", "0.28.2", "0.28.2"),
                                                          ("date", "28th November, 2024", "2024-11-28")]
    assert [(c.kind, c.value) for c in read_claims("Nov 28, 2024 and 2024-11-28 and November 2024")] == [
        ("date", "2024-11-28"), ("date", "2024-11-28"), ("date", "2024-11")]


def test_references_in_every_form_are_read() -> None:
    text = ("(#1) https://github.com/o/r/pull/2 https://github.com/o/r/issues/3 :issue:`4` :pr:`5` {issue}`6` "
            "{pr}`7` GH-8 PR #9 issue 10")
    refs = [(c.value, c.role) for c in read_claims(text) if c.kind == "ref"]
    assert sorted(refs, key=lambda x: int(x[0])) == [
        ("1", "any"), ("2", "pr"), ("3", "issue"), ("4", "issue"), ("5", "pr"), ("6", "issue"), ("7", "pr"),
        ("8", "any"), ("9", "pr"), ("10", "issue")]


def test_verify_reads_versions_whole_and_references_from_bodies(snap: Path, tmp_path: Path) -> None:
    from signoff.notes.facts import FactsFile, build_facts
    from signoff.notes.verify import Verifier

    facts_path = tmp_path / "facts.json"
    build_facts(snap, facts_path)
    by_subject = {f["subject"]: f["id"] for f in FactsFile(facts_path).facts() if f["kind"] == "commit"}
    release, overflow = by_subject["Version 0.47.1 (#2952)"], by_subject["Handle overflow in timed unsign"]
    sentences = [
        {"id": "S1", "text": "Version 0.47.1 is out (#2952).", "facts": [release]},
        {"id": "S2", "text": "Version 0.47.2 is out.", "facts": [release]},
        {"id": "S3", "text": "Version 0.47 is out.", "facts": [release]},  # never cut from 0.47.1
        {"id": "S4", "text": "Overflow in timed unsign is handled (#77, #3020), as PEP 681 asks; ABC-12.",
         "facts": [overflow]},
        {"id": "S5", "text": "Overflow in timed unsign is handled (#78).", "facts": [overflow]},
    ]
    verifier = Verifier(snap, facts_path, {f for s in sentences for f in s["facts"]})
    results = {s["id"]: verifier.check(s) for s in sentences}
    assert results["S1"]["ok"], results["S1"]["errors"]
    assert [(e["code"], e["token"]) for e in results["S2"]["errors"]] == [("VERSION_UNSUPPORTED", "0.47.2")]
    assert [(e["code"], e["token"]) for e in results["S3"]["errors"]] == [("NUMBER_UNSUPPORTED", "0.47")]
    assert results["S4"]["ok"], results["S4"]["errors"]
    assert [u["kind"] for u in results["S4"]["unchecked"]] == ["standard or platform version", "external ticket id"]
    assert [(e["code"], e["token"]) for e in results["S5"]["errors"]] == [("NUMBER_UNSUPPORTED", "78")]


def test_only_a_number_the_commit_names_in_its_subject_contradicts(tmp_path: Path) -> None:
    """pallets/click 777a89e232 names no pull request in its subject, only issues in its body: the
    changelog's {pr}`3139` is not contradicted. encode/uvicorn 3aa1d010 "Remove WatchGod (#2536)"
    has a two-word title: restated whole, it does contradict #2537."""
    r = Repo(tmp_path / "repo")
    r.write("a.py", "0")
    r.commit("Initial import")
    r.git("tag", "1.0.0")
    r.write("a.py", "1")
    r.commit("Add regular and stress tests for ``CliRunner`` stream lifecycle and ownership\n\n"
             "Closes: #824, #3110\nReverts: #2991")
    r.write("b.py", "1")
    r.commit("Remove WatchGod (#2536)")
    r.git("tag", "1.1.0")
    take_snapshot(r.path, "1.0.0..1.1.0", tmp_path / "s.json")
    click = "- Add regular and stress tests for `CliRunner` stream lifecycle and ownership. {pr}`3139`\n"
    graded = grade_text(click, "CHANGES.md", tmp_path / "s.json")
    assert graded["ok"] and [u["why"] for u in graded["not_checkable"]] == [
        "reference no commit in the range carries"]
    wrong = grade_text("- Remove WatchGod. (#2537)\n", "x.md", tmp_path / "s.json")
    assert [u["reason"][:14] for u in wrong["unsupported"]] == ["git says #2536"]
    assert grade_text("- Remove WatchGod. (#2536)\n", "x.md", tmp_path / "s.json")["ok"]


def test_an_issue_opened_before_the_pull_request_that_fixed_it_is_not_contradicted(snap: Path) -> None:
    # agronholm/anyio 4.14.0: "(`#1067 <.../issues/1067>`_)" for the commit "... (#1119)".
    for text in ("* Use `Self` in `TestClient.__enter__` ([#2940](https://github.com/o/r/issues/2940))",
                 "* Use `Self` in `TestClient.__enter__` (`#2940 <https://github.com/o/r/issues/2940>`_)"):
        graded = grade_text(text + "\n", "x.md", snap)
        assert graded["ok"], graded["unsupported"]
        assert [u["why"] for u in graded["not_checkable"]] == ["issue link no commit carries"] * 2
