"""The desk's forge on GitHub: pull requests, reviews, ancestry and required checks from GitHub's API.

The repository is named by its full name (`[desk] repo = "octo-org/shoplite"`). A local bare mirror
(`.signoff/desk/forge/github/<owner>/<name>.git`) holds the commits the sandbox measures and the
fixer's commit before it is pushed; it is fetched from GitHub (with the installation token) whenever
the desk needs the default branch or a commit it lacks, so nobody has to keep it fetched.

What GitHub decides, GitHub is asked: whether a commit exists (a commit GitHub no longer has fails
closed, whatever the mirror still holds), ancestry (the compare API: `ahead` or `identical`), the
head and reviews of a pull request, and the required checks of a commit. People merge on GitHub;
the desk records the merge from GitHub's signed webhook, as in the local mode.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from signoff import git
from signoff.desk import decisions
from signoff.desk.forge import Forge
from signoff.github import GitHubClient, Repo, fetch_commits, push_branch
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.ledger import SqlLedger

_FULL_NAME = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})")
_SHA = re.compile(r"[0-9a-f]{40}")
BRANCH_PREFIX = "desk/"  # the branches (and so the pull requests) the desk opens


class GitHubForge(Forge):
    def __init__(self, root: Path, ledger: SqlLedger, secret: bytes, client: GitHubClient,
                 git_url: str = "https://github.com") -> None:
        super().__init__(root, ledger, secret)
        self.client = client
        self.git_url = git_url
        self._default_branch: dict[str, str] = {}

    def repo(self, name: str) -> Repo:
        return Repo(self.client, name)

    # -- the mirror ------------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        m = _FULL_NAME.fullmatch(name)
        if not m or m.group(2) in (".", ".."):
            raise UsageError(f"{name!r} is not a GitHub repository's full name", 'set [desk] repo = "owner/name"')
        bare = self.root / "github" / m.group(1) / f"{m.group(2)}.git"
        if not bare.is_dir():
            bare.parent.mkdir(parents=True, exist_ok=True)
            git.output(bare.parent, "init", "-q", "--bare", str(bare), fix="check the desk's forge folder")
        return bare

    def _fetch(self, name: str, *refspecs: str) -> None:
        fetch_commits(self.client, self.path(name), name, list(refspecs), self.git_url)

    def fetch(self, name: str, *shas: str) -> None:
        self._have(name, *shas)

    def _have(self, name: str, *shas: str) -> None:
        """Fetch the commits the mirror lacks (GitHub serves any commit reachable from its refs)."""
        missing = [s for s in shas if not git.has_commit(self.path(name), s)]
        if missing:
            self._fetch(name, *missing)

    def default_branch(self, name: str) -> str:
        if name not in self._default_branch:
            self._default_branch[name] = str(self.repo(name).info()["default_branch"])
        return self._default_branch[name]

    # -- what the desk reads ---------------------------------------------------------------------

    def create_repo(self, name: str, source: Path, message: str = "initial import") -> str:
        raise UsageError("the desk does not create GitHub repositories", "create it on GitHub and install the App")

    def exists(self, name: str) -> bool:
        try:
            self.repo(name).info()
        except NotFoundError:
            return False
        return True

    def head(self, name: str, branch: str = "main") -> str:
        """The branch's head on GitHub, fetched into the mirror ("main" means the default branch)."""
        if branch == "main":
            branch = self.default_branch(name)
        self._fetch(name, f"+refs/heads/{branch}:refs/heads/{branch}")
        return git.output(self.path(name), "rev-parse", f"refs/heads/{branch}", fix="check the mirror")

    def has_commit(self, name: str, sha: str) -> bool:
        """Whether GitHub has the commit now; the mirror may keep commits GitHub dropped."""
        return bool(_SHA.fullmatch(sha)) and self.repo(name).commit(sha) is not None

    def contains(self, name: str, deployed: str, merge: str) -> bool:
        """GitHub's compare API: `deployed` contains `merge` when it is `ahead` of it or `identical`.
        An unknown commit on either side fails closed."""
        if not (_SHA.fullmatch(deployed) and _SHA.fullmatch(merge)):
            return False
        try:
            return self.repo(name).compare(merge, deployed) in ("ahead", "identical")
        except NotFoundError:
            return False

    def tree(self, name: str, commit: str) -> str:
        self._have(name, commit)  # a tree is the commit's content: the mirror's copy is as good as GitHub's
        return super().tree(name, commit)

    def changed_paths(self, name: str, base: str, head: str) -> list[str]:
        self._have(name, base, head)
        return super().changed_paths(name, base, head)

    def read(self, name: str, commit: str, path: str) -> str | None:
        self._have(name, commit)
        return super().read(name, commit, path)

    def diff(self, name: str, base: str, head: str) -> str:
        self._have(name, base, head)
        return super().diff(name, base, head)

    # -- pull requests ---------------------------------------------------------------------------

    def _cr(self, pr: dict[str, Any]) -> dict[str, Any]:
        return {"number": int(pr["number"]), "branch": pr["head"]["ref"], "head": pr["head"]["sha"],
                "base_branch": pr["base"]["ref"], "title": pr.get("title"), "draft": bool(pr.get("draft")),
                "assignees": [a["login"] for a in pr.get("assignees") or []], "url": pr.get("html_url"),
                "merged": bool(pr.get("merged")), "author": (pr.get("user") or {}).get("login")}

    def change(self, name: str, number: int) -> dict[str, Any]:
        return self._cr(self.repo(name).pull(number))

    def changes(self, name: str) -> list[dict[str, Any]]:
        """The desk's open pull requests. One that was opened but never assigned (a crash or an error
        in between) is left out, so the retried job opens it again, finds it, and assigns it."""
        out = [self._cr(pr) for pr in self.repo(name).pulls()]
        return sorted((c for c in out if c["branch"].startswith(BRANCH_PREFIX) and c["assignees"]),
                      key=lambda c: c["number"])

    def open_change(self, name: str, branch: str, base: str, title: str, author: str, assignee: str,
                    body: str = "", author_type: str = "Bot") -> dict[str, Any]:
        """Push the branch with the installation token, open a draft pull request against the
        default branch, and assign the human owner. Repeating it after a failure part-way finds
        the pull request it opened before."""
        if not branch.startswith(BRANCH_PREFIX):
            raise UsageError(f"branch {branch!r} is not a desk branch", f"desk branches start with {BRANCH_PREFIX}")
        mirror = self.path(name)
        head = git.output(mirror, "rev-parse", f"refs/heads/{branch}", fix="commit the fix first")
        push_branch(self.client, mirror, name, branch, head, self.git_url)
        repo = self.repo(name)
        existing = [pr for pr in repo.pulls() if pr["head"]["ref"] == branch]
        pr = existing[0] if existing else repo.create_pull(title, branch, self.default_branch(name), body, draft=True)
        repo.assign(int(pr["number"]), [assignee])
        cr = self._cr(repo.pull(int(pr["number"])))
        return cr | {"base": base}

    def push(self, name: str, number: int, files: dict[str, str], message: str, author: str,
             author_type: str = "User") -> str:
        """A new commit on the pull request's branch, pushed to GitHub (its head moves)."""
        cr = self.change(name, number)
        self._have(name, cr["head"])
        head = self.commit(name, cr["head"], files, message, author, cr["branch"])
        push_branch(self.client, self.path(name), name, cr["branch"], head, self.git_url)
        return head

    def reviews(self, name: str, number: int) -> list[dict[str, Any]]:
        return self.repo(name).reviews(number)

    def merge(self, name: str, number: int, login: str, user_type: str = "User", sha: str | None = None) -> str:
        raise UsageError("in GitHub mode people merge on GitHub",
                         "merge the pull request on GitHub; the desk records it from GitHub's webhook")

    def review(self, name: str, number: int, login: str, state: str = "approved", user_type: str = "User",
               commit_id: str | None = None, body: str = "") -> dict[str, Any]:
        raise UsageError("in GitHub mode people review on GitHub", "review the pull request on GitHub")

    # -- releases --------------------------------------------------------------------------------

    def deploy_problem(self, name: str, sha: str) -> str | None:
        """Why GitHub's required checks do not vouch for deploying `sha` (None: they do)."""
        branch = self.default_branch(name)
        repo = self.repo(name)
        return decisions.required_checks_problem(sha, repo.required_checks(branch), repo.check_runs(sha),
                                                 repo.workflow_runs(sha), name, branch)

    def commit_with_tree(self, name: str, tree: str, limit: int = 200, branch: str = "main") -> str | None:
        branch = self.default_branch(name) if branch == "main" else branch
        self.head(name, branch)
        return super().commit_with_tree(name, tree, limit, branch)
