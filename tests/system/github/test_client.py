"""The GitHub client against the documented-format stand-in: auth, pagination, rate limits, ETags,
errors. Waits go through an injected sleep, so nothing here sleeps for real."""

from __future__ import annotations

import http.server
import subprocess
import threading
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from signoff.github import AppAuth, GitHubClient, Repo, TokenAuth, push_branch
from signoff.github.client import UnknownCommit
from signoff.kernel.errors import NotFoundError, RefusedError, UnavailableError, UsageError
from tests.support.github_standin import Fault, GitHubStandIn

FULL = "octo-org/shoplite"


def _client(gh: GitHubStandIn, token: str = "github_pat_good", **kw: object) -> tuple[GitHubClient, list[float]]:
    waits: list[float] = []
    return GitHubClient(TokenAuth(token), gh.url, sleep=waits.append, **kw), waits  # type: ignore[arg-type]


def _app(gh: GitHubStandIn) -> AppAuth:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    gh.add_app("123456", public, 42)
    return AppAuth("123456", pem, 42)


def _exchanges(gh: GitHubStandIn) -> int:
    return sum(1 for r in gh.requests if r["path"].endswith("/access_tokens"))


def test_a_bad_token_is_a_refusal_with_githubs_message(github: GitHubStandIn) -> None:
    client, _ = _client(github, "github_pat_wrong")
    with pytest.raises(RefusedError) as exc:
        Repo(client, FULL).info()
    assert "401" in exc.value.message and "Bad credentials" in exc.value.message
    with pytest.raises(UsageError):
        TokenAuth("has space")


def test_app_jwt_is_exchanged_once_and_refreshed_before_expiry(github: GitHubStandIn) -> None:
    auth = _app(github)
    client = GitHubClient(auth, github.url)
    repo = Repo(client, FULL)
    assert repo.info()["full_name"] == FULL
    repo.info()
    assert _exchanges(github) == 1  # cached for its hour
    github.token_lifetime = 200  # tokens now expire inside the refresh margin: every use needs a fresh one
    short = Repo(GitHubClient(_app(github), github.url), FULL)
    short.info()
    short.info()
    assert _exchanges(github) == 3
    sent = [r["headers"]["authorization"] for r in github.requests if r["path"] == f"/repos/{FULL}"]
    assert all(s.startswith("Bearer ghs_") for s in sent)


def test_a_jwt_from_the_wrong_key_is_refused(github: GitHubStandIn) -> None:
    good = _app(github)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    with pytest.raises(RefusedError, match="installation token"):
        Repo(GitHubClient(AppAuth(good.app_id, other, 42), github.url), FULL).info()
    with pytest.raises(UsageError):
        AppAuth("1", "not a key", 1)


def test_pagination_follows_link_headers(github: GitHubStandIn) -> None:
    github.repos[FULL].pulls[1] = {"number": 1}
    github.repos[FULL].reviews[1] = [{"id": i, "state": "COMMENTED", "user": {"login": f"u{i}", "type": "User"}}
                                     for i in range(250)]
    client, _ = _client(github)
    reviews = Repo(client, FULL).reviews(1)
    assert [r["id"] for r in reviews] == list(range(250))
    pages = [r for r in github.requests if r["path"].endswith("/reviews")]
    assert len(pages) == 3 and "page=3" in pages[-1]["query"]


def test_a_next_link_to_another_host_is_not_followed(github: GitHubStandIn) -> None:
    github.repos[FULL].pulls[1] = {"number": 1}
    github.faults.append(Fault("GET", rf"/repos/{FULL}/pulls/1/reviews", 200, [],
                               {"link": '<https://evil.example/steal?page=2>; rel="next"'}))
    client, _ = _client(github)
    with pytest.raises(UnavailableError, match="another host"):
        Repo(client, FULL).reviews(1)


def test_truncated_and_short_listings_fail(github: GitHubStandIn) -> None:
    client, _ = _client(github)
    sha = Repo(client, FULL).commit("main")["sha"]  # type: ignore[index]
    github.faults.append(Fault("GET", rf"/repos/{FULL}/commits/{sha}/check-runs", 200,
                               {"total_count": 1, "check_runs": [{"id": 1, "name": "ci"}]}, truncate=True))
    with pytest.raises(UnavailableError, match="cut short"):
        Repo(client, FULL).check_runs(sha)
    github.faults.append(Fault("GET", rf"/repos/{FULL}/commits/{sha}/check-runs", 200,
                               {"total_count": 5, "check_runs": [{"id": 1, "name": "ci"}]}))
    with pytest.raises(UnavailableError, match="listed 1 of the 5"):
        Repo(client, FULL).check_runs(sha)


