"""The deterministic writer: one line per user-facing change with its pull request, grouped,
breaking changes and deprecations first, housekeeping and bots left out, every line verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.notes.facts import FactsFile, snapshot_and_facts
from signoff.notes.run import writer_task
from signoff.notes.verify import Verifier
from signoff.notes.writer import write_default
from tests.support.gitrepo import Repo

BOT = ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")
KIM = ("Kim", "kim@example.org")


def _write(tmp_path: Path, r: Repo) -> tuple[list[dict[str, object]], Verifier]:
    snapshot_and_facts(r.path, None, tmp_path / "s.json", tmp_path / "f.json")
    out = write_default(writer_task(FactsFile(tmp_path / "f.json")))["sentences"]
    sentences = [{"id": f"S{i}", "text": s["text"], "facts": s["cites"]} for i, s in enumerate(out, 1)]
    verifier = Verifier(tmp_path / "s.json", tmp_path / "f.json", {f for s in sentences for f in s["facts"]})
    for s in sentences:
        assert verifier.check(s)["ok"], (s, verifier.check(s)["errors"])
    return out, verifier


def _grouped(out: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(s.get("group"), s["text"]) for s in out[1:]]


def test_conventional_commits_grouped_with_breaking_first(tmp_path: Path) -> None:
    r = Repo(tmp_path / "conv")
    for i, (subject, files, author) in enumerate([
        ("feat(parser): accept tabs in headers (#101)", {"src/p.js": "1"}, KIM),
        ("fix: keep the last line when no newline ends the file (#102)", {"src/f.js": "1"}, KIM),
        ("chore(deps): bump eslint from 8.0.0 to 9.0.0 (#103)", {"package-lock.json": "1"}, BOT),
        ("ci: run on Node 22 (#104)", {".github/workflows/ci.yml": "1"}, KIM),
        ("feat!: drop the callback API (#105)", {"src/api.js": "1"}, KIM),
        ("fix(test): remove a flaky timeout (#106)", {"test/a.test.js": "1"}, KIM),
        ("docs: explain ranges (#107)", {"docs/ranges.md": "1"}, KIM),
        ("feat: deprecate the `loose` option (#108)", {"src/opt.js": "1"}, KIM),
    ]):
        for name, content in files.items():
            r.write(name, content + str(i))
        r.commit(subject, author=author)
    out, _ = _write(tmp_path, r)
    assert out[0]["text"] == "This release has 8 commits."  # not "from 2 contributors": one is a bot
    assert _grouped(out) == [
        ("Breaking changes", "Drop the callback API (#105)."),
        ("Deprecations", "Deprecate the `loose` option (#108)."),
        ("Features", "Parser: accept tabs in headers (#101)."),
        ("Bug fixes", "Keep the last line when no newline ends the file (#102)."),
        ("Documentation", "Explain ranges (#107)."),
    ]


def test_plain_subjects_grouped_by_verb_label_and_paths_merges_by_their_title(tmp_path: Path) -> None:
    r = Repo(tmp_path / "plain")
    r.write("src/a.py", "0")
    r.commit("Initial import")
    r.git("checkout", "-q", "-b", "feature")
    r.write("src/b.py", "1")
    r.commit("wip")
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "-m", "Merge pull request #12 from kim/b\n\nAdd the b module for 3 formats",
          "feature")
    for i, (subject, files, author) in enumerate([
        ("Fix a crash on empty input (#13)", {"src/a.py": "2"}, KIM),
        ("[Bug] Wrong header casing (#14)", {"src/a.py": "3"}, KIM),
        ("Update pre-commit hooks (#15)", {".pre-commit-config.yaml": "1"}, ("pre-commit-ci[bot]", "p@ci")),
        ("Add tests for b (#16)", {"tests/test_b.py": "1"}, KIM),
        ("Deprecate `old_api` in favour of `new_api` (#17)", {"src/a.py": "4"}, KIM),
        ("Bump version to 2.0.1", {"src/version.py": "1"}, KIM),
        ("Remove Python 3.8 support (#18)", {"src/a.py": "5", "pyproject.toml": "x"}, KIM),
        ("Speed up parsing of long lines (#19)", {"src/a.py": "6"}, KIM),
    ]):
        for name, content in files.items():
            r.write(name, content + str(i))
        r.commit(subject, author=author)
    out, _ = _write(tmp_path, r)
    text = "\n".join(s["text"] for s in out)
    assert "%" not in text and "wrote" not in text and "pre-commit" not in text
    assert _grouped(out) == [
        ("Deprecations", "Deprecate `old_api` in favour of `new_api` (#17)."),
        ("Removals", "Remove Python 3.8 support (#18)."),
        ("Features", "Add the b module for 3 formats (#12)."),
        ("Bug fixes", "Wrong header casing (#14)."),
        ("Bug fixes", "Fix a crash on empty input (#13)."),
        ("Performance", "Speed up parsing of long lines (#19)."),
    ]


@pytest.mark.parametrize("subject", ["Merge branch 'main' into dev", "Release 2.0.1", "Update changelog"])
def test_housekeeping_without_pull_requests_is_left_out(tmp_path: Path, subject: str) -> None:
    r = Repo(tmp_path / "hk")
    r.write("src/a.py", "0")
    r.commit("Add the exporter for CSV files")
    r.write("src/a.py", "1")
    r.commit(subject)
    out, _ = _write(tmp_path, r)
    assert _grouped(out) == [("Features", "Add the exporter for CSV files.")]


def test_the_changelog_before_the_range_says_which_refactors_and_upgrades_are_listed(tmp_path: Path) -> None:
    # gin-gonic/gin lists `refactor:` pull requests and square/okhttp "Upgrade: [Okio 3.16.0]" (renovate's):
    # the writer reads the changelog as it stood where the range starts
    from signoff.kernel.settings import Settings
    from signoff.notes.practice import changelog_before, read_practice
    from signoff.notes.run import REPOSITORY_FILE, make_draft

    renovate = ("renovate[bot]", "29139614+renovate[bot]@users.noreply.github.com")
    r = Repo(tmp_path / "r")
    r.write("CHANGELOG.md", "## 1.0.0\n\n* refactor: use bytes.ReplaceAll directly (#3)\n* Upgrade: [Okio 3.16.0]\n")
    r.write("src/app.go", "package app\n")
    r.commit("Release 1.0.0", author=KIM)
    r.git("tag", "v1.0.0")
    for subject, path, author in [("refactor(context): simplify the GetType functions (#4)", "src/app.go", KIM),
                                  ("Update square.okio to v3.17.0 (#5)", "gradle/libs.versions.toml", renovate),
                                  ("Update spotless.plugin to v8.6.0 (#6)", "build.gradle.kts", renovate),
                                  ("feat: add BindPlain (#7)", "src/bind.go", KIM)]:
        r.write(path, subject)
        r.commit(subject, author=author)
    assert changelog_before(r.path, "v1.0.0") == "" and changelog_before(r.path, "nope..HEAD") == ""
    assert read_practice(changelog_before(r.path, "v1.0.0..HEAD")).refactors
    run = tmp_path / "run"
    run.mkdir()
    snapshot_and_facts(r.path, "v1.0.0..HEAD", run / "snapshot.json", run / "facts.json")
    (run / REPOSITORY_FILE).write_text(f"{r.path}\n", encoding="utf-8")
    draft = make_draft(run / "facts.json", Settings(home=tmp_path / "home", db_url=f"sqlite:///{tmp_path / 'db'}"))
    assert [(s.get("group"), s["text"]) for s in draft["sentences"][1:]] == [
        ("Features", "Add BindPlain (#7)."), ("Refactoring", "Context: simplify the GetType functions (#4)."),
        ("Dependencies", "Upgrade Okio to v3.17.0 (#5).")]
