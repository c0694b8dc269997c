"""The `signoff notes` commands end to end on a real repository, through the CLI entry point."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from signoff.cli.main import main
from tests.support.gitrepo import Repo


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_step_by_step_commands(home: Path, history: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "notes", "snapshot", "--repo", str(history.path), "--range", "v0.1.0..v0.2.0",
                         "-o", "s.json")
    assert code == 0, err
    assert "9 commits" in out  # the eight commits and the merge: merges are read by default
    code, out, _ = run(capsys, "notes", "facts", "s.json", "-o", "f.json")
    assert code == 0 and "facts f.json" in out
    code, out, _ = run(capsys, "notes", "draft", "--facts", "f.json", "-o", "d.json")
    assert code == 0 and "(simulated)" in out
    code, out, _ = run(capsys, "notes", "verify", "--snapshot", "s.json", "--facts", "f.json", "--draft", "d.json",
                       "--json")
    verdict = json.loads(out)
    assert code == 0 and verdict["ok"] and verdict["schema"] == "signoff/verdict@1"

    draft = json.loads(Path("d.json").read_text())
    draft["sentences"][0]["text"] = draft["sentences"][0]["text"].replace("9 commits", "7 commits")
    Path("d.json").write_text(json.dumps(draft))
    code, out, _ = run(capsys, "notes", "verify", "--snapshot", "s.json", "--facts", "f.json", "--draft", "d.json",
                       "--json")
    verdict = json.loads(out)
    assert code == 1 and not verdict["ok"]
    errors = verdict["sentences"][0]["errors"]
    assert errors[0]["code"] == "NUMBER_UNSUPPORTED" and errors[0]["token"] == "7"
    assert errors[0]["position"] == draft["sentences"][0]["text"].index("7 commits")
    code, out, _ = run(capsys, "notes", "verify", "--snapshot", "s.json", "--facts", "f.json", "--draft", "d.json")
    assert code == 1 and "NUMBER_UNSUPPORTED '7'" in out


def test_run_review_decide_render_grade(notes_home: Path, history: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "notes", "run", "--repo", str(history.path), "--out", "r", "--script", "demo",
                         "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["rounds"] == 2 and all(s["status"] == "ok" for s in result["sentences"])
    review = json.loads(Path("r/review.json").read_text())
    first = {s["id"]: s for s in review["rounds"][0]["sentences"]}
    rejected = [s for s in first.values() if s["status"] == "rejected"]
    assert len(rejected) == 1
    codes = {e["code"] for e in rejected[0]["errors"]} | {j["code"] for j in rejected[0]["judgments"]}
    assert codes == {"NUMBER_UNSUPPORTED", "OVERCLAIM"}
    revised = json.loads(Path("r/draft.r1.json").read_text())
    assert revised["revised"] == [rejected[0]["id"]]  # only the rejected sentence was rewritten
    original = json.loads(Path("r/draft.json").read_text())["sentences"]
    assert [s for s in revised["sentences"] if s["id"] != rejected[0]["id"]] == \
        [s for s in original if s["id"] != rejected[0]["id"]]

    code, _, err = run(capsys, "notes", "decide", "r", "ship", "--by", "alice")
    assert code == 3 and "cannot ship" in err and "S1: not approved" in err
    code, _, err = run(capsys, "notes", "render", "r", "-o", "final.md")
    assert code == 3 and "not shipped" in err and not Path("final.md").exists()
    assert run(capsys, "notes", "decide", "r", "approve all", "--by", "alice")[0] == 0
    code, out, _ = run(capsys, "notes", "decide", "r", "ship", "--by", "alice", "--json")
    assert code == 0 and json.loads(out)["shipped"]
    code, out, _ = run(capsys, "notes", "render", "r", "-o", "final.md", "--commit-url",
                       "https://example.org/c/{hash}")
    assert code == 0
    final = Path("final.md").read_text()
    assert "](https://example.org/c/" in final and final.count("\n- ") >= 8
    code, out, _ = run(capsys, "notes", "grade", "final.md", "--snapshot", "r/snapshot.json", "--json")
    graded = json.loads(out)
    assert code == 0 and graded["ok"] and graded["claims"]["total"] > 10

    Path("baseline.md").write_text(
        "# Notes\n\nThis release has 9 commits from 3 contributors. It made builds 35% faster in commit "
        "abcdef1234.\n\nWe also trimmed the readme.\n")
    code, out, _ = run(capsys, "notes", "grade", "baseline.md", "--snapshot", "r/snapshot.json", "--json")
    graded = json.loads(out)
    assert code == 1
    # "35% faster" is a measurement git cannot check: reported as not checkable, never unsupported
    assert graded["claims"] == {"total": 3, "supported": 2, "pct": 66.7, "not_checkable": 1}
    assert graded["sentences"] == {"checkable": 2, "supported": 1, "pct": 50.0}
    assert [(u["token"], u["reason"]) for u in graded["unsupported"]] == [
        ("abcdef1234", "no commit in HEAD starts with abcdef1234")]
    assert [(u["token"], u["why"]) for u in graded["not_checkable"]] == [("35%", "measurement")]
    code, out, _ = run(capsys, "notes", "status", "r", "--json")
    assert code == 0 and json.loads(out)["shipped"]


def test_unknown_writer_role(home: Path, built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "notes", "draft", "--facts", str(built[1]), "--writer", "nobody", "-o", "d.json")
    assert code == 2 and "no agent role 'nobody'" in err


def test_demo_notes(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "demo", "notes", "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["ok"] and not summary["baseline"]["ok"] and summary["ours"]["ok"]
    assert {u["token"] for u in summary["baseline"]["unsupported"]} == {"6 commits"}
    assert summary["rejected_in_review"]
    # Every demo leaves a signed checkpoint of the head it wrote: verify passes with nothing unsigned.
    code, out, err = run(capsys, "ledger", "verify", "--require-signed", "--json")
    assert code == 0, err
    chain = json.loads(out)
    assert chain["count"] > 0 and chain["last_checkpoint"] == chain["count"] and chain["unsigned_tail"] == 0


def test_a_cli_decision_is_bound_to_the_text_it_names_or_prints(notes_home: Path, history: Repo,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Alice reads `status` and types the digest it showed; Bob edits S2 first: her approval of S2 is
    refused (exit 4) and nothing is recorded. Without a digest, the CLI prints the text it decides on."""
    assert run(capsys, "notes", "run", "--repo", str(history.path), "--out", "r", "--script", "demo")[0] == 0
    code, out, _ = run(capsys, "notes", "status", "r")
    seen = re.search(r"pending S2 #([0-9a-f]{12}): (.*) \[", out)
    assert code == 0 and seen
    code, out, _ = run(capsys, "notes", "decide", "r", f"edit S2 Notably, {seen.group(2)}", "--by", "bob")
    assert code == 0 and f"deciding on S2: {seen.group(2)} [" in out
    code, _, err = run(capsys, "notes", "decide", "r", f"approve S2 #{seen.group(1)}", "--by", "alice")
    assert code == 4 and "sentence S2 changed since it was shown" in err and "signoff notes status" in err
    code, out, _ = run(capsys, "notes", "status", "r", "--json")
    status = json.loads(out)
    assert status["decisions"] == 1 and status["sentences"][1]["status"] == "pending"
    code, _, _ = run(capsys, "notes", "decide", "r", f"approve S2 #{status['shown']['S2']}", "--by", "alice")
    assert code == 0


