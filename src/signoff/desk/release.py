"""Release: the trusted recorder's deployments, their signed evidence, and the bugs they release.

A deployment counts only for the desk's repository, an exact commit that exists (fail closed), the
production environment, and endpoints whose health check names the expected service and commit.
Every merged bug whose merge commit a recorded deployment contains is released; a deployment that
arrives before its merge is kept and reconciled when the merge is recorded (see review).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlparse

from signoff.desk import decisions
from signoff.desk.base import DeskBase, smoke_case
from signoff.desk.credentials import DeskCaller, require
from signoff.desk.model import Bug
from signoff.desk.records import DeploymentRecorded, DeploymentRejected, SmokeChecked
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, RefusedError

RELEASE_PREDICATE = "https://signoff.dev/desk/release/v1"
HealthCheck = Callable[[str, str, str], dict[str, Any]]


def health_check(url: str, service: str, commit: str, timeout: float = 5.0) -> dict[str, Any]:
    """GET <url>/health; ok only if it answers 200 with {"service": service, "commit": commit}."""
    parsed = urlparse(url or "")
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return {"ok": False, "why": f"deployment url {url!r} is not an http(s) url"}
    target = url.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(target, timeout=timeout) as resp:  # noqa: S310 -- scheme checked above
            status = resp.status
            body = resp.read(65_536)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return {"ok": False, "why": f"{target} did not answer: {exc}"}
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {"ok": False, "why": f"{target} did not answer JSON"}
    if status != 200 or not isinstance(data, dict):
        return {"ok": False, "why": f"{target} answered {status}"}
    if data.get("service") != service:
        return {"ok": False, "why": f"{target} names service {data.get('service')!r}, not {service!r}"}
    if data.get("commit") != commit:
        return {"ok": False, "why": f"{target} serves commit {str(data.get('commit'))[:12]}, not {commit[:12]}"}
    return {"ok": True, "url": target, "service": service, "commit": commit}


def asset_digests(url: str, paths: Sequence[str], timeout: float = 5.0) -> dict[str, Any]:
    """SHA-256 of each asset `url` serves at `paths`: {"ok", "digests"} or {"ok": False, "why"}."""
    digests: dict[str, str] = {}
    for path in paths:
        target = url.rstrip("/") + path
        try:
            with urllib.request.urlopen(target, timeout=timeout) as resp:  # noqa: S310 -- url checked by health
                status, body = resp.status, resp.read(10_000_000)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            return {"ok": False, "why": f"{target} did not answer: {exc}"}
        if status != 200:
            return {"ok": False, "why": f"{target} answered {status}"}
        digests[path] = sha256_bytes(body)
    return {"ok": True, "digests": digests}


def same_build(urls: Sequence[str], paths: Sequence[str]) -> dict[str, Any]:
    """Whether every endpoint serves the same bytes at every asset path (health alone names a commit,
    which a stale cache or a half-finished rollout can still claim)."""
    first: dict[str, str] | None = None
    for url in urls:
        got = asset_digests(url, paths)
        if not got["ok"]:
            return got
        if first is None:
            first = got["digests"]
            continue
        for path, digest in got["digests"].items():
            if digest != first[path]:
                return {"ok": False, "why": f"{url.rstrip('/')}{path} serves sha256 {digest[:12]}, but "
                                            f"{urls[0].rstrip('/')}{path} serves {first[path][:12]}: "
                                            "not the same build"}
    return {"ok": True, "digests": first or {}}


def acceptance_check(urls: Sequence[str], service: str, commit: str, assets: Sequence[str],
                     check_health: HealthCheck | None = None) -> dict[str, Any]:
    """The deployment check: every endpoint (say, the immutable URL and the public domain) answers
    its health check naming `service` and `commit`, and all serve the same bytes at `assets`. The
    recorder runs it before a deployment counts; the crew's smoke runs it again on the live release."""
    problem = None
    for target in urls:
        health = (check_health or health_check)(target, service, commit)
        if not health.get("ok"):
            problem = f"health check failed: {health.get('why')}"
            break
    same = same_build(urls, assets) if problem is None else {"ok": True}
    if not same["ok"]:
        problem = f"asset check failed: {same['why']}"
    out: dict[str, Any] = {"ok": problem is None, "urls": list(urls), "service": service, "commit": commit,
           "assets": same.get("digests", {})}
    return out | ({"why": problem} if problem else {})


def deploy_case(repo: str) -> str:
    return f"desk/deploy/{repo}"



