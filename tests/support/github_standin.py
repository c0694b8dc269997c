"""A stand-in for GitHub's REST API and git-over-HTTPS, for tests (GitHub cannot be reached here).

It speaks the documented formats of the endpoints signoff uses (REST API version 2022-11-28: shapes,
status codes, `Link` pagination, `x-ratelimit-*` headers, ETags and 304s, the error bodies
`{"message", "documentation_url", "errors"}`), backed by real bare git repositories; pushes go
through real `git http-backend` with Basic auth as `x-access-token:<token>`. Faults (401, 403, 404,
422, primary and secondary rate limits, abuse detection, truncated pages) are injected per request.
It is a documented-format stand-in, not GitHub: what it answers was written from GitHub's docs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt

DOCS = "https://docs.github.com/rest"


@dataclass
class Fault:
    method: str
    path: str  # a regular expression matched against the path
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    truncate: bool = False  # send the answer's first half only


@dataclass
class RepoState:
    full_name: str
    path: Path
    default_branch: str = "main"
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    check_runs: list[dict[str, Any]] = field(default_factory=list)
    workflow_runs: list[dict[str, Any]] = field(default_factory=list)
    required: list[str] | None = None


class GitHubStandIn:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.repos: dict[str, RepoState] = {}
        self.tokens: set[str] = set()
        self.apps: dict[str, tuple[str, int]] = {}  # app id -> (public key PEM, installation id)
        self.installation_tokens: dict[str, float] = {}  # token -> expiry
        self.faults: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self.remaining = 5000
        self.page_size_cap = 100
        self.token_lifetime = 3600.0
        self._lock = threading.Lock()
        self._ids = 1000
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> GitHubStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- set-up --------------------------------------------------------------------------------

    def next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def add_repo(self, full_name: str, source: Path) -> RepoState:
        bare = self.root / f"{full_name}.git"
        bare.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--bare", str(source), str(bare)], check=True)
        subprocess.run(["git", "-C", str(bare), "config", "http.receivepack", "true"], check=True)
        # GitHub serves any commit reachable from its refs when a client asks for it by SHA.
        subprocess.run(["git", "-C", str(bare), "config", "uploadpack.allowReachableSHA1InWant", "true"], check=True)
        state = RepoState(full_name, bare)
        self.repos[full_name] = state
        return state

    def add_app(self, app_id: str, public_pem: str, installation_id: int) -> None:
        self.apps[app_id] = (public_pem, installation_id)

    def git(self, full_name: str, *args: str) -> str:
        r = subprocess.run(["git", "-C", str(self.repos[full_name].path), *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""

    # -- what happens on GitHub without signoff (people, Actions), in the documented shapes -------

    def review(self, full_name: str, number: int, login: str, state: str = "APPROVED", kind: str = "User",
               association: str = "MEMBER", commit_id: str | None = None) -> dict[str, Any]:
        """A review as GET /pulls/{n}/reviews lists it (state in capitals, as the REST API gives it)."""
        pr = self.repos[full_name].pulls[number]
        review = {"id": self.next_id(), "user": _user(login, kind), "body": "", "state": state,
                  "commit_id": commit_id or _head(self, self.repos[full_name], pr),
                  "author_association": association, "submitted_at": _now(),
                  "html_url": f"{pr['html_url']}#pullrequestreview-1"}
        self.repos[full_name].reviews.setdefault(number, []).append(review)
        return review

    def merge(self, full_name: str, number: int, login: str, kind: str = "User") -> str:
        """Merge a pull request with a merge commit, as the merge button does."""
        repo = self.repos[full_name]
        pr = repo.pulls[number]
        head = _head(self, repo, pr)
        base = self.git(full_name, "rev-parse", f"refs/heads/{pr['base']['ref']}")
        env = {**os.environ, "GIT_AUTHOR_NAME": login, "GIT_AUTHOR_EMAIL": f"{login}@users.noreply.github.com",
               "GIT_COMMITTER_NAME": "GitHub", "GIT_COMMITTER_EMAIL": "noreply@github.com"}

        def run(*args: str) -> str:
            return subprocess.run(["git", "-C", str(repo.path), *args], check=True, capture_output=True,
                                  text=True, env=env).stdout.strip()
        tree = run("merge-tree", "--write-tree", base, head).splitlines()[0]
        merge = run("commit-tree", tree, "-p", base, "-p", head, "-m",
                    f"Merge pull request #{number} from {pr['head']['ref']}")
        run("update-ref", f"refs/heads/{pr['base']['ref']}", merge, base)
        pr.update({"state": "closed", "merged": True, "merged_by": _user(login, kind), "merge_commit_sha": merge,
                   "merged_at": _now()})
        pr["head"]["sha"] = head
        return merge

    def force_push(self, full_name: str, branch: str, sha: str) -> None:
        """Someone force-pushes `branch` to `sha`; the commits it drops are garbage-collected at once
        (GitHub does it later; the API then no longer finds them)."""
        path = str(self.repos[full_name].path)
        subprocess.run(["git", "-C", path, "update-ref", f"refs/heads/{branch}", sha], check=True)
        for pr in self.repos[full_name].pulls.values():  # a dropped merge no longer pins its pull ref
            if pr.get("merged"):
                subprocess.run(["git", "-C", path, "update-ref", "-d", f"refs/pull/{pr['number']}/head"], check=True)
        subprocess.run(["git", "-C", path, "reflog", "expire", "--expire=now", "--all"], check=True)
        subprocess.run(["git", "-C", path, "gc", "-q", "--prune=now"], check=True)

    def webhook(self, full_name: str, event: str, action: str, number: int, sender: str,
                sender_type: str = "User", review: dict[str, Any] | None = None) -> dict[str, Any]:
        """The payload GitHub sends for a pull request event (webhook events and payloads docs)."""
        repo = self.repos[full_name]
        pr = repo.pulls[number]
        _head(self, repo, pr)
        owner, name = full_name.split("/")
        payload: dict[str, Any] = {"action": action, "number": number, "pull_request": pr,
                                   "repository": {"id": 1, "name": name, "full_name": full_name,
                                                  "owner": _user(owner, "Organization")},
                                   "sender": _user(sender, sender_type)}
        if review is not None:
            payload["review"] = review | {"state": review["state"].lower()}  # webhooks use lower case
        return payload

    def workflow_run(self, full_name: str, sha: str, name: str = "ci", conclusion: str | None = "success",
                     event: str = "push", branch: str | None = None, head_repo: str | None = None,
                     status: str = "completed") -> dict[str, Any]:
        """A GitHub Actions workflow run of `sha` and the check run its job reports (the check run
        belongs to the workflow run's check suite, as on GitHub)."""
        repo = self.repos[full_name]
        suite = self.next_id()
        run = {"id": self.next_id(), "name": name, "head_branch": branch or repo.default_branch, "head_sha": sha,
               "event": event, "status": status, "conclusion": conclusion, "check_suite_id": suite,
               "repository": {"full_name": full_name}, "head_repository": {"full_name": head_repo or full_name},
               "html_url": f"https://github.com/{full_name}/actions/runs/{suite}"}
        repo.workflow_runs.append(run)
        repo.check_runs.append({"id": self.next_id(), "head_sha": sha, "name": name, "status": status,
                                "conclusion": conclusion, "app": {"slug": "github-actions"},
                                "check_suite": {"id": suite}, "pull_requests": [], "output": {}})
        return run

    def token_valid(self, token: str) -> bool:
        if token in self.tokens:
            return True
        expiry = self.installation_tokens.get(token)
        return expiry is not None and expiry > time.time()


def _handler(gh: GitHubStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            gh.requests.append({"method": method, "path": split.path, "query": split.query,
                                "headers": {k.lower(): v for k, v in self.headers.items()}})
            if ".git/" in split.path:
                self._git(method, split.path, split.query, raw)
                return
            for fault in list(gh.faults):
                if fault.method == method and re.fullmatch(fault.path, split.path):
                    gh.faults.remove(fault)
                    self._answer(fault.status, fault.body, fault.headers, truncate=fault.truncate)
                    return
            try:
                status, body, headers = self._route(method, split.path, parse_qs(split.query), raw)
            except _Answer as a:
                status, body, headers = a.status, a.body, {}
            self._answer(status, body, headers)

        def _token(self) -> str:
            auth = self.headers.get("authorization", "")
            scheme, _, value = auth.partition(" ")
            return value.strip() if scheme.lower() in ("bearer", "token") else ""

        def _route(self, method: str, path: str, query: dict[str, list[str]],
                   raw: bytes) -> tuple[int, Any, dict[str, str]]:
            m = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
            if m and method == "POST":
                return self._installation_token(int(m.group(1)))
            if not gh.token_valid(self._token()):
                raise _Answer(401, {"message": "Bad credentials", "documentation_url": DOCS})
            body = json.loads(raw) if raw else None
            m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
            if not m or m.group(1) not in gh.repos:
                raise _Answer(404, {"message": "Not Found", "documentation_url": DOCS})
            repo, rest = gh.repos[m.group(1)], m.group(2) or ""
            return _repo_route(gh, repo, method, rest, query, body)

        def _installation_token(self, installation: int) -> tuple[int, Any, dict[str, str]]:
            token = self._token()
            try:
                claims = jwt.decode(token, options={"verify_signature": False})
                public, inst = gh.apps[str(claims["iss"])]
                claims = jwt.decode(token, public, algorithms=["RS256"], options={"require": ["iat", "exp", "iss"]})
            except (jwt.PyJWTError, KeyError):
                raise _Answer(401, {"message": "A JSON web token could not be decoded",
                                    "documentation_url": DOCS}) from None
            if claims["exp"] - claims["iat"] > 600:
                raise _Answer(401, {"message": "'Expiration time' claim ('exp') is too far in the future",
                                    "documentation_url": DOCS})
            if inst != installation:
                raise _Answer(404, {"message": "Not Found", "documentation_url": DOCS})
            value = "ghs_" + secrets.token_urlsafe(27)
            expires = time.time() + gh.token_lifetime
            gh.installation_tokens[value] = expires
            stamp = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            return 201, {"token": value, "expires_at": stamp, "permissions": {"contents": "write"},
                         "repository_selection": "selected"}, {}

        def _answer(self, status: int, body: Any, headers: dict[str, str], truncate: bool = False) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
            if status == 200 and self.command == "GET" and self.headers.get("if-none-match") == etag:
                status, data = 304, b""
            elif status != 304:
                gh.remaining = max(0, gh.remaining - 1)
            if truncate:
                data = data[: len(data) // 2]
            self.send_response(status)
            self.send_header("content-type", "application/json; charset=utf-8")
            self.send_header("x-github-api-version-selected", "2022-11-28")
            if "x-ratelimit-remaining" not in {k.lower() for k in headers}:
                self.send_header("x-ratelimit-limit", "5000")
                self.send_header("x-ratelimit-remaining", str(gh.remaining))
                self.send_header("x-ratelimit-reset", str(int(time.time()) + 3600))
                self.send_header("x-ratelimit-resource", "core")
            if status in (200, 304):
                self.send_header("etag", etag)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _git(self, method: str, path: str, query: str, raw: bytes) -> None:
            auth = self.headers.get("authorization", "")
            user, token = "", ""
            if auth.lower().startswith("basic "):
                user, _, token = base64.b64decode(auth[6:]).decode(errors="replace").partition(":")
            if user != "x-access-token" or not gh.token_valid(token):
                self.send_response(401)
                self.send_header("www-authenticate", 'Basic realm="GitHub"')
                self.send_header("content-length", "0")
                self.end_headers()
                return
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": str(gh.root),
                   "GIT_HTTP_EXPORT_ALL": "1", "REQUEST_METHOD": method, "PATH_INFO": path,
                   "QUERY_STRING": query, "REMOTE_USER": user, "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": self.headers.get("content-type", ""), "CONTENT_LENGTH": str(len(raw))}
            if self.headers.get("content-encoding"):
                env["HTTP_CONTENT_ENCODING"] = self.headers["content-encoding"]
            out = subprocess.run(["git", "http-backend"], input=raw, env=env, capture_output=True).stdout
            head, _, body = out.partition(b"\r\n\r\n")
            status = 200
            headers: list[tuple[str, str]] = []
            for line in head.decode().split("\r\n"):
                k, _, v = line.partition(":")
                if k.lower() == "status":
                    status = int(v.strip().split()[0])
                elif k:
                    headers.append((k, v.strip()))
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


class _Answer(Exception):
    def __init__(self, status: int, body: Any) -> None:
        self.status, self.body = status, body


def _user(login: str, kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": int(hashlib.sha256(login.encode()).hexdigest()[:6], 16), "type": kind}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _head(gh: GitHubStandIn, repo: RepoState, pr: dict[str, Any]) -> str:
    """An open pull request's head follows its branch, as on GitHub."""
    if pr.get("state") == "open":
        sha = gh.git(repo.full_name, "rev-parse", "--verify", "-q", f"refs/heads/{pr['head']['ref']}")
        if sha and sha != pr["head"]["sha"]:
            pr["head"]["sha"] = sha
            subprocess.run(["git", "-C", str(repo.path), "update-ref", f"refs/pull/{pr['number']}/head", sha],
                           check=True)
    return str(pr["head"]["sha"])


def _page(gh: GitHubStandIn, items: list[Any], query: dict[str, list[str]], path: str,
          key: str | None = None) -> tuple[int, Any, dict[str, str]]:
    per = min(int(query.get("per_page", ["30"])[0]), gh.page_size_cap)
    page = int(query.get("page", ["1"])[0])
    chunk = items[(page - 1) * per: page * per]
    headers: dict[str, str] = {}
    if page * per < len(items):
        rest = "&".join(f"{k}={v[0]}" for k, v in query.items() if k not in ("page", "per_page"))
        headers["link"] = (f'<{gh.url}{path}?per_page={per}&page={page + 1}{"&" + rest if rest else ""}>; '
                           f'rel="next", <{gh.url}{path}?per_page={per}&page={-(-len(items) // per)}>; rel="last"')
    body: Any = {"total_count": len(items), key: chunk} if key else chunk
    return 200, body, headers


def _repo_route(gh: GitHubStandIn, repo: RepoState, method: str, rest: str, query: dict[str, list[str]],
                body: Any) -> tuple[int, Any, dict[str, str]]:
    not_found = {"message": "Not Found", "documentation_url": DOCS}
    full = f"/repos/{repo.full_name}{rest}"
    if method == "GET" and rest == "":
        owner, name = repo.full_name.split("/")
        return 200, {"id": 1, "name": name, "full_name": repo.full_name, "owner": _user(owner, "Organization"),
                     "private": True, "default_branch": repo.default_branch}, {}
    m = re.fullmatch(r"/commits/([^/]+)", rest)
    if method == "GET" and m:
        sha = gh.git(repo.full_name, "rev-parse", "--verify", "-q", m.group(1) + "^{commit}")
        if not sha:
            raise _Answer(422, {"message": f"No commit found for SHA: {m.group(1)}", "documentation_url": DOCS})
        tree = gh.git(repo.full_name, "rev-parse", sha + "^{tree}")
        return 200, {"sha": sha, "commit": {"tree": {"sha": tree}, "message": gh.git(repo.full_name, "log", "-1",
                                                                                       "--format=%B", sha)}}, {}
    m = re.fullmatch(r"/compare/([0-9A-Za-z._/-]+)\.\.\.([0-9A-Za-z._/-]+)", rest)
    if method == "GET" and m:
        base = gh.git(repo.full_name, "rev-parse", "--verify", "-q", m.group(1) + "^{commit}")
        head = gh.git(repo.full_name, "rev-parse", "--verify", "-q", m.group(2) + "^{commit}")
        if not base or not head:
            raise _Answer(404, not_found)
        ahead = int(gh.git(repo.full_name, "rev-list", "--count", f"{base}..{head}"))
        behind = int(gh.git(repo.full_name, "rev-list", "--count", f"{head}..{base}"))
        status = ("identical" if ahead == behind == 0 else "ahead" if behind == 0 else
                  "behind" if ahead == 0 else "diverged")
        return 200, {"status": status, "ahead_by": ahead, "behind_by": behind, "total_commits": ahead,
                     "base_commit": {"sha": base}, "merge_base_commit": {"sha": gh.git(repo.full_name, "merge-base",
                                                                                       base, head)}}, {}
    if method == "POST" and rest == "/pulls":
        missing = [k for k in ("title", "head", "base") if not isinstance(body, dict) or not body.get(k)]
        if missing:
            raise _Answer(422, {"message": "Validation Failed", "documentation_url": DOCS,
                                "errors": [{"resource": "PullRequest", "field": k, "code": "missing_field"}
                                           for k in missing]})
        head_sha = gh.git(repo.full_name, "rev-parse", "--verify", "-q", f"refs/heads/{body['head']}")
        base_sha = gh.git(repo.full_name, "rev-parse", "--verify", "-q", f"refs/heads/{body['base']}")
        if not head_sha or not base_sha:
            raise _Answer(422, {"message": "Validation Failed", "documentation_url": DOCS,
                                "errors": [{"resource": "PullRequest", "field": "head", "code": "invalid"}]})
        if any(p["head"]["ref"] == body["head"] and p["state"] == "open" for p in repo.pulls.values()):
            owner = repo.full_name.split("/")[0]
            raise _Answer(422, {"message": "Validation Failed", "documentation_url": DOCS, "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"A pull request already exists for {owner}:{body['head']}."}]})
        number = len(repo.pulls) + 1
        pr = {"id": gh.next_id(), "number": number, "state": "open", "draft": bool(body.get("draft")),
              "title": body["title"], "body": body.get("body"), "user": _user("signoff-desk[bot]", "Bot"),
              "head": {"ref": body["head"], "sha": head_sha, "repo": {"full_name": repo.full_name}},
              "base": {"ref": body["base"], "sha": base_sha, "repo": {"full_name": repo.full_name}},
              "assignees": [], "merged": False,
              "html_url": f"https://github.com/{repo.full_name}/pull/{number}"}
        repo.pulls[number] = pr
        subprocess.run(["git", "-C", str(repo.path), "update-ref", f"refs/pull/{number}/head", head_sha], check=True)
        return 201, pr, {"location": f"{gh.url}/repos/{repo.full_name}/pulls/{number}"}
    if method == "GET" and rest == "/pulls":
        state = query.get("state", ["open"])[0]
        pulls = [p for n, p in sorted(repo.pulls.items()) if state == "all" or p["state"] == state]
        for p in pulls:
            _head(gh, repo, p)
        return _page(gh, pulls, query, full)
    m = re.fullmatch(r"/pulls/(\d+)", rest)
    if method == "GET" and m:
        pr = repo.pulls.get(int(m.group(1)))
        if pr is None:
            raise _Answer(404, not_found)
        _head(gh, repo, pr)
        return 200, pr, {}
    m = re.fullmatch(r"/issues/(\d+)/assignees", rest)
    if method == "POST" and m:
        pr = repo.pulls.get(int(m.group(1)))
        if pr is None:
            raise _Answer(404, not_found)
        pr["assignees"] = [_user(a) for a in body.get("assignees", [])]
        return 201, {"number": pr["number"], "assignees": pr["assignees"], "pull_request": {"url": pr["html_url"]}}, {}
    m = re.fullmatch(r"/pulls/(\d+)/reviews", rest)
    if method == "GET" and m:
        if int(m.group(1)) not in repo.pulls:
            raise _Answer(404, not_found)
        return _page(gh, repo.reviews.get(int(m.group(1)), []), query, full)
    m = re.fullmatch(r"/commits/([0-9a-f]{40})/check-runs", rest)
    if method == "GET" and m:
        runs = [r for r in repo.check_runs if r["head_sha"] == m.group(1)]
        return _page(gh, runs, query, full, "check_runs")
    if method == "GET" and rest == "/actions/runs":
        sha = query.get("head_sha", [""])[0]
        return _page(gh, [r for r in repo.workflow_runs if not sha or r["head_sha"] == sha], query, full,
                     "workflow_runs")
    m = re.fullmatch(r"/branches/([^/]+)/protection/required_status_checks", rest)
    if method == "GET" and m:
        if repo.required is None or m.group(1) != repo.default_branch:
            raise _Answer(404, {"message": "Branch not protected", "documentation_url": DOCS})
        return 200, {"strict": True, "contexts": list(repo.required),
                     "checks": [{"context": c, "app_id": 15368} for c in repo.required]}, {}
    if method == "POST" and rest == "/check-runs":
        if not isinstance(body, dict) or not body.get("name") or not body.get("head_sha"):
            raise _Answer(422, {"message": "Validation Failed", "documentation_url": DOCS,
                                "errors": [{"resource": "CheckRun", "code": "missing_field"}]})
        if not gh.git(repo.full_name, "rev-parse", "--verify", "-q", body["head_sha"] + "^{commit}"):
            raise _Answer(422, {"message": "No commit found for SHA: " + body["head_sha"], "documentation_url": DOCS})
        run = {"id": gh.next_id(), "head_sha": body["head_sha"], "name": body["name"],
               "status": body.get("status", "queued"), "conclusion": body.get("conclusion"),
               "details_url": body.get("details_url"), "external_id": body.get("external_id"),
               "output": body.get("output", {}), "app": {"slug": "signoff"}, "check_suite": {"id": gh.next_id()},
               "pull_requests": []}
        repo.check_runs.append(run)
        return 201, run, {}
    raise _Answer(404, not_found)
