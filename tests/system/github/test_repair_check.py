"""`signoff repair verify --github owner/repo#N`: the pull request's head is judged against its base
with the frozen harness, and the verdict is posted as a check run on the head commit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from signoff.cli.main import main
from signoff.demo.fixture import build, examples_root
from tests.support.github_standin import GitHubStandIn
from tests.support.requires import require_sandbox

FULL = "octo-org/coupon"
HARNESS = str(examples_root() / "coupon" / "harness")


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: GitHubStandIn) -> tuple[GitHubStandIn, Path]:
    require_sandbox()
    source = build(examples_root() / "coupon", tmp_path / "coupon-src")
    github.add_repo(FULL, source.path)
    # a maintainer's clone that has only main: the PR's commits must be fetched from GitHub
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--single-branch", "-b", "main", str(github.repos[FULL].path), str(clone)],
                   check=True)
    (tmp_path / "signoff.toml").write_text(f'[github]\napi_url = "{github.url}"\ngit_url = "{github.url}"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIGNOFF_HOME", str(tmp_path / ".signoff"))
    monkeypatch.setenv("SIGNOFF_GITHUB_TOKEN", "github_pat_good")
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    return github, clone


def _open_pull(gh: GitHubStandIn, branch: str) -> int:
    from signoff.github import GitHubClient, Repo, TokenAuth

    with GitHubClient(TokenAuth("github_pat_good"), gh.url) as client:
        return int(Repo(client, FULL).create_pull(f"Fix via {branch}", branch, "main", "", draft=False)["number"])


def _verify(clone: Path, number: int, *extra: str) -> list[str]:
    return ["repair", "verify", "--repo", str(clone), "--github", f"{FULL}#{number}", "--harness", HARNESS,
            "--expect", "test_coupon.py::test_coupon_applies_once",
            "--regression", "test_coupon.py::test_zero_coupon_keeps_total", *extra]


def test_a_verified_pull_request_gets_a_green_check(setup: tuple[GitHubStandIn, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    gh, clone = setup
    number = _open_pull(gh, "genuine-fix")
    assert main(_verify(clone, number, "--json", "--evidence-url", "https://ci.example/ev.json")) == 0
    out = json.loads(capsys.readouterr().out)
    head = gh.repos[FULL].pulls[number]["head"]["sha"]
    assert out["verdict"] == "VERIFIED" and out["candidate"] == head
    [run] = gh.repos[FULL].check_runs
    assert run["head_sha"] == head and run["name"] == "signoff/repair" and run["conclusion"] == "success"
    assert run["external_id"] == out["fingerprint"] and run["details_url"] == "https://ci.example/ev.json"
    from signoff.kernel.digests import sha256_file

    assert sha256_file(Path(out["evidence"])) in run["output"]["summary"]
    assert out["check_run"] == {"id": run["id"], "conclusion": "success"}


def test_rejected_and_inconclusive_are_both_red(setup: tuple[GitHubStandIn, Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    gh, clone = setup
    number = _open_pull(gh, "false-fix")
    assert main(_verify(clone, number)) == 1
    assert "check run signoff/repair posted" in capsys.readouterr().out
    # the second run finds the commits fetched already
    assert main(_verify(clone, number, "--approved-digest", "0" * 64, "--check-name", "harness")) == 3
    rejected, inconclusive = gh.repos[FULL].check_runs
    assert rejected["conclusion"] == "failure" and "REJECTED" in rejected["output"]["title"]
    assert inconclusive["conclusion"] == "failure" and "INCONCLUSIVE" in inconclusive["output"]["title"]
    assert "harness_changed" in inconclusive["output"]["summary"]


def test_github_errors_are_messages(setup: tuple[GitHubStandIn, Path], capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    gh, clone = setup
    assert main(_verify(clone, 99)) == 2  # a pull request GitHub does not have
    err = capsys.readouterr().err
    assert err.startswith("error:") and "404" in err
    assert main(["repair", "verify", "--repo", str(clone), "--github", "not-a-pr", "--harness", HARNESS,
                 "--expect", "x"]) == 2
    assert "does not name a pull request" in capsys.readouterr().err
    monkeypatch.delenv("SIGNOFF_GITHUB_TOKEN")
    _open_pull(gh, "genuine-fix")
    assert main(_verify(clone, 1)) == 2
    assert "GitHub is not configured" in capsys.readouterr().err


def test_revisions_are_required_without_github(setup: tuple[GitHubStandIn, Path],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _, clone = setup
    assert main(["repair", "verify", "--repo", str(clone), "--harness", HARNESS, "--expect", "x",
                 "--base", "main"]) == 2
    assert "pass --base and --candidate, or --github" in capsys.readouterr().err