class ReleaseSteps(DeskBase):
    def deployments(self, repo: str) -> list[dict[str, Any]]:
        """The recorded (accepted) deployments of `repo`, oldest first."""
        return [e.payload for e in self.ledger.read(deploy_case(repo)) if e.type == "deployment.recorded"]

    def deployment_containing(self, merge_commit: str) -> dict[str, Any] | None:
        """The latest recorded deployment of the desk's repository that contains `merge_commit`."""
        for dep in reversed(self.deployments(self.config.repo)):
            if self.forge.contains(self.config.repo, dep["commit"], merge_commit):
                return dict(dep)
        return None

    def record_deployment(self, actor: DeskCaller, repo: str, commit: str, environment: str, url: str,
                          key: str | None = None, check_health: HealthCheck | None = None,
                          also: Sequence[str] = ()) -> dict[str, Any]:
        """The trusted recorder: the exact commit must exist (fail closed), the environment must be
        production, the health endpoint must name the expected service and commit. The deployment is
        kept in the history; every merged bug whose merge it contains is released."""
        require(actor, "recorder", what="record a deployment")
        if repo != self.config.repo:
            raise RefusedError(f"repository {repo!r} is not the desk's repository", f"record {self.config.repo}")
        dcase = deploy_case(repo)
        problem = None
        health: dict[str, Any] = {}
        if not re.fullmatch(r"[0-9a-f]{40}", commit):
            problem = f"{commit!r} is not a full commit SHA"
        elif not self.forge.has_commit(repo, commit):
            problem = f"commit {commit[:12]} cannot be found in {repo}: failing closed"
        elif environment != self.config.production_environment:
            problem = f"environment {environment!r} is not {self.config.production_environment!r}"
        elif (ci := self.forge.deploy_problem(repo, commit)) is not None:
            problem = f"required checks: {ci}"
        else:
            health = acceptance_check([url, *also], self.config.service, commit, self.config.assets, check_health)
            problem = None if health["ok"] else health["why"]
            health.pop("why", None)
        if problem:
            self.ledger.append(dcase, None, [DeploymentRejected(
                commit=commit, environment=environment, url=url, reason=problem, by=actor.name).new_event()],
                idempotency_key=key)
            return {"outcome": "deployment_rejected", "why": problem}
        number = self.ledger.next_number(f"desk.deploy.{repo}")
        evidence = self.release_evidence(repo, commit, environment, [url, *also], actor.name, number)
        recorded = DeploymentRecorded(deployment_id=number, commit=commit, environment=environment, url=url,
                                      health=health, recorded_by=actor.name, evidence_kind="measured",
                                      evidence=evidence)
        dep = recorded.payload()
        self.ledger.append(dcase, None, [recorded.new_event()],
                           idempotency_key=(key + ":dep") if key else None)
        released = []
        for bug in self.bugs():
            if bug.state != "merged" or bug.merge is None:
                continue
            merge_commit = bug.merge["merge_commit"]
            if not self.forge.contains(repo, commit, merge_commit):
                self.observe_rewrite(bug)
                continue
            cmd = decisions.Release(merge_commit, dep)
            self.decide(bug.bug_id, cmd,
                        idempotency_key=(f"{key}:{bug.bug_id}" if key else f"desk:release:{bug.bug_id}:{number}"))
            released.append(bug.bug_id)
        return {"outcome": "deployment_recorded", "deployment_id": number, "released": released}

    def record_smoke(self, actor: DeskCaller, bug_id: str, round_: int, result: dict[str, Any],
                     key: str | None = None) -> None:
        """What the crew's smoke measured on a released bug's live deployment (`acceptance_check`),
        kept beside the release (case `desk/smoke/<bug>`). It changes no state: the reporters say
        whether the fix works for them; this records whether the release still answers as deployed."""
        require(actor, "engineering", what="record a smoke check")
        bug = self.bug(bug_id)
        if bug.release is None or bug.round != round_:
            raise ConflictError(f"{bug_id} has no release in round {round_} (state {bug.state})",
                                "the smoke checks the current release only")
        fields = ("ok", "why", "urls", "service", "commit", "assets", "checked_at", "seconds")
        payload = {k: result[k] for k in fields if k in result} | {
            "round": round_, "deployment_id": bug.release.get("deployment_id"), "evidence_kind": "measured",
            "by": str(result.get("by", actor.name))}
        self.ledger.append(smoke_case(bug_id), None, [SmokeChecked(**payload).new_event()],
                           idempotency_key=f"desk:smoke:{key}" if key else None)

    def observe_rewrite(self, bug: Bug) -> dict[str, Any] | None:
        """When the bug's recorded merge commit is gone from the forge and a commit of main with the
        same tree took its place (a rebase or a force-push), record a `history.rewritten`
        observation. It is only that: the merge, its approvals and any release stay with the old
        commit, and nothing is released by the new one; a person decides what happens next."""
        if bug.merge is None:
            return None
        old = str(bug.merge["merge_commit"])
        repo = self.config.repo
        if self.forge.has_commit(repo, old):
            return None
        tree = self.forge.known_tree(repo, old)
        new = self.forge.commit_with_tree(repo, tree) if tree else None
        if tree is None or new is None or new == old or any(r["new"] == new for r in bug.rewrites):
            return None
        self.decide(bug.bug_id, decisions.ObserveRewrite("merge_commit", old, new, tree),
                    idempotency_key=f"desk:{bug.bug_id}:rewritten:{old}:{new}")
        return {"bug_id": bug.bug_id, "old": old, "new": new, "tree": tree}

    def observe_history(self, actor: DeskCaller) -> list[dict[str, Any]]:
        """Look for rewritten history under every merged bug (see observe_rewrite)."""
        require(actor, "owner", "recorder", what="check the history")
        found = []
        for bug in self.bugs():
            if bug.state in ("merged", "released", "verified") and (seen := self.observe_rewrite(bug)):
                found.append(seen)
        return found

    def release_evidence(self, repo: str, commit: str, environment: str, urls: list[str], by: str,
                         number: int) -> str:
        """A signed in-toto statement of what the recorder measured (key `desk-recorder`)."""
        from signoff.trust import KeyStore, statement, subject, write_evidence

        st = statement([subject(f"git:{repo}", gitCommit=commit)], RELEASE_PREDICATE, {
            "kind": "measured", "repository": repo, "commit": commit, "environment": environment,
            "health": {"urls": urls, "service": self.config.service, "commit": commit, "ok": True},
            "recorded_by": by, "deployment_id": number})
        key = KeyStore(self.settings.keys_dir).ensure("desk-recorder")
        return str(write_evidence(st, key, self.settings.evidence_dir, stem=f"desk-release-{commit[:12]}-{number}"))