def test_primary_rate_limit_waits_for_the_reset(github: GitHubStandIn) -> None:
    client, waits = _client(github)
    reset = int(time.time()) + 20
    github.faults.append(Fault("GET", rf"/repos/{FULL}", 403, {"message": "API rate limit exceeded for user ID 1."},
                               {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}))
    assert Repo(client, FULL).info()["full_name"] == FULL
    assert len(waits) == 1 and 15 <= waits[0] <= 22


def test_a_wait_longer_than_allowed_is_a_clear_error(github: GitHubStandIn) -> None:
    client, waits = _client(github, max_wait=60.0)
    github.faults.append(Fault("GET", rf"/repos/{FULL}", 429, {"message": "API rate limit exceeded"},
                               {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 3000)}))
    with pytest.raises(UnavailableError) as exc:
        Repo(client, FULL).info()
    assert "more than the 60 s allowed" in exc.value.message and "try again after" in (exc.value.fix or "")
    assert waits == []


@pytest.mark.parametrize("status, headers, message, expected", [
    (403, {"retry-after": "7"}, "You have exceeded a secondary rate limit.", 7.0),
    (429, {"retry-after": "3"}, "You have exceeded a secondary rate limit.", 3.0),
    (403, {}, "You have triggered an abuse detection mechanism. Please wait a few minutes.", 60.0),
    (403, {}, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", 60.0),
])
def test_secondary_limits_and_abuse_detection_back_off(github: GitHubStandIn, status: int,
                                                        headers: dict[str, str], message: str,
                                                        expected: float) -> None:
    client, waits = _client(github, max_wait=300.0)
    github.faults.append(Fault("GET", rf"/repos/{FULL}", status, {"message": message}, headers))
    assert Repo(client, FULL).info()["full_name"] == FULL
    assert waits == [expected]


def test_repeated_secondary_limits_back_off_exponentially(github: GitHubStandIn) -> None:
    client, waits = _client(github, max_wait=300.0)
    for _ in range(3):
        github.faults.append(Fault("GET", rf"/repos/{FULL}", 403, {"message": "secondary rate limit"}))
    Repo(client, FULL).info()
    assert waits == [60.0, 120.0, 240.0]


def test_errors_keep_githubs_words(github: GitHubStandIn) -> None:
    client, _ = _client(github)
    repo = Repo(client, FULL)
    with pytest.raises(NotFoundError):
        Repo(client, "octo-org/nope").info()
    github.faults.append(Fault("GET", rf"/repos/{FULL}", 403, {"message": "Resource not accessible by integration"}))
    with pytest.raises(RefusedError, match="not accessible by integration"):
        repo.info()
    with pytest.raises(UsageError, match=r"Validation Failed \(missing_field\)"):
        repo.create_pull("t", "", "main", "b")
    assert repo.commit("0" * 40) is None
    with pytest.raises(UsageError):
        Repo(client, "not a repo")


def test_server_errors_are_retried_then_reported(github: GitHubStandIn) -> None:
    client, waits = _client(github)
    github.faults.append(Fault("GET", rf"/repos/{FULL}", 502, {"message": "Server Error"}))
    assert Repo(client, FULL).info()["full_name"] == FULL and waits == [1.0]
    for _ in range(4):
        github.faults.append(Fault("GET", rf"/repos/{FULL}", 503, {"message": "Service Unavailable"}))
    with pytest.raises(UnavailableError, match="503"):
        Repo(client, FULL).info()


def test_conditional_requests_use_etags(github: GitHubStandIn) -> None:
    client, _ = _client(github)
    repo = Repo(client, FULL)
    first = repo.info()
    left = github.remaining
    assert repo.info() == first
    last = [r for r in github.requests if r["path"] == f"/repos/{FULL}"][-1]
    assert last["headers"].get("if-none-match", "").startswith('"')
    assert github.remaining == left  # a 304 costs nothing against the limit


def test_compare_and_commits_fail_closed_on_unknown_commits(github: GitHubStandIn) -> None:
    client, _ = _client(github)
    repo = Repo(client, FULL)
    head = repo.commit("main")
    assert head is not None
    assert repo.compare(head["sha"], head["sha"]) == "identical"
    with pytest.raises(NotFoundError):
        repo.compare(head["sha"], "f" * 40)


def test_a_commit_github_does_not_have_is_a_typed_not_found_and_any_other_refusal_stays_one(
        github: GitHubStandIn) -> None:
    """GitHub says "no such commit" with a 422 and a message: the client names it once (UnknownCommit, a
    NotFoundError), so no caller reads message text; another 422 on the same path is not taken for it."""
    client, _ = _client(github)
    repo = Repo(client, FULL)
    with pytest.raises(UnknownCommit, match="No commit found"):
        client.request("GET", f"/repos/{FULL}/commits/{'e' * 40}")
    assert repo.commit("e" * 40) is None
    github.faults.append(Fault("GET", rf"/repos/{FULL}/commits/main$", 422,
                               {"message": "Validation Failed", "errors": [{"code": "invalid"}]}))
    with pytest.raises(UsageError, match="Validation Failed") as refused:
        repo.commit("main")
    assert not isinstance(refused.value, NotFoundError)


def test_a_branch_is_pushed_with_the_token_and_a_draft_opened(github: GitHubStandIn, tmp_path: Path) -> None:
    auth = _app(github)
    client = GitHubClient(auth, github.url)
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(github.repos[FULL].path), str(work)], check=True)
    (work / "app.py").write_text("x = 2\n")
    subprocess.run(["git", "-C", str(work), "-c", "user.name=f", "-c", "user.email=f@example.invalid",
                    "commit", "-qam", "fix"], check=True)
    commit = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    push_branch(client, work, FULL, "signoff/BUG-0001", commit, git_url=github.url)
    assert github.git(FULL, "rev-parse", "refs/heads/signoff/BUG-0001") == commit
    repo = Repo(client, FULL)
    pr = repo.create_pull("Fix BUG-0001", "signoff/BUG-0001", "main", "body", draft=True)
    assert pr["draft"] and pr["head"]["sha"] == commit
    assert [a["login"] for a in repo.assign(pr["number"], ["alice"])["assignees"]] == ["alice"]
    with pytest.raises(UsageError, match="already exists"):
        repo.create_pull("Fix BUG-0001", "signoff/BUG-0001", "main", "body")
    # the token is never on the command line nor stored in the checkout's configuration
    assert "ghs_" not in (work / ".git" / "config").read_text()


