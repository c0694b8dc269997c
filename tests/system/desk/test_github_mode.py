"""The desk in GitHub mode, against the documented-format stand-in (tests/support/github_standin.py):
the fixer's change becomes a draft pull request (a real `git push` through `git http-backend`, then
the API), reviews are read from the API and from webhooks, ancestry comes from the compare API, a
deployment needs green required checks from a push to the default branch, and rewritten history is
observed, never approved. GitHub's errors surface as errors and leave the desk's state untouched.

Rate-limit waits go through an injected sleep, so nothing here sleeps for real."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient

from signoff.demo.shoplite_deploy import serve_commit
from signoff.desk import webhooks
from signoff.desk.config import DeskConfig
from signoff.desk.github_forge import GitHubForge
from signoff.desk.workflow import Desk, forge_for
from signoff.github import AppAuth, GitHubClient
from signoff.kernel.errors import NotFoundError, RefusedError, UnavailableError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from tests.support.fixtures.desk import Template, World, _from
from tests.support.github_standin import Fault, GitHubStandIn

FULL = "octo-org/shoplite"
TOKEN = "github_pat_desk"
PATH = "shoplite/checkout.py"


@dataclass
class GitHubWorld:
    w: World
    gh: GitHubStandIn
    waits: list[float] = field(default_factory=list)

    @property
    def desk(self) -> Desk:
        return self.w.desk

    @property
    def stored(self) -> dict[str, int]:
        """The version of every ledger case: what 'state untouched' compares."""
        return {c: self.w.ledger.version(c) for c in self.w.ledger.case_ids("desk/")}

    def fix(self, attempt: int = 1) -> object:
        base = self.w.bug().reproduction["base"]
        self.desk.forge.fetch(FULL, base)
        text = self.desk.forge.read(FULL, base, PATH) or ""
        fixed = text.replace("return round(amount, 2)", "return round(max(amount, 0.0), 2)")
        return self.desk.submit_fix(self.w.actor("engineering"), self.w.bug_id, 1, attempt, {PATH: fixed},
                                    "never below zero")

    def send(self, event: str, payload: dict[str, object]) -> dict[str, object]:
        body = json.dumps(payload).encode()
        headers = webhooks.headers_for(event, f"d-{len(self.gh.requests)}-{event}", self.desk.webhook_secret(), body)
        return self.desk.receive_webhook(headers, body)

    def record(self, commit: str, *urls: str) -> dict[str, object]:
        return self.desk.record_deployment(self.w.actor("recorder"), FULL, commit, "production", urls[0],
                                           also=urls[1:])


def _app(gh: GitHubStandIn) -> AppAuth:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    gh.add_app("123456", key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode(), 42)
    return AppAuth("123456", pem, 42)


@pytest.fixture
def ghw(templates: dict[str, Template], tmp_path: Path) -> Iterator[GitHubWorld]:
    """BUG-0001 confirmed (the fixer's turn), its repository on the GitHub stand-in (the same commits
    as the local template), and the desk in GitHub mode as a GitHub App installation."""
    w = _from(templates["reproduced"], tmp_path)
    with GitHubStandIn(tmp_path / "github") as gh:
        gh.add_repo(FULL, w.desk.forge.path("shoplite"))
        gh.repos[FULL].required = ["ci"]
        out = GitHubWorld(w, gh)
        client = GitHubClient(_app(gh), gh.url, sleep=out.waits.append, max_wait=30)
        forge = GitHubForge(w.settings.home / "desk" / "forge", w.ledger, webhooks.signing_secret(w.settings),
                            client, gh.url)
        w.desk = Desk(w.ledger, w.settings, forge, DeskConfig(forge="github", repo=FULL, repos_allowed=(FULL,)))
        w.desk.confirm(w.reporter("first"), "yes", bug_id=w.bug_id)
        yield out
        client.close()


@pytest.fixture
def in_review(ghw: GitHubWorld) -> GitHubWorld:
    ghw.fix()
    assert ghw.w.bug().state == "in_review", ghw.w.bug().summary()
    return ghw


def _merge(g: GitHubWorld, login: str = "alice") -> str:
    change = g.w.bug().change
    g.gh.review(FULL, change["number"], login)
    g.desk.sync_change(g.w.actor("alice"), g.w.bug_id)
    merge = g.gh.merge(FULL, change["number"], login)
    out = g.send("pull_request", g.gh.webhook(FULL, "pull_request", "closed", change["number"], login))
    assert out["outcome"] == "merged", out
    return merge


# -- configuration -------------------------------------------------------------------------------------

def test_github_mode_is_chosen_by_config_and_needs_a_full_name(tmp_path: Path) -> None:
    home = tmp_path / ".signoff"
    (tmp_path / "signoff.toml").write_text(
        '[desk]\nforge = "github"\nrepo = "octo-org/shoplite"\nrepos_allowed = ["octo-org/shoplite"]\n'
        '[github]\ntoken = "github_pat_x"\napi_url = "http://127.0.0.1:9"\n')
    settings = Settings.load(home=home, env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    try:
        assert isinstance(forge_for(settings, ledger), GitHubForge)
    finally:
        ledger.close()
    with pytest.raises(UsageError, match="full name"):
        DeskConfig(forge="github", repo="shoplite").validate()
    with pytest.raises(UsageError, match="forge"):
        DeskConfig(forge="gitlab").validate()


# -- the draft pull request -----------------------------------------------------------------------------

def test_the_fix_becomes_a_draft_pull_request_pushed_with_the_token_and_assigned(ghw: GitHubWorld) -> None:
    ghw.fix()
    bug = ghw.w.bug()
    assert bug.state == "in_review"
    change = bug.change
    pr = ghw.gh.repos[FULL].pulls[change["number"]]
    assert pr["draft"] is True and pr["state"] == "open"
    assert [a["login"] for a in pr["assignees"]] == ["alice"]
    assert pr["base"]["ref"] == "main" and pr["head"]["ref"] == change["branch"]
    # The branch arrived through a real git push and is exactly the measured head.
    assert ghw.gh.git(FULL, "rev-parse", f"refs/heads/{change['branch']}") == change["head"] == pr["head"]["sha"]
    assert ghw.gh.git(FULL, "show", f"{change['head']}:tests/test_bug_0001.py") == bug.reproduction[
        "test_source"].strip()
    # Pushed with the App's installation token (from the JWT exchange), as x-access-token.
    pushes = [r for r in ghw.gh.requests if r["path"].endswith("/git-receive-pack")]
    assert pushes
    installation_tokens = set(ghw.gh.installation_tokens)
    for r in pushes:
        scheme, _, value = r["headers"]["authorization"].partition(" ")
        user, _, token = base64.b64decode(value).decode().partition(":")
        assert scheme == "Basic" and user == "x-access-token" and token in installation_tokens
    api = [r for r in ghw.gh.requests if r["path"] == f"/repos/{FULL}/pulls" and r["method"] == "POST"]
    assert api and all(r["headers"]["authorization"].removeprefix("Bearer ") in installation_tokens for r in api)
    # The token is in no URL the stand-in saw and not in the mirror's configuration.
    for token in installation_tokens:
        assert not any(token in r["path"] + r["query"] for r in ghw.gh.requests)
        assert token not in (ghw.desk.forge.path(FULL) / "config").read_text()
    # The change's paths and diff are read from the pull request's commits.
    assert ghw.desk.changed_paths(bug) == [PATH, "tests/test_bug_0001.py"]
    assert "max(amount, 0.0)" in ghw.desk.change_diff(ghw.w.actor("engineering"), ghw.w.bug_id)


def test_people_merge_on_github_not_through_the_desk(in_review: GitHubWorld) -> None:
    g = in_review
    g.desk.approve(g.w.actor("alice"), g.w.bug_id, g.w.bug().change["head"])
    with pytest.raises(UsageError, match="merge on GitHub"):
        g.desk.merge(g.w.actor("alice"), g.w.bug_id)
    assert g.gh.repos[FULL].pulls[1]["merged"] is False


@pytest.mark.parametrize("fault", [
    Fault("POST", f"/repos/{FULL}/pulls", 401, {"message": "Bad credentials"}),
    Fault("POST", f"/repos/{FULL}/pulls", 403, {"message": "Resource not accessible by integration"}),
    Fault("POST", f"/repos/{FULL}/pulls", 404, {"message": "Not Found"}),
    Fault("POST", f"/repos/{FULL}/pulls", 422, {"message": "Validation Failed",
                                                "errors": [{"resource": "PullRequest", "code": "custom",
                                                            "message": "Draft pull requests are not supported"}]}),
    Fault("POST", f"/repos/{FULL}/pulls", 403, {"message": "API rate limit exceeded"},
          {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "4102444800"}),
    Fault("POST", f"/repos/{FULL}/pulls", 403, {"message": "You have exceeded a secondary rate limit"},
          {"retry-after": "3600"}),
    Fault("GET", f"/repos/{FULL}/pulls", 200, [{"number": 1}] * 40, truncate=True),
], ids=["401", "403", "404", "422", "primary-rate-limit", "secondary-rate-limit", "truncated-page"])
def test_github_errors_opening_the_pull_request_are_clear_and_record_nothing(ghw: GitHubWorld,
                                                                             fault: Fault) -> None:
    before = ghw.stored
    ghw.gh.faults.append(fault)
    with pytest.raises((RefusedError, NotFoundError, UsageError, UnavailableError)) as exc:
        ghw.fix()
    message = exc.value.message
    assert "GitHub" in message and exc.value.fix
    if fault.status == 422:
        assert "Draft pull requests are not supported" in message
    if "rate" in str(fault.body):
        assert "try again after" in exc.value.fix and ghw.waits == []  # too long to wait: no silent hang
    bug = ghw.w.bug()
    assert bug.state == "fixing" and bug.change is None and bug.fix_attempts == 0
    assert ghw.stored == before
    # The same attempt succeeds once GitHub answers, with one pull request.
    ghw.fix()
    assert ghw.w.bug().state == "in_review" and len(ghw.gh.repos[FULL].pulls) == 1


def test_a_failure_between_opening_and_assigning_is_repaired_by_the_retry(ghw: GitHubWorld) -> None:
    ghw.gh.faults.append(Fault("POST", f"/repos/{FULL}/issues/1/assignees", 403,
                               {"message": "Resource not accessible by integration"}))
    with pytest.raises(RefusedError):
        ghw.fix()
    assert ghw.w.bug().change is None and ghw.gh.repos[FULL].pulls[1]["assignees"] == []
    ghw.fix()
    assert len(ghw.gh.repos[FULL].pulls) == 1
    assert [a["login"] for a in ghw.gh.repos[FULL].pulls[1]["assignees"]] == ["alice"]
    assert ghw.w.bug().change["number"] == 1


# -- reviews, from the API and from webhooks -----------------------------------------------------------------

def test_reviews_read_from_the_api_follow_the_webhook_rules(in_review: GitHubWorld) -> None:
    g = in_review
    head = g.w.bug().change["head"]
    g.gh.review(FULL, 1, "dependabot[bot]", kind="Bot")
    g.gh.review(FULL, 1, "stranger", association="CONTRIBUTOR")
    g.gh.review(FULL, 1, "carol", state="CHANGES_REQUESTED")
    g.gh.review(FULL, 1, "bob", commit_id="0" * 40)
    alice = g.gh.review(FULL, 1, "alice")
    out = g.desk.sync_change(g.w.actor("alice"), g.w.bug_id)
    assert out["approvals"] == ["alice"] and len(out["ignored"]) == 4
    # The same review again, by the API and by its webhook, is one approval.
    g.desk.sync_change(g.w.actor("alice"), g.w.bug_id)
    hook = g.send("pull_request_review", g.gh.webhook(FULL, "pull_request_review", "submitted", 1, "alice",
                                                       review=alice))
    assert hook["outcome"] == "approval_recorded"
    bug = g.w.bug()
    assert [a["login"] for a in bug.approvals] == ["alice"] and bug.approvals[0]["head"] == head
    with pytest.raises(RefusedError):
        g.desk.sync_change(g.w.actor("engineering"), g.w.bug_id)


def test_a_push_seen_through_the_api_clears_approvals(in_review: GitHubWorld) -> None:
    g = in_review
    g.gh.review(FULL, 1, "alice")
    g.desk.sync_change(g.w.actor("alice"), g.w.bug_id)
    assert len(g.w.bug().approvals) == 1
    old = g.w.bug().change["head"]
    # Someone pushes to the branch on GitHub; no webhook arrives.
    tree = g.gh.git(FULL, "rev-parse", f"{old}^{{tree}}")
    new = subprocess.run(["git", "-C", str(g.gh.repos[FULL].path), "-c", "user.name=m", "-c",
                          "user.email=m@example.invalid", "commit-tree", tree, "-p", old, "-m", "same tree"],
                         check=True, capture_output=True, text=True).stdout.strip()
    g.gh.force_push(FULL, g.w.bug().change["branch"], new)
    out = g.desk.sync_change(g.w.actor("alice"), g.w.bug_id)
    bug = g.w.bug()
    assert out["head"] == new and bug.change["head"] == new
    assert bug.approvals == []  # alice reviewed the old head; the same tree is not the same commit


def test_a_truncated_review_listing_records_nothing(in_review: GitHubWorld) -> None:
    g = in_review
    g.gh.review(FULL, 1, "alice")
    before = g.stored
    g.gh.faults.append(Fault("GET", f"/repos/{FULL}/pulls/1/reviews", 200, [{"id": 1}] * 30, truncate=True))
    with pytest.raises(UnavailableError, match="cut short"):
        g.desk.sync_change(g.w.actor("alice"), g.w.bug_id)
    assert g.stored == before and g.w.bug().approvals == []


# -- releases: required checks, ancestry, same build --------------------------------------------------------

def test_a_green_push_run_on_main_releases_the_merge(in_review: GitHubWorld) -> None:
    g = in_review
    merge = _merge(g)
    g.gh.workflow_run(FULL, merge)
    with serve_commit(g.gh.repos[FULL].path, merge) as live:
        out = g.record(merge, live.url)
    assert out["outcome"] == "deployment_recorded" and out["released"] == [g.w.bug_id], out
    assert g.w.bug().state == "released"
    assert any(r["path"].startswith(f"/repos/{FULL}/compare/") for r in g.gh.requests)


@pytest.mark.parametrize("ci, why", [
    ({"event": "pull_request"}, "'pull_request' run"),
    ({"head_repo": "mallory/shoplite"}, "mallory/shoplite"),
    ({"branch": "release-candidate"}, "branch 'release-candidate'"),
    ({"conclusion": "failure"}, "completed/failure"),
    ({"conclusion": None, "status": "in_progress"}, "in_progress"),
    ({"name": "lint"}, "'ci' has no run"),
], ids=["pull-request-run", "fork", "other-branch", "failed", "still-running", "other-check"])
def test_a_deployment_needs_the_required_checks_green_from_a_push_to_main(
        in_review: GitHubWorld, ci: dict[str, object], why: str) -> None:
    g = in_review
    merge = _merge(g)
    g.gh.workflow_run(FULL, merge, **ci)  # type: ignore[arg-type]
    with serve_commit(g.gh.repos[FULL].path, merge) as live:
        out = g.record(merge, live.url)
    assert out["outcome"] == "deployment_rejected" and why in out["why"], out
    assert g.w.bug().state == "merged"


def test_a_green_pull_request_run_does_not_outvote_a_failed_push_run(in_review: GitHubWorld) -> None:
    g = in_review
    merge = _merge(g)
    g.gh.workflow_run(FULL, merge, conclusion="failure")
    g.gh.workflow_run(FULL, merge, event="pull_request")
    g.gh.workflow_run(FULL, merge, head_repo="mallory/shoplite")
    with serve_commit(g.gh.repos[FULL].path, merge) as live:
        out = g.record(merge, live.url)
    assert out["outcome"] == "deployment_rejected" and "failure" in out["why"]


def test_a_check_that_cannot_be_attributed_or_an_unprotected_branch_fails_closed(in_review: GitHubWorld) -> None:
    g = in_review
    merge = _merge(g)
    # A check run named like the required check, posted by some App outside any workflow run.
    g.gh.repos[FULL].check_runs.append({"id": g.gh.next_id(), "head_sha": merge, "name": "ci",
                                        "status": "completed", "conclusion": "success",
                                        "app": {"slug": "someone"}, "check_suite": {"id": 1}})
    with serve_commit(g.gh.repos[FULL].path, merge) as live:
        out = g.record(merge, live.url)
        assert out["outcome"] == "deployment_rejected" and "cannot be attributed" in out["why"]
        g.gh.workflow_run(FULL, merge)
        g.gh.repos[FULL].required = None
        out = g.record(merge, live.url)
        assert out["outcome"] == "deployment_rejected" and "requires no status checks" in out["why"]
    assert g.w.bug().state == "merged"


def test_errors_reading_the_checks_record_nothing(in_review: GitHubWorld) -> None:
    g = in_review
    merge = _merge(g)
    g.gh.workflow_run(FULL, merge)
    before = g.stored
    for fault, error in [
        (Fault("GET", f"/repos/{FULL}/branches/main/protection/required_status_checks", 403,
               {"message": "Resource not accessible by integration"}), RefusedError),
        (Fault("GET", f"/repos/{FULL}/actions/runs", 200, {"total_count": 300, "workflow_runs": []}),
         UnavailableError),
        (Fault("GET", f"/repos/{FULL}/commits/{merge}/check-runs", 429, {"message": "slow down"},
               {"retry-after": "600"}), UnavailableError),
        (Fault("GET", f"/repos/{FULL}/commits/{merge}", 401, {"message": "Bad credentials"}), RefusedError),
    ]:
        g.gh.faults.append(fault)
        with pytest.raises(error):
            g.record(merge, "http://127.0.0.1:9")
        assert g.stored == before and g.w.bug().state == "merged"


def test_ancestry_comes_from_the_compare_api(in_review: GitHubWorld) -> None:
    g = in_review
    base = g.w.bug().change["base"]
    _merge(g)
    g.gh.workflow_run(FULL, base)
    with serve_commit(g.gh.repos[FULL].path, base) as live:
        out = g.record(base, live.url)
    # The base is older than the merge: GitHub says "behind", so nothing is released.
    assert out["outcome"] == "deployment_recorded" and out["released"] == []
    assert g.w.bug().state == "merged"


def test_a_commit_github_no_longer_has_fails_closed(in_review: GitHubWorld) -> None:
    g = in_review
    head = g.w.bug().change["head"]
    g.gh.force_push(FULL, g.w.bug().change["branch"], g.w.bug().change["base"])
    g.gh.repos[FULL].pulls[1]["state"] = "closed"
    subprocess.run(["git", "-C", str(g.gh.repos[FULL].path), "update-ref", "-d", "refs/pull/1/head"], check=True)
    subprocess.run(["git", "-C", str(g.gh.repos[FULL].path), "gc", "-q", "--prune=now"], check=True)
    assert g.desk.forge.known_tree(FULL, head) is not None  # the mirror still has it
    out = g.record(head, "http://127.0.0.1:9")
    assert out["outcome"] == "deployment_rejected" and "cannot be found" in out["why"]


def test_every_endpoint_must_serve_the_same_assets(in_review: GitHubWorld, tmp_path: Path) -> None:
    g = in_review
    merge = _merge(g)
    g.gh.workflow_run(FULL, merge)
    # A stale endpoint: its health names the new commit, but it serves the old code.
    stale_repo = tmp_path / "stale"
    subprocess.run(["git", "clone", "-q", "--bare", str(g.gh.repos[FULL].path), str(stale_repo)], check=True)
    base = g.w.bug().change["base"]
    env_args = ["-c", "user.name=s", "-c", "user.email=s@example.invalid"]
    tree = g.gh.git(FULL, "rev-parse", f"{base}^{{tree}}")
    stale = subprocess.run(["git", *env_args, "-C", str(stale_repo), "commit-tree", tree, "-m", "old build"],
                           check=True, capture_output=True, text=True).stdout.strip()
    g.w.with_config(forge="github", repo=FULL, repos_allowed=(FULL,),
                    assets=("/checkout?price=200&quantity=1&coupon=SAVE300",))
    with serve_commit(g.gh.repos[FULL].path, merge) as live, serve_commit(stale_repo, stale) as old:
        old_health = _ImpersonatedHealth(old.url, merge)
        try:
            out = g.record(merge, live.url, old_health.url)
            assert out["outcome"] == "deployment_rejected" and "not the same build" in out["why"], out
            assert g.w.bug().state == "merged"
            with serve_commit(g.gh.repos[FULL].path, merge) as twin:
                out = g.record(merge, live.url, twin.url)
        finally:
            old_health.close()
    assert out["outcome"] == "deployment_recorded" and out["released"] == [g.w.bug_id], out


class _ImpersonatedHealth:
    """A front for `upstream` whose /health claims `commit` (a stale cache that was told the new SHA)."""

    def __init__(self, upstream: str, commit: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/health":
                    data = json.dumps({"service": "shoplite", "commit": commit}).encode()
                else:
                    with urllib.request.urlopen(upstream + self.path, timeout=5) as r:
                        data = r.read()
                self.send_response(200)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- rewritten history ---------------------------------------------------------------------------------

def test_a_rewritten_merge_is_observed_and_never_approved_again(in_review: GitHubWorld) -> None:
    g = in_review
    merge = _merge(g)  # the desk keeps the merge commit in its mirror when it records the merge
    bug = g.w.bug()
    approvals = list(bug.approvals)
    # Someone rewrites main: the merge commit is replaced by a commit with the same tree.
    tree = g.gh.git(FULL, "rev-parse", f"{merge}^{{tree}}")
    parent = g.gh.git(FULL, "rev-parse", f"{merge}^1")
    twin = subprocess.run(["git", "-C", str(g.gh.repos[FULL].path), "-c", "user.name=r", "-c",
                           "user.email=r@example.invalid", "commit-tree", tree, "-p", parent, "-m", "squashed"],
                          check=True, capture_output=True, text=True).stdout.strip()
    g.gh.force_push(FULL, "main", twin)
    assert not g.desk.forge.has_commit(FULL, merge)
    seen = g.desk.observe_history(g.w.actor("alice"))
    assert seen == [{"bug_id": g.w.bug_id, "old": merge, "new": twin, "tree": tree}]
    assert g.desk.observe_history(g.w.actor("alice")) == []  # observed once
    after = g.w.bug()
    assert [r["new"] for r in after.rewrites] == [twin]
    assert after.state == "merged" and after.merge["merge_commit"] == merge and after.approvals == approvals
    assert [e["type"] for e in after.log].count("approval.recorded") == 1
    # A green deployment of the new commit releases nothing: it was never approved or merged.
    g.gh.workflow_run(FULL, twin)
    with serve_commit(g.gh.repos[FULL].path, twin) as live:
        out = g.record(twin, live.url)
    assert out["outcome"] == "deployment_recorded" and out["released"] == []
    assert g.w.bug().state == "merged" and len(g.w.bug().rewrites) == 1
    with pytest.raises(RefusedError):
        g.desk.observe_history(g.w.actor("engineering"))


# -- the operator's commands -----------------------------------------------------------------------------

def test_cli_in_github_mode_with_githubs_refusals_as_clear_errors(home: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.cli.main import main
    from tests.system.github.conftest import make_source

    with GitHubStandIn(tmp_path / "github") as gh:
        gh.tokens.add(TOKEN)
        gh.add_repo(FULL, make_source(tmp_path / "src"))
        gh.repos[FULL].required = ["ci"]
        config = tmp_path / "signoff.toml"

        def configure(token: str) -> None:
            config.write_text(f'[desk]\nforge = "github"\nrepo = "{FULL}"\nrepos_allowed = ["{FULL}"]\n'
                              f'[github]\ntoken = "{token}"\napi_url = "{gh.url}"\ngit_url = "{gh.url}"\n'
                              "max_wait = 1\n")
        configure(TOKEN)
        assert main(["desk", "init", "--json"]) == 0
        tokens = json.loads(capsys.readouterr().out)["tokens"]
        assert main(["desk", "history", "--token", tokens["alice"], "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == {"rewritten": []}
        assert main(["desk", "sync", "BUG-0001", "--token", tokens["alice"]]) != 0
        main_sha = gh.git(FULL, "rev-parse", "refs/heads/main")
        assert main(["desk", "deploy-record", "--commit", main_sha, "--url", "http://127.0.0.1:9",
                     "--token", tokens["recorder"], "--json"]) == 1
        assert "'ci' has no run" in capsys.readouterr().out
        capsys.readouterr()
        for token, fault in [("github_pat_revoked", None),
                             (TOKEN, Fault("GET", f"/repos/{FULL}/commits/{main_sha}", 403,
                                           {"message": "API rate limit exceeded"},
                                           {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "4102444800"}))]:
            configure(token)
            if fault:
                gh.faults.append(fault)
            assert main(["desk", "deploy-record", "--commit", main_sha, "--url", "http://127.0.0.1:9",
                         "--token", tokens["recorder"]]) not in (0, 1)
            err = capsys.readouterr().err
            assert "Traceback" not in err and "error:" in err and "fix:" in err and "GitHub" in err, err
        settings = Settings.load(home=home, env={}, cwd=tmp_path)
        ledger = SqlLedger.open(settings)
        try:
            events = ledger.read(f"desk/deploy/{FULL}")
        finally:
            ledger.close()
        assert [e.type for e in events] == ["deployment.rejected"]  # the refusals wrote nothing


def test_githubs_deployment_status_webhook_goes_through_the_same_checks(in_review: GitHubWorld) -> None:
    g = in_review
    merge = _merge(g)
    with serve_commit(g.gh.repos[FULL].path, merge) as live:
        def status(number: int) -> dict[str, object]:
            owner, name = FULL.split("/")
            bot = {"login": "deployer[bot]", "type": "Bot"}
            return {"action": "created",
                    "deployment_status": {"id": number, "state": "success", "environment": "production",
                                          "environment_url": live.url, "creator": bot},
                    "deployment": {"id": number, "sha": merge, "ref": "main", "environment": "production",
                                   "creator": bot},
                    "repository": {"name": name, "full_name": FULL, "owner": {"login": owner}}, "sender": bot}
        out = g.send("deployment_status", status(1))
        assert out["outcome"] == "deployment_rejected" and "'ci' has no run" in out["why"]
        g.gh.workflow_run(FULL, merge)
        out = g.send("deployment_status", status(2))
    assert out["outcome"] == "deployment_recorded" and out["released"] == [g.w.bug_id]


def test_http_sync_and_history_answer_with_the_error_shape(in_review: GitHubWorld) -> None:
    from signoff.desk.routes import routers
    from signoff.rooms.http.app import create_app

    g = in_review
    app = create_app(g.w.ledger, g.w.settings, routers=routers(g.w.settings))
    app.state.desk = g.desk
    http = TestClient(app)

    def bearer(who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {g.w.tokens[who]}"}

    sync = f"/desk/bugs/{g.w.bug_id}/sync"
    assert http.post(sync).status_code == 401
    assert http.post(sync, headers=bearer("engineering")).status_code == 403
    assert http.post("/desk/history", headers=bearer("engineering")).status_code == 403
    g.gh.review(FULL, 1, "alice")
    before = g.stored
    g.gh.faults.append(Fault("GET", f"/repos/{FULL}/pulls/1/reviews", 200, [{"id": 1}] * 30, truncate=True))
    cut = http.post(sync, headers=bearer("alice"))
    assert cut.status_code == 503  # GitHub's fault, not the caller's: retry later
    assert "cut short" in cut.json()["detail"] and cut.json()["fix"]
    assert g.stored == before
    ok = http.post(sync, headers=bearer("alice"))
    assert ok.status_code == 200 and ok.json()["approvals"] == ["alice"]
    assert http.post("/desk/history", headers=bearer("recorder")).json() == {"rewritten": []}