def test_grade_with_the_repository_reads_a_credited_pull_requests_diff(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """An item whose words are only in its pull request's diff is supported once the grader has
    the repository, and an invented change credited to the same pull request stays unsupported."""
    r = Repo(home / "repo")
    r.git("init", "-q", "-b", "main")
    r.write("README.md", "# demo\n")
    r.commit("Initial import")
    r.write("docs/policy.md", "Old major versions are supported for 12 months after the next major version.\n")
    r.commit("Separate out a more detailed release policy document (#62)")
    r.write("README.md", "# demo app\n")
    r.commit("Fix typo in README (#63)")
    r.write("lib/option.js", "export const parse = (args) => args\n")
    r.commit("Speed up option parsing (#64)")
    assert run(capsys, "notes", "snapshot", "--repo", str(r.path), "-o", "s.json")[0] == 0
    Path("true.md").write_text("- Old major versions are now supported for 12 months instead of one (#62).\n")
    Path("invented.md").write_text("- Add a `retry_forever` option that keeps failed uploads in a local queue (#62).\n")
    code, out, _ = run(capsys, "notes", "grade", "true.md", "--snapshot", "s.json")
    assert code == 1 and "git says #62 is 'Separate out a more detailed release policy document" in out
    assert run(capsys, "notes", "grade", "true.md", "--snapshot", "s.json", "--repo", str(r.path))[0] == 0
    code, out, _ = run(capsys, "notes", "grade", "invented.md", "--snapshot", "s.json", "--repo", str(r.path))
    assert code == 1 and "git says #62 is" in out
    # run in the repository the snapshot was taken from, the grader reads it without being told
    here = Path.cwd()
    monkeypatch.chdir(r.path)
    assert run(capsys, "notes", "grade", str(here / "true.md"), "--snapshot", str(here / "s.json"))[0] == 0
    # a run records its repository: the console's grade of its notes reads the diffs too
    assert run(capsys, "notes", "run", "--repo", str(r.path), "--out", str(here / "run"), "--script", "demo")[0] == 0
    from signoff.notes import grade_run_text

    assert grade_run_text(here / "run", Path(here / "true.md").read_text(), "preview.md")["ok"]
    (here / "run" / "repository.txt").unlink()  # a run taken before runs recorded it: the snapshot alone
    assert not grade_run_text(here / "run", Path(here / "true.md").read_text(), "preview.md")["ok"]
