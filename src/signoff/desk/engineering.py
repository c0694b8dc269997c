"""The engineering service: claims desk work from the outbox, asks the agents, submits what they
propose. It holds the engineering credential only: it can reproduce, fix and open a draft change
request, and nothing after that (no approval, merge or deployment).

Agents see a bug's dossiers only as untrusted data. A call refused by the budget or one that failed
leaves the job to be retried with backoff (the agents package books an unknown outcome as spent).
"""

from __future__ import annotations

import fnmatch
from typing import Any

from signoff import git
from signoff.agents import ProposalRejected, agent_for
from signoff.desk import scripts as _scripts  # noqa: F401  (registers the ShopLite scripts)
from signoff.desk.credentials import DeskCaller, require
from signoff.desk.workflow import ENGINEERING, Desk
from signoff.kernel.errors import ConflictError, RefusedError
from signoff.kernel.progress import Progress, silent
from signoff.ledger import Job, Outbox, Worker

SCRIPT = "shoplite"


def _agent_info(proposal: Any) -> dict[str, Any]:
    return {"provider": proposal.provider, "model": proposal.model, "kind": proposal.kind,
            "call_id": proposal.record.get("call_id")}


class EngineeringService:
    def __init__(self, desk: Desk, actor: DeskCaller, script: str = SCRIPT) -> None:
        # Checked before any job is claimed: a worker without the authority must not lease work.
        require(actor, "engineering", what="claim engineering work")
        self.desk = desk
        self.actor = actor
        self.script = script
        # Failures are recorded on the job; retried with backoff, dead after max attempts.
        self.worker = Worker(Outbox(desk.ledger, lease_seconds=300), {ENGINEERING: self._handle})
        self._progress: Progress = silent

    def run_once(self, progress: Progress = silent) -> bool:
        self._progress = progress
        return self.worker.run_once()

    def drain(self, limit: int = 100, progress: Progress = silent) -> int:
        self._progress = progress
        return self.worker.drain(limit)

    def _handle(self, job: Job) -> None:
        self._progress(f"{job.payload.get('step')} {job.payload.get('bug_id')}")
        self.handle(job)

    def handle(self, job: Job) -> None:
        p = job.payload
        bug = self.desk.bug(p["bug_id"])
        step = p["step"]
        # A job is done once the bug has moved past it: a redelivered job after a crash is a no-op.
        if step == "triage":
            if any(n["type"] == "note.triage" for n in self.desk.notes(bug.bug_id)):
                return
            self.triage(bug.bug_id, job.job_id)
        elif step == "reproduce":
            if bug.state not in ("reproducing", "reopened") or bug.round != p["round"]:
                return
            self.reproduce(bug.bug_id, p["round"])
        elif step == "review_test":
            if any(n["type"] == "note.review" and n.get("round") == p["round"] for n in self.desk.notes(bug.bug_id)):
                return
            self.review_test(bug.bug_id, p["round"], job.job_id)
        elif step == "review_change":
            if bug.state != "in_review" or bug.round != p["round"]:
                return
            self.review_change(bug.bug_id, p["round"], job.job_id)
        elif step == "fix":
            if bug.state != "fixing" or bug.round != p["round"]:
                return
            self.fix(bug.bug_id, p["round"])

    def _dossier(self, bug_id: str) -> dict[str, Any]:
        return self.desk.dossier(self.actor, bug_id)

    def triage(self, bug_id: str, key: str | None = None) -> None:
        d = self._dossier(bug_id)
        agent = agent_for("desk_triage", self.desk.settings, self.desk.ledger, script=self.script)
        try:
            prop = agent.propose({"component": d["component"], "title": d["title"]},
                                 {"report": "\n\n".join(d["dossiers"])}, client="desk-engineering", case_id=bug_id)
        except ProposalRejected as exc:
            self.desk.add_note(self.actor, bug_id, "triage", {"rejected": exc.message}, {"kind": "advisory"},
                               key=key)
            return
        self.desk.add_note(self.actor, bug_id, "triage", prop.output, _agent_info(prop), key=key)

    def reproduce(self, bug_id: str, round_: int) -> None:
        d = self._dossier(bug_id)
        path = self.desk.config.test_path(bug_id)
        agent = agent_for("reproducer", self.desk.settings, self.desk.ledger, script=self.script)
        try:
            prop = agent.propose({"test_path": path, "round": round_, "rejected_tests": d["rejected_tests"],
                                  "module": "shoplite.checkout"},
                                 {"report": "\n\n".join(d["dossiers"])}, client="desk-engineering", case_id=bug_id,
                                 allowed_paths=[path])
        except ProposalRejected as exc:
            raise RefusedError(f"reproducer proposal rejected: {exc.message}", "the job is retried") from exc
        self.desk.submit_reproduction(self.actor, bug_id, round_, prop.output["test_path"],
                                      prop.output["test_source"], _agent_info(prop))

    def review_test(self, bug_id: str, round_: int, key: str | None = None) -> None:
        d = self._dossier(bug_id)
        if d["reproduction"] is None:
            return
        agent = agent_for("reviewer", self.desk.settings, self.desk.ledger, script=self.script)
        prop = agent.propose({"compare": "does this test check what the report describes?",
                              "files": {d["reproduction"]["test_path"]: d["reproduction"]["test_source"]}},
                             {"report": "\n\n".join(d["dossiers"])}, client="desk-engineering", case_id=bug_id)
        self.desk.add_note(self.actor, bug_id, "review", prop.output, _agent_info(prop), round_=round_, key=key)

    def review_change(self, bug_id: str, round_: int, key: str | None = None) -> None:
        """The model's review of the draft: recorded as an advisory note, never as an approval."""
        d = self._dossier(bug_id)
        agent = agent_for("reviewer", self.desk.settings, self.desk.ledger, script=self.script)
        prop = agent.propose({"review": "the draft change request", "diff": self.desk.change_diff(self.actor, bug_id)},
                             {"report": "\n\n".join(d["dossiers"])}, client="desk-engineering", case_id=bug_id)
        self.desk.add_note(self.actor, bug_id, "review", prop.output, _agent_info(prop), round_=round_, key=key)

    def fix(self, bug_id: str, round_: int) -> None:
        d = self._dossier(bug_id)
        repro = d["reproduction"]
        cfg = self.desk.config
        base = repro["base"]
        bug = self.desk.bug(bug_id)
        files: dict[str, str] = {}
        listing = git.tracked_paths(self.desk.forge.path(cfg.repo), base)
        for path in listing:
            if any(fnmatch.fnmatchcase(path, g) for g in cfg.fix_paths):
                files[path] = self.desk.forge.read(cfg.repo, base, path) or ""
        agent = agent_for("fixer", self.desk.settings, self.desk.ledger, script=self.script)
        attempt = bug.fix_attempts + 1
        try:
            prop = agent.propose({"files": files, "test": {"path": repro["test_path"], "source": repro["test_source"],
                                                           "failure": repro["message"]},
                                  "attempt": attempt, "max_files": cfg.max_fix_files},
                                 {"report": "\n\n".join(d["dossiers"])}, client="desk-engineering", case_id=bug_id,
                                 allowed_paths=list(cfg.fix_paths))
            out = {f["path"]: f["content"] for f in prop.output["files"]}
            info = _agent_info(prop)
        except ProposalRejected as exc:
            self.desk.fix_failed(self.actor, bug_id, round_, attempt, f"proposal rejected: {exc.message}",
                                 {"kind": "advisory"})
            return
        try:
            self.desk.submit_fix(self.actor, bug_id, round_, attempt, out, prop.output.get("summary", ""), info)
        except (RefusedError, ConflictError):
            # A refused proposal is recorded by the desk as a failed attempt (and retried or handed to a
            # human there); a conflict means the bug moved on. Either way this job is done.
            return
