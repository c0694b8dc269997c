"""Long commands report progress on standard error: plain lines off a terminal, rich's live display
on one; standard output keeps the result (and with --json, only JSON)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from signoff.cli.main import main
from signoff.demo.fixture import FixtureRepo, build, examples_root
from tests.support.requires import require_binary, require_sandbox
from tests.system.cli.terminal import on_terminal

COMMITS = 2500


@pytest.fixture(scope="module")
def long_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository of COMMITS commits, each changing one file, written in one git fast-import."""
    repo = tmp_path_factory.mktemp("history")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    stream = []
    for n in range(1, COMMITS + 1):
        body = f"line {n}\n".encode()
        message = f"change {n}\n".encode()
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"committer Dev <dev@example.com> {1_700_000_000 + n} +0000\n".encode())
        stream.append(b"data %d\n%s" % (len(message), message))
        stream.append(b"M 644 inline file%d.txt\ndata %d\n%s\n" % (n % 50, len(body), body))
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    return repo


@pytest.fixture
def sandbox() -> None:
    require_sandbox()


@pytest.fixture
def coupon(home: Path) -> FixtureRepo:
    return build(examples_root() / "coupon", home.parent / "coupon-repo")


def _verify(repo: FixtureRepo, *extra: str) -> list[str]:
    return ["repair", "verify", "--repo", str(repo.path), "--base", "main", "--candidate", "genuine-fix",
            "--harness", str(examples_root() / "coupon" / "harness"),
            "--expect", "test_coupon.py::test_coupon_applies_once",
            "--regression", "test_coupon.py::test_zero_coupon_keeps_total", *extra]


def test_notes_snapshot_of_a_long_history_reports_plain_lines(home: Path, long_history: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["notes", "snapshot", "--repo", str(long_history), "-o", "s.json"]) == 0
    out, err = capsys.readouterr()
    assert f"{COMMITS} commits" in out and "reading commits" not in out
    assert err.splitlines() == [f"notes snapshot: reading commits ({n})" for n in (0, 1000, 2000, COMMITS)]


def test_notes_snapshot_on_a_terminal_shows_a_live_display(home: Path, long_history: Path) -> None:
    code, text = on_terminal(["notes", "snapshot", "--repo", str(long_history), "-o", "s.json"], 100, home.parent)
    assert code == 0, text
    assert f"{COMMITS} commits" in text
    # the live display's last frame: the step, finished (a check), with its count
    final = [line for line in text.splitlines() if "notes snapshot: reading commits" in line][-1]
    assert "✓" in final and str(COMMITS) in final
    assert "notes snapshot: reading commits (" not in text  # the plain form is for pipes only


def test_a_terminal_that_cannot_show_the_glyphs_gets_plain_lines(home: Path, long_history: Path) -> None:
    code, text = on_terminal(["notes", "snapshot", "--repo", str(long_history), "-o", "s.json"], 100, home.parent,
                             {"PYTHONIOENCODING": "latin-1"})
    assert code == 0, text
    lines = text.splitlines()
    assert [line for line in lines if "reading commits" in line] == [
        f"notes snapshot: reading commits ({n})" for n in (0, 1000, 2000, COMMITS)]


@pytest.mark.parametrize("executions", ["shared", "apart"])
def test_repair_verify_json_keeps_stdout_json_and_reports_each_step(
        home: Path, sandbox: None, coupon: FixtureRepo, capsys: pytest.CaptureFixture[str], executions: str) -> None:
    # base and candidate in one interpreter, or in two sandboxes at once: each execution is reported
    assert main(_verify(coupon, "--json", "--executions", executions)) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["verdict"] == "VERIFIED"
    assert err.splitlines() == [
        "repair verify: freezing the harness", "repair verify: exporting the revisions",
        "repair verify: preparing the environment", "repair verify: executions (0/2)",
        "repair verify: executions (1/2)", "repair verify: executions (2/2)", "repair verify: writing the evidence"]


def test_repair_verify_on_a_terminal_shows_the_steps_live(home: Path, sandbox: None, coupon: FixtureRepo) -> None:
    code, text = on_terminal(_verify(coupon), 120, home.parent)
    assert code == 0 and "VERIFIED" in text, text
    for step in ("freezing the harness", "preparing the environment", "writing the evidence"):
        assert any(f"repair verify: {step}" in line and "✓" in line for line in text.splitlines()), step
    assert any("repair verify: executions" in line and "2/2" in line for line in text.splitlines())


def test_incident_run_reports_its_steps(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_binary("node", "apt-get install -y nodejs")
    assert main(["incident", "run", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["ok"]
    assert err.splitlines() == [
        "incident run: setting up the guards", "incident run: reproducing: PayCo sends the events to ShopCo",
        "incident run: fingerprinting the failing event", "incident run: signing and comparing the disclosures",
        "incident run: verifying the ledgers", "incident run: checking the fix: the events again"]


def test_desk_work_reports_each_job(home: Path, sandbox: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["desk", "init", "--json"]) == 0
    tokens = json.loads(capsys.readouterr().out)["tokens"]
    assert main(["desk", "report", "--title", "Coupon larger than the cart gives a negative total",
                 "--component", "checkout", "--actual", "-100 with SAVE300", "--json"]) == 0
    capsys.readouterr()
    assert main(["desk", "work", "--token", tokens["engineering"], "--json"]) == 0
    out, err = capsys.readouterr()
    handled = json.loads(out)["handled"]
    lines = err.splitlines()
    assert len(lines) == handled and lines[:2] == ["desk work: triage BUG-0001", "desk work: reproduce BUG-0001"]


def test_a_demo_reports_its_steps_and_keeps_json_clean(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "notes", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["ok"]
    assert err.splitlines() == ["demo notes: running", "demo notes: building a git history",
                                "demo notes: writing, checking and reviewing the notes",
                                "demo notes: approving, publishing and signing",
                                "demo notes: leaving the visitor a run to decide on"]


def test_a_command_that_fails_before_its_first_step_prints_only_the_error(home: Path) -> None:
    missing = home.parent / "no-such-repository"
    code, text = on_terminal(["repair", "verify", "--repo", str(missing), "--base", "main", "--candidate", "fix",
                              "--harness", str(home.parent), "--expect", "test_x.py::test_x"], 80, home.parent)
    assert code == 2
    assert text.splitlines() == [f"error: repository not found: {missing}",
                                 "fix: pass --repo the folder of a git repository"]
