"""A local forge: bare git repositories with change requests, reviews and merges, on one machine.

It behaves like a small GitHub: a change request is a branch with a head SHA; a push to it moves
the head; reviews name the commit they reviewed; a merge creates a merge commit on main (refused
when the named head is not the current head, as GitHub's merge API does). Every change is recorded
in the ledger (case `desk/forge/<repo>/<n>`) together with the webhook it causes, written into the
outbox in the same transaction; `deliver()` sends the deliveries, signed, in GitHub's format.
The forge enforces no review policy: that is the desk's job, from the webhooks.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signoff import git
from signoff.desk import webhooks
from signoff.desk.model import DeskEvent
from signoff.desk.records import (
    ChangeRequest,
    ChangeRequestMerged,
    ChangeRequestOpened,
    ChangeRequestPushed,
    ChangeRequestReviewed,
    forge_fold,
)
from signoff.kernel.errors import ConflictError, NotFoundError, UsageError
from signoff.ledger import Job, NewJob, Outbox, SqlLedger, Worker

TOPIC = "desk.forge.webhook"
OWNER = webhooks.LOCAL_OWNER
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
Deliver = Callable[[dict[str, str], bytes], Any]


_IDENTITY = git.Identity("signoff forge", "forge@signoff.invalid")


def _git(repo: Path, *args: str) -> str:
    return git.output(repo, *args, env=_IDENTITY.env(), fix="check the forge repository")


class Forge:
    def __init__(self, root: Path, ledger: SqlLedger, secret: bytes) -> None:
        self.root = Path(root)
        self.ledger = ledger
        self.secret = secret

    # -- repositories --------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        if not _NAME.match(name):
            raise UsageError(f"repository name {name!r} is not valid", "use lower-case letters, digits, . _ -")
        return self.root / f"{name}.git"

    def create_repo(self, name: str, source: Path, message: str = "initial import") -> str:
        """A bare repository whose main holds the files of `source` (one commit)."""
        bare = self.path(name)
        if bare.exists():
            raise ConflictError(f"forge repository {name} already exists", "pick another name or reuse it")
        if not source.is_dir():
            raise NotFoundError(f"source folder {source} not found", "pass the folder to import")
        self.root.mkdir(parents=True, exist_ok=True)
        _git(self.root, "init", "-q", "--bare", "-b", "main", str(bare))
        with tempfile.TemporaryDirectory(prefix="signoff-forge-") as tmp:
            work = Path(tmp) / "w"
            shutil.copytree(source, work, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ruff_cache",
                                                                    "node_modules"))
            _git(work, "init", "-q", "-b", "main")
            _git(work, "add", "-A")
            _git(work, "commit", "-q", "-m", message)
            _git(work, "push", "-q", str(bare), "main")
        return self.head(name)

    def exists(self, name: str) -> bool:
        return self.path(name).is_dir()

    def head(self, name: str, branch: str = "main") -> str:
        return _git(self.path(name), "rev-parse", f"refs/heads/{branch}")

    def default_branch(self, name: str) -> str:
        """The branch merges land on (the local forge's repositories have one: main)."""
        return "main"

    def fetch(self, name: str, *shas: str) -> None:
        """Make the commits readable here (the local forge holds every commit already)."""

    def has_commit(self, name: str, sha: str) -> bool:
        return git.has_commit(self.path(name), sha)

    def contains(self, name: str, deployed: str, merge: str) -> bool:
        """Does `deployed` contain `merge` (git ancestry)? False when either commit is unknown."""
        if not (self.has_commit(name, deployed) and self.has_commit(name, merge)):
            return False
        return git.is_ancestor(self.path(name), merge, deployed)

    def tree(self, name: str, commit: str) -> str:
        return _git(self.path(name), "rev-parse", f"{commit}^{{tree}}")

    def changed_paths(self, name: str, base: str, head: str) -> list[str]:
        return sorted({c.path for c in git.changed_paths(self.path(name), base, head)})

    def diff(self, name: str, base: str, head: str) -> str:
        return git.diff_text(self.path(name), base, head)

    def known_tree(self, name: str, sha: str) -> str | None:
        """The tree of a commit this machine has seen, even if the forge has dropped it since."""
        if not git.has_commit(self.path(name), sha):
            return None
        return self.tree(name, sha)

    def commit_with_tree(self, name: str, tree: str, limit: int = 200, branch: str = "main") -> str | None:
        """The newest of the last `limit` commits of `branch` whose tree is `tree`."""
        for line in _git(self.path(name), "log", f"-{limit}", "--format=%H %T", f"refs/heads/{branch}").splitlines():
            sha, _, commit_tree = line.partition(" ")
            if commit_tree == tree:
                return sha
        return None

    def read(self, name: str, commit: str, path: str) -> str | None:
        data = git.read_file_at(self.path(name), commit, path)
        return data.decode("utf-8", errors="replace") if data is not None else None

    def commit(self, name: str, parent: str, files: dict[str, str], message: str, author: str, branch: str) -> str:
        """A commit of whole files on top of `parent`, stored as the branch's head."""
        return git.commit_files(self.path(name), parent, files, message,
                                author=git.Identity(author, f"{author}@forge.invalid"), ref=f"refs/heads/{branch}")

    # -- change requests -------------------------------------------------------------------------

    def _case(self, name: str, number: int) -> str:
        return f"desk/forge/{name}/{number}"

    def change(self, name: str, number: int) -> dict[str, Any]:
        cr = forge_fold.over(ChangeRequest(), self.ledger.read(self._case(name, number))).cr
        if not cr:
            raise NotFoundError(f"change request {name}#{number} not found", "list them with `signoff desk forge list`")
        return cr

    def changes(self, name: str) -> list[dict[str, Any]]:
        out = []
        for cid in self.ledger.case_ids(f"desk/forge/{name}/"):
            out.append(self.change(name, int(cid.rsplit("/", 1)[1])))
        return sorted(out, key=lambda c: c["number"])

    def _record(self, name: str, number: int, expected: int | None, event: DeskEvent, hook_event: str,
                payload: dict[str, Any]) -> str:
        delivery = str(uuid.uuid4())
        body = json.dumps(payload, sort_keys=True)
        self.ledger.append(self._case(name, number), expected, [event.new_event()],
                           jobs=[NewJob(f"forge:{delivery}", TOPIC, {"event": hook_event, "delivery": delivery,
                                                                     "body": body})])
        return delivery

    def _payload(self, name: str, action: str, cr: dict[str, Any], sender: dict[str, Any]) -> dict[str, Any]:
        return {"action": action, "number": cr["number"], "pull_request": webhooks.pull_request(OWNER, name, cr),
                "repository": webhooks.repository(OWNER, name), "sender": sender}

    def open_change(self, name: str, branch: str, base: str, title: str, author: str, assignee: str,
                    body: str = "", author_type: str = "Bot") -> dict[str, Any]:
        head = self.head(name, branch)
        number = self.ledger.next_number(f"desk.forge.{name}")
        cr = {"number": number, "branch": branch, "base": base, "head": head, "title": title, "body": body,
              "author": author, "author_type": author_type, "assignees": [assignee], "draft": True}
        self._record(name, number, 0, ChangeRequestOpened(cr=cr), "pull_request",
                     self._payload(name, "opened", cr, webhooks.user(author, author_type)))
        return cr

    def push(self, name: str, number: int, files: dict[str, str], message: str, author: str,
             author_type: str = "User") -> str:
        """A new commit on the change request's branch (moves its head: approvals no longer apply)."""
        cr = self.change(name, number)
        if cr.get("merged"):
            raise ConflictError(f"{name}#{number} is already merged", "open a new change request")
        version = self.ledger.version(self._case(name, number))
        head = self.commit(name, cr["head"], files, message, author, cr["branch"])
        cr["head"] = head
        self._record(name, number, version, ChangeRequestPushed(head=head, by=author), "pull_request",
                     self._payload(name, "synchronize", cr, webhooks.user(author, author_type)))
        return head

    def review(self, name: str, number: int, login: str, state: str = "approved", user_type: str = "User",
               commit_id: str | None = None, body: str = "") -> dict[str, Any]:
        if state not in ("approved", "changes_requested", "commented"):
            raise UsageError(f"review state {state!r} is not known", "use approved, changes_requested or commented")
        cr = self.change(name, number)
        version = self.ledger.version(self._case(name, number))
        review = {"id": self.ledger.next_number(f"desk.forge.{name}.review"), "user": webhooks.user(login, user_type),
                  "state": state, "commit_id": commit_id or cr["head"], "body": body,
                  "author_association": "MEMBER"}
        payload = self._payload(name, "submitted", cr, webhooks.user(login, user_type)) | {"review": review}
        self._record(name, number, version, ChangeRequestReviewed(review=review), "pull_request_review",
                     payload)
        return review

    def merge(self, name: str, number: int, login: str, user_type: str = "User", sha: str | None = None) -> str:
        """Merge into main with a merge commit. `sha`, when given, must be the current head."""
        cr = self.change(name, number)
        if cr.get("merged"):
            raise ConflictError(f"{name}#{number} is already merged", "nothing to do")
        if sha is not None and sha != cr["head"]:
            raise ConflictError(f"head of {name}#{number} is {cr['head'][:12]}, not {sha[:12]}",
                                "review the new head first")
        version = self.ledger.version(self._case(name, number))
        bare = self.path(name)
        main = self.head(name)
        tree = _git(bare, "merge-tree", "--write-tree", main, cr["head"]).splitlines()[0]
        merge_commit = _git(bare, "commit-tree", tree, "-p", main, "-p", cr["head"], "-m",
                            f"Merge change request #{number} from {cr['branch']}")
        _git(bare, "update-ref", "refs/heads/main", merge_commit, main)
        cr.update({"merged": True, "merge_commit": merge_commit, "merged_by": {"login": login, "type": user_type}})
        self._record(name, number, version, ChangeRequestMerged(
            merge_commit=merge_commit, merged_by={"login": login, "type": user_type}, head=cr["head"]),
            "pull_request", self._payload(name, "closed", cr, webhooks.user(login, user_type)))
        return merge_commit

    def deployment_status(self, name: str, sha: str, environment: str, url: str, creator: str,
                          state: str = "success") -> str:
        """A deployment status event, as GitHub sends when a recorder marks a deployment."""
        number = self.ledger.next_number(f"desk.forge.{name}.deployment")
        payload = {"action": "created",
                   "deployment_status": {"id": number, "state": state, "environment": environment,
                                         "environment_url": url, "creator": webhooks.user(creator, "Bot")},
                   "deployment": {"id": number, "sha": sha, "ref": "main", "task": "deploy",
                                  "environment": environment, "creator": webhooks.user(creator, "Bot")},
                   "repository": webhooks.repository(OWNER, name), "sender": webhooks.user(creator, "Bot")}
        delivery = str(uuid.uuid4())
        self.ledger.enqueue([NewJob(f"forge:{delivery}", TOPIC, {"event": "deployment_status",
                                                                 "delivery": delivery,
                                                                 "body": json.dumps(payload, sort_keys=True)})])
        return delivery

    def reviews(self, name: str, number: int) -> list[dict[str, Any]]:
        return list(self.change(name, number).get("reviews", []))

    def deploy_problem(self, name: str, sha: str) -> str | None:
        """Why the forge's checks do not vouch for deploying `sha`: the local forge runs no CI."""
        return None

    # -- delivery --------------------------------------------------------------------------------

    def deliver(self, target: Deliver, limit: int = 1000) -> int:
        """Send pending deliveries to `target(headers, body)`, signed; at-least-once (the desk
        refuses a delivery id it has seen, so a redelivery is harmless)."""
        sent = 0

        def send(job: Job) -> None:
            nonlocal sent
            body = job.payload["body"].encode()
            target(webhooks.headers_for(job.payload["event"], job.payload["delivery"], self.secret, body), body)
            sent += 1

        # A failed delivery is retried with backoff, as GitHub does.
        worker = Worker(Outbox(self.ledger, lease_seconds=60), {TOPIC: send})
        while sent < limit and worker.run_once():
            pass
        return sent