def test_a_checkout_that_rewrites_the_url_does_not_receive_the_token(github: GitHubStandIn, tmp_path: Path) -> None:
    """The checkout's own config redirects GitHub's URL (`url.<base>.insteadOf`) to a server the
    attacker runs: git may go there, the installation token must not."""
    seen: list[str] = []

    class Listener(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization") or "")
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        client = GitHubClient(_app(github), github.url)
        work = tmp_path / "work"
        subprocess.run(["git", "clone", "-q", str(github.repos[FULL].path), str(work)], check=True)
        subprocess.run(["git", "-C", str(work), "config", f"url.http://127.0.0.1:{evil.server_address[1]}/.insteadOf",
                        f"{github.url}/"], check=True)
        with pytest.raises(UnavailableError):
            push_branch(client, work, FULL, "signoff/x", "HEAD", git_url=github.url)
    finally:
        evil.shutdown()
    assert seen, "the rewritten URL was not contacted, so the test proves nothing"
    assert all("Basic" not in h for h in seen)


def test_a_push_with_a_bad_token_fails_without_leaking_it(github: GitHubStandIn, tmp_path: Path) -> None:
    client, _ = _client(github, "github_pat_wrong")
    work = tmp_path / "w"
    subprocess.run(["git", "clone", "-q", str(github.repos[FULL].path), str(work)], check=True)
    with pytest.raises(UnavailableError) as exc:
        push_branch(client, work, FULL, "signoff/x", "HEAD", git_url=github.url)
    assert "github_pat_wrong" not in exc.value.message
    with pytest.raises(UsageError):
        push_branch(client, work, FULL, "../evil", "HEAD", git_url=github.url)
