"""The desk's workflow: every rule of the loop, enforced here and nowhere else.

Each step is an event in the ledger (case `desk/bug/<id>`), appended at the version the decision
was made on, with the jobs it causes written in the same transaction. Faces (HTTP, CLI, the demo)
only authenticate and call these methods.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from signoff import airlock
from signoff.desk import codeowners, measure, webhooks
from signoff.desk.config import DeskConfig
from signoff.desk.credentials import Actor, Credentials, require
from signoff.desk.forge import Forge
from signoff.desk.model import Bug, fold
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import new_token, readable_id
from signoff.kernel.settings import Settings
from signoff.ledger import Event, Ledger, NewEvent, NewJob
from signoff.trust.credentials import digest as credential_digest
from signoff.trust.credentials import matches as credential_matches
from signoff.trust.credentials import shared_secret

ENGINEERING = "desk.engineering"
NOTIFY = "desk.notify"
RELEASE_PREDICATE = "https://signoff.dev/desk/release/v1"
BUG_PREFIX = "desk/bug/"
CLUSTERS = "desk/clusters"  # the cluster index: one event per accepted report, in order
FIELDS = ("title", "component", "steps", "expected", "actual", "environment")


class Quarantined(RefusedError):
    """The airlock held a submission; nothing of its text was stored."""

    def __init__(self, families: Sequence[str], message: str) -> None:
        super().__init__(message, "describe the bug in your own words, without instructions to anyone")
        self.families = list(families)


@dataclass
class Intake:
    report_id: str
    bug_id: str
    capability: str  # shown once; only its hash is stored
    tracking_path: str  # the capability travels in the fragment, never to a server log

    def as_json(self) -> dict[str, Any]:
        return {"report_id": self.report_id, "bug_id": self.bug_id, "capability": self.capability,
                "tracking_url": f"{self.tracking_path}#cap={self.capability}"}


def _case(bug_id: str) -> str:
    return BUG_PREFIX + bug_id


def _sha(text: str) -> str:
    return sha256_bytes(text.encode())


class Desk:
    def __init__(self, ledger: Ledger, settings: Settings, forge: Forge, config: DeskConfig | None = None) -> None:
        self.ledger = ledger
        self.settings = settings
        self.forge = forge
        self.config = config or DeskConfig.load(settings)
        self.credentials = Credentials(ledger)
        self.clock = ledger.clock

    # -- reading --------------------------------------------------------------------------------

    def bug(self, bug_id: str) -> Bug:
        events = self.ledger.read(_case(bug_id))
        if not events:
            raise NotFoundError(f"bug {bug_id} not found", "list bugs with `signoff desk bugs`")
        return fold(bug_id, events)

    def bug_ids(self) -> list[str]:
        return sorted(c[len(BUG_PREFIX):] for c in self.ledger.case_ids(BUG_PREFIX))

    def bugs(self) -> list[Bug]:
        return [self.bug(b) for b in self.bug_ids()]

    def notes(self, bug_id: str) -> list[dict[str, Any]]:
        return [{"type": e.type, **e.payload, "at": e.recorded_at} for e in self.ledger.read(f"desk/notes/{bug_id}")]

    def _update(self, bug_id: str, decide: Callable[[Bug], tuple[list[NewEvent], list[NewJob]]],
                idempotency_key: str | None = None) -> Bug:
        """Read the bug, decide, append at the version read (retrying on a conflict)."""
        def run(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            if not history:
                raise NotFoundError(f"bug {bug_id} not found", "list bugs with `signoff desk bugs`")
            return decide(fold(bug_id, history))

        self.ledger.update(_case(bug_id), run, idempotency_key)
        return self.bug(bug_id)

    # -- 1. intake --------------------------------------------------------------------------------

    def _rate_limit(self, client: str) -> None:
        case = f"desk/intake/{_sha(client)[:32]}"
        now = self.clock.now()

        def count(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            recent = [e for e in history if e.payload.get("at", 0) > now - 3600]
            if len(recent) >= self.config.reports_per_hour:
                raise RefusedError(f"too many reports from this client ({len(recent)} in the last hour)",
                                   "wait an hour, or add to your existing report's tracking page")
            return [NewEvent("intake.counted", {"at": now})], []

        self.ledger.update(case, count)

    def submit_report(self, fields: dict[str, str], client: str) -> Intake:
        """Public intake. Quarantined text raises Quarantined (nothing of it is stored); clean text
        becomes a redacted dossier attached to a bug (a new one, or the cluster it joins)."""
        if not isinstance(fields, dict) or not fields:
            raise UsageError("a report needs fields", f"send some of: {', '.join(FIELDS)}")
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise UsageError(f"unknown report field(s): {', '.join(unknown)}", f"use only: {', '.join(FIELDS)}")
        if not all(isinstance(v, str) for v in fields.values()):
            raise UsageError("report fields must be text", "send strings")
        if not fields.get("title", "").strip():
            raise UsageError("a report needs a title", "say in one line what goes wrong")
        self._rate_limit(client)
        verdict = airlock.scan_fields({k: v for k, v in fields.items() if v.strip()})
        if verdict.quarantined:
            self.ledger.append("desk/quarantine", None, [NewEvent("report.quarantined", {
                "families": list(verdict.families), "raw_sha256": verdict.raw_sha256,
                "client_sha256": _sha(client)})])
            raise Quarantined(verdict.families, verdict.message)
        assert verdict.dossier is not None
        dossier = verdict.dossier
        clean = dict(dossier.fields)
        title, component = clean.get("title", "untitled"), clean.get("component", "general") or "general"
        number = self.ledger.next_number("desk.report")
        report_id = readable_id("RPT", number)
        token = new_token()
        bug_id, opener = self._cluster(report_id, component, title)
        attached = {"report_id": report_id, "token_sha256": credential_digest(token), "dossier": clean,
                    "rendered": dossier.render(), "redactions": dict(dossier.redactions),
                    "raw_sha256": verdict.raw_sha256, "component": component, "title": title}

        def attach(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            # Whoever reaches an unwritten bug first opens it, from the opener's decision, so the
            # opening is the same whether the opener or a joiner (or a retry) writes it.
            events: list[NewEvent] = []
            jobs: list[NewJob] = []
            if not history:
                events.append(NewEvent("bug.opened", {"bug_id": bug_id, "component": opener["component"],
                                                      "title": opener["title"]}))
                jobs = [NewJob(f"{bug_id}:triage", ENGINEERING, {"bug_id": bug_id, "step": "triage", "round": 1}),
                        NewJob(f"{bug_id}:reproduce:1", ENGINEERING, {"bug_id": bug_id, "step": "reproduce",
                                                                      "round": 1})]
            if any(e.type == "report.attached" and e.payload["report_id"] == report_id for e in history):
                return [], []
            events.append(NewEvent("report.attached", attached))
            return events, jobs

        self.ledger.update(_case(bug_id), attach)
        self.ledger.append(f"desk/report/{report_id}", 0, [NewEvent("report.filed", {"bug_id": bug_id})])
        return Intake(report_id, bug_id, token, f"/desk/track/{report_id}")

    def _cluster(self, report_id: str, component: str, title: str) -> tuple[str, dict[str, Any]]:
        """Find the bug this report belongs to, or a new bug id, as one serialised decision.

        The cluster index (case `desk/clusters`) records every accepted report's bug in order; the
        decision is appended at the version it was read from, so of two intakes racing to open the
        same bug one wins and the other, on its conflict, re-reads and joins the winner's bug.
        Returns the bug id and the decision that opened that bug (its component and title)."""
        decided: dict[str, Any] = {}

        def decide(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            clusterer = airlock.Clusterer()
            owner: dict[str, str] = {}
            openers: dict[str, dict[str, Any]] = {}
            last = 0
            prefix = f"{self.config.prefix}-"
            for e in history:
                p = e.payload
                c = clusterer.add(airlock.Report(p["report_id"], p["component"], p["title"], p["report_id"], ""))
                owner.setdefault(c.cluster_id, p["bug_id"])
                if p["opened"]:
                    openers[p["bug_id"]] = p
                    if p["bug_id"].startswith(prefix):
                        last = max(last, int(p["bug_id"][len(prefix):]))
            c = clusterer.add(airlock.Report(report_id, component, title, report_id, ""))
            entry: dict[str, Any] = {"report_id": report_id, "component": component, "title": title}
            if c.cluster_id in owner:
                bug_id = owner[c.cluster_id]
                entry |= {"bug_id": bug_id, "opened": False}
                decided.update(bug_id=bug_id, opener=openers.get(bug_id, entry))
            else:
                bug_id = readable_id(self.config.prefix, last + 1)
                entry |= {"bug_id": bug_id, "opened": True}
                decided.update(bug_id=bug_id, opener=entry)
            return [NewEvent("report.clustered", entry)], []

        self.ledger.update(CLUSTERS, decide, attempts=200)
        return decided["bug_id"], decided["opener"]

    # -- reporter capability --------------------------------------------------------------------

    def reporter(self, report_id: str, capability: str | None) -> Actor:
        """The reporter of `report_id` if `capability` is theirs (constant-time); RefusedError otherwise."""
        if not isinstance(report_id, str) or not re.fullmatch(r"RPT-\d{4,}", report_id):
            raise UsageError(f"{report_id!r} is not a report id", "report ids look like RPT-0001")
        filed = self.ledger.read(f"desk/report/{report_id}")
        if not filed or not capability:
            # Same answer for unknown reports and missing capabilities: no report enumeration.
            raise RefusedError("this tracking link is not valid", "use the link you were given when you reported")
        bug = self.bug(filed[0].payload["bug_id"])
        stored = bug.reports[report_id]["token_sha256"]
        if not credential_matches(stored, capability):
            raise RefusedError("this tracking link is not valid", "use the link you were given when you reported")
        return Actor("reporter", report_id, report_id=report_id)

    def track(self, actor: Actor) -> dict[str, Any]:
        """What a reporter may see: an allowlisted projection, never other reporters' text."""
        require(actor, "reporter", what="read a tracking page")
        assert actor.report_id is not None
        bug_id = self.ledger.read(f"desk/report/{actor.report_id}")[0].payload["bug_id"]
        bug = self.bug(bug_id)
        notices = [{"kind": e.payload["kind"], "text": e.payload["text"], "round": e.payload["round"],
                    "at": e.recorded_at} for e in self.ledger.read(f"desk/inbox/{actor.report_id}")]
        question = None
        if bug.state == "awaiting_reporter":
            question = "reproduction"
        elif bug.state in ("released", "verified") and actor.report_id not in bug.verified_by:
            question = "release"
        repro = bug.reproduction
        return {"report_id": actor.report_id, "bug_id": bug_id, "state": bug.state, "round": bug.round,
                "title": bug.reports[actor.report_id]["title"], "question": question,
                "test": {"path": repro["test_path"], "source": repro["test_source"], "message": repro["message"]}
                if repro and question == "reproduction" else None,
                "release": {"commit": bug.release["commit"]} if bug.release else None, "notices": notices}

    def _reporter_bug(self, actor: Actor, bug_id: str | None) -> Bug:
        require(actor, "reporter", what="answer for a report")
        assert actor.report_id is not None
        own = self.ledger.read(f"desk/report/{actor.report_id}")[0].payload["bug_id"]
        if bug_id is not None and bug_id != own:
            raise RefusedError(f"report {actor.report_id} is not a report of {bug_id}",
                               "only the original reporter of a report in that bug may answer")
        return self.bug(own)

    def _reason(self, reason: str | None) -> dict[str, Any]:
        if not reason or not reason.strip():
            raise UsageError('a "no" needs a reason', "say what still goes wrong")
        verdict = airlock.scan(reason)
        if verdict.quarantined:
            raise Quarantined(verdict.families, verdict.message)
        assert verdict.dossier is not None
        return {"reason": verdict.dossier.render(), "raw_sha256": verdict.raw_sha256}

    # -- 4. reporter confirms the reproduction --------------------------------------------------

    def confirm(self, actor: Actor, answer: str, reason: str | None = None, bug_id: str | None = None,
                round_: int | None = None) -> Bug:
        bug = self._reporter_bug(actor, bug_id)
        if answer not in ("yes", "no"):
            raise UsageError(f"answer {answer!r} is not yes or no", "answer yes or no")
        why = self._reason(reason) if answer == "no" else None
        rid = actor.report_id

        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if b.state != "awaiting_reporter" or b.reproduction is None or (round_ is not None and round_ != b.round):
                raise ConflictError(f"{b.bug_id} is not waiting for a confirmation (state {b.state}, round {b.round})",
                                    "reload the tracking page: the bug has moved on")
            if not self._counts(b, rid, "reproduction"):
                return self._unentitled(b, rid, "reproduction", answer, why)
            if answer == "yes":
                return [NewEvent("confirmation.yes", {"report_id": rid, "round": b.round})], [
                    NewJob(f"{b.bug_id}:fix:{b.round}", ENGINEERING,
                           {"bug_id": b.bug_id, "step": "fix", "round": b.round})]
            nxt = b.round + 1
            return [NewEvent("confirmation.no", {"report_id": rid, "round": b.round, **(why or {})})], [
                NewJob(f"{b.bug_id}:reproduce:{nxt}", ENGINEERING, {"bug_id": b.bug_id, "step": "reproduce",
                                                                    "round": nxt})]
        return self._update(bug.bug_id, decide)

    def _counts(self, b: Bug, rid: str | None, question: str) -> bool:
        """Whether this report's answer decides `question`; refuses once the report has answered too often.

        Anyone who files a similar report joins the bug and gets a capability, so a capability alone
        must not let a stranger steer someone else's bug. Only reports filed before the question was
        posed decide it; a later one is recorded for the owner (see `accept_dispute`)."""
        assert rid is not None
        if b.answers.get(rid, 0) >= self.config.answers_per_report:
            raise RefusedError(f"report {rid} has answered {b.answers[rid]} times on {b.bug_id}: no more answers",
                               "the owner has your earlier answers; add detail to a new report if it still fails")
        if b.entitled(rid, question):
            return True
        if len(b.disputes) >= self.config.disputes_per_bug:
            raise RefusedError(f"{b.bug_id} has {len(b.disputes)} answers waiting for the owner: no more are taken",
                               "the owner will review the answers already given")
        return False

    def _unentitled(self, b: Bug, rid: str | None, question: str, answer: str,
                    why: dict[str, Any] | None) -> tuple[list[NewEvent], list[NewJob]]:
        # Recorded and shown to the owner; it changes no state, asks no agent and never grows the
        # rejected-test list. A "no" reopens the bug only when a person agrees (`accept_dispute`).
        return [NewEvent("answer.unentitled", {"report_id": rid, "question": question, "answer": answer,
                                               "round": b.round, **(why or {})})], []

    def accept_dispute(self, actor: Actor, bug_id: str, index: int) -> Bug:
        """A person agrees with a "no" from a reporter who was not entitled to the question: the bug
        reopens for a new reproduction; the test is not added to the rejected list."""
        require(actor, "owner", what="accept a reporter's dispute")
        if not actor.human or actor.shared:
            raise RefusedError("only a named person may accept a dispute",
                               "use your own owner credential (not a bot's, not the shared key)")

        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if not 0 <= index < len(b.disputes):
                raise NotFoundError(f"{bug_id} has no dispute {index}", "list them in the bug's disputes")
            d = b.disputes[index]
            open_question = {"reproduction": b.state == "awaiting_reporter",
                             "release": b.state in ("released", "verified")}[d["question"]]
            if d["answer"] != "no" or d["accepted"] or d["round"] != b.round or not open_question:
                raise ConflictError(f"dispute {index} of {bug_id} is not an open \"no\" of this round",
                                    "reload the bug: it has moved on")
            nxt = b.round + 1
            return [NewEvent("dispute.accepted", {"index": index, "by": actor.name})], [
                NewJob(f"{bug_id}:reproduce:{nxt}", ENGINEERING, {"bug_id": bug_id, "step": "reproduce",
                                                                  "round": nxt})]
        return self._update(bug_id, decide)

    # -- 8. reporter verifies the release -------------------------------------------------------

    def verify_release(self, actor: Actor, answer: str, reason: str | None = None, bug_id: str | None = None) -> Bug:
        bug = self._reporter_bug(actor, bug_id)
        if answer not in ("yes", "no"):
            raise UsageError(f"answer {answer!r} is not yes or no", "answer yes or no")
        why = self._reason(reason) if answer == "no" else None
        rid = actor.report_id

        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if b.state not in ("released", "verified") or b.release is None:
                raise ConflictError(f"{b.bug_id} has no release to check (state {b.state})",
                                    "you will be asked once the fix is live")
            if not self._counts(b, rid, "release"):
                return self._unentitled(b, rid, "release", answer, why)
            if answer == "yes":
                if rid in b.verified_by:
                    return [], []
                return [NewEvent("verification.yes", {"report_id": rid, "round": b.round,
                                                      "commit": b.release["commit"]})], []
            nxt = b.round + 1
            return [NewEvent("verification.no", {"report_id": rid, "round": b.round, **(why or {})})], [
                NewJob(f"{b.bug_id}:reproduce:{nxt}", ENGINEERING, {"bug_id": b.bug_id, "step": "reproduce",
                                                                    "round": nxt})]
        return self._update(bug.bug_id, decide)

    # -- 2. triage (advisory) ---------------------------------------------------------------------

    def change_diff(self, actor: Actor, bug_id: str) -> str:
        """The diff of the bug's change request, for the model's advisory review."""
        require(actor, "engineering", "owner", what="read engineering work")
        bug = self.bug(bug_id)
        if bug.change is None:
            raise ConflictError(f"{bug_id} has no change request", "nothing to review")
        from signoff import git

        return git.diff_text(self.forge.path(bug.change["repo"]), bug.change["base"], bug.change["head"])

    def dossier(self, actor: Actor, bug_id: str) -> dict[str, Any]:
        """What engineering may read of a bug: dossiers (redacted, labelled), never raw text."""
        require(actor, "engineering", "owner", what="read engineering work")
        bug = self.bug(bug_id)
        return {"bug_id": bug_id, "state": bug.state, "round": bug.round, "component": bug.component,
                "title": bug.title, "dossiers": [r["rendered"] for r in bug.reports.values()],
                "reproduction": bug.reproduction, "rejected_tests": sorted(bug.rejected_tests),
                "change": bug.change}

    def add_note(self, actor: Actor, bug_id: str, kind: str, note: dict[str, Any], agent: dict[str, Any],
                 round_: int | None = None, key: str | None = None) -> None:
        """An advisory note (triage, model review): filtered like reporter text and stored apart.
        No code path reads a note to decide anything."""
        require(actor, "engineering", what="add an advisory note")
        if kind not in ("triage", "review"):
            raise UsageError(f"note kind {kind!r} is not known", "use triage or review")
        self.bug(bug_id)
        text = "\n".join(f"{k}: {v}" for k, v in sorted(note.items()))
        verdict = airlock.scan(text[:200_000])
        if verdict.quarantined:
            payload: dict[str, Any] = {"kind": kind, "quarantined": True, "families": list(verdict.families),
                                       "raw_sha256": verdict.raw_sha256}
        else:
            assert verdict.dossier is not None
            payload = {"kind": kind, "quarantined": False, "note": verdict.dossier.render(),
                       "raw_sha256": verdict.raw_sha256}
        payload["agent"] = {k: agent.get(k) for k in ("provider", "model", "kind", "call_id")}
        payload["evidence_kind"] = "advisory" if agent.get("kind") == "advisory" else "simulated"
        payload["round"] = round_
        # Keyed by the job that asked for it, so a redelivered job adds no second note.
        self.ledger.append(f"desk/notes/{bug_id}", None, [NewEvent(f"note.{kind}", payload)],
                           idempotency_key=f"desk:note:{key}" if key else None)

    # -- 3. reproduction --------------------------------------------------------------------------

    def submit_reproduction(self, actor: Actor, bug_id: str, round_: int, test_path: str, test_source: str,
                            agent: dict[str, Any] | None = None) -> Bug:
        """The reproducer's test, measured here in the sandbox. It counts only if the baseline suite
        is green and the test fails by an assertion; a rejected test is never reused."""
        require(actor, "engineering", what="submit a reproduction")
        bug = self.bug(bug_id)
        if bug.state not in ("reproducing", "reopened") or bug.round != round_:
            raise ConflictError(f"{bug_id} is not reproducing round {round_} (state {bug.state}, round {bug.round})",
                                "claim the current work item")
        expected = self.config.test_path(bug_id)
        if test_path != expected:
            raise RefusedError(f"regression test path {test_path!r} is not allowed", f"write it at {expected}")
        if not isinstance(test_source, str) or not test_source.strip() or len(test_source.encode()) > 50_000:
            raise UsageError("test source must be 1 to 50000 bytes of text", "send the whole test file")
        digest = _sha(test_source)
        if digest in bug.rejected_tests:
            raise RefusedError("this test was rejected by a reporter before and is never reused",
                               "write a new test for what the reporter described")
        repo = self.forge.path(self.config.repo)
        base = self.forge.head(self.config.repo)
        m = measure.reproduce(self.settings, repo, base, self.config.test_dir, test_path, test_source,
                              self.config.timeout)
        agent_info = {k: (agent or {}).get(k) for k in ("provider", "model", "kind", "call_id")}

        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if b.state not in ("reproducing", "reopened") or b.round != round_:
                raise ConflictError(f"{bug_id} moved on while the test ran", "claim the current work item")
            if not m.ok:
                baseline_red = bool(m.detail.get("baseline_red"))
                give_up = baseline_red or b.repro_attempts + 1 >= 2
                reason = (f"needs a human: {m.reason}" if baseline_red else
                          f"no reproduction after {b.repro_attempts + 1} attempts: {m.reason}") if give_up else m.reason
                jobs = [] if give_up else [NewJob(f"{bug_id}:reproduce:{round_}:retry{b.repro_attempts + 1}",
                                                  ENGINEERING, {"bug_id": bug_id, "step": "reproduce",
                                                                "round": round_})]
                return [NewEvent("reproduction.failed", {"round": round_, "reason": reason, "measured": m.reason,
                                                         "needs_human": give_up, "baseline_red": baseline_red,
                                                         "test_sha256": digest, "evidence": m.evidence,
                                                         "agent": agent_info})], jobs
            payload = {"round": round_, "test_path": test_path, "test_source": test_source, "test_sha256": digest,
                       "base": base, "message": m.reason, "evidence": m.evidence, "fingerprint":
                       m.detail.get("fingerprint"), "evidence_kind": "measured", "agent": agent_info}
            jobs = [NewJob(f"{bug_id}:notify:reproduced:{round_}:{rid}", NOTIFY,
                           {"bug_id": bug_id, "report_id": rid, "kind": "reproduced", "round": round_})
                    for rid in sorted(b.reports)]
            jobs.append(NewJob(f"{bug_id}:review-test:{round_}", ENGINEERING,
                               {"bug_id": bug_id, "step": "review_test", "round": round_}))
            return [NewEvent("reproduction.recorded", payload)], jobs
        return self._update(bug_id, decide)

    # -- 5. fix ------------------------------------------------------------------------------------

    def _check_fix_files(self, base: str, files: dict[str, str], test_path: str) -> None:
        if not isinstance(files, dict) or not files:
            raise UsageError("a fix needs at least one file", "send {path: complete new content}")
        if len(files) > self.config.max_fix_files:
            raise RefusedError(f"a fix may change at most {self.config.max_fix_files} files, not {len(files)}",
                               "keep the fix small")
        for path, content in files.items():
            parts = path.split("/")
            if (not path or path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts)
                    or parts[0] in (".git", ".signoff")):
                raise RefusedError(f"path {path!r} leaves the repository or names git internals",
                                   "use a relative path inside the repository")
            if path == test_path or not any(fnmatch.fnmatchcase(path, g) for g in self.config.fix_paths):
                raise RefusedError(f"path {path!r} is not one the fixer may change",
                                   f"allowed: {', '.join(self.config.fix_paths)}")
            if not isinstance(content, str) or len(content.encode()) > self.config.max_file_bytes:
                raise RefusedError(f"{path}: content must be text of at most {self.config.max_file_bytes} bytes",
                                   "send the complete file, smaller")
            mode = self._mode(base, path)
            if mode == "120000":
                raise RefusedError(f"{path} is a symbolic link in the repository", "fix the file it points to")
            # every parent folder must be a folder, not a link
            for i in range(1, len(parts)):
                if self._mode(base, "/".join(parts[:i])) == "120000":
                    raise RefusedError(f"{path} goes through a symbolic link", "use the real path")

    def _mode(self, commit: str, path: str) -> str | None:
        from signoff import git

        return git.mode_at(self.forge.path(self.config.repo), commit, path)

    def submit_fix(self, actor: Actor, bug_id: str, round_: int, attempt: int, files: dict[str, str],
                   summary: str = "", agent: dict[str, Any] | None = None) -> Bug:
        """A fixer's complete files: committed with the confirmed test copied in unchanged, measured in
        the sandbox (new test, whole suite, configured checks); success opens a draft change request
        assigned to the human owner. After that the agents can do nothing more for this bug."""
        require(actor, "engineering", what="submit a fix")
        bug = self.bug(bug_id)
        if bug.state != "fixing" or bug.round != round_ or bug.reproduction is None:
            raise ConflictError(f"{bug_id} is not being fixed in round {round_} (state {bug.state})",
                                "fixing is legal only after the reporter confirmed the reproduction")
        if attempt != bug.fix_attempts + 1:
            raise ConflictError(f"attempt {attempt} is not the next one ({bug.fix_attempts + 1})", "reload the bug")
        repro = bug.reproduction
        agent_info = {k: (agent or {}).get(k) for k in ("provider", "model", "kind", "call_id")}
        try:
            self._check_fix_files(repro["base"], files, repro["test_path"])
        except RefusedError as exc:
            self._fix_failed(bug_id, round_, attempt, f"refused: {exc.message}", agent_info)
            raise
        repo = self.config.repo
        branch = f"desk/{bug_id.lower()}-r{round_}-a{attempt}"
        commit = self.forge.commit(repo, repro["base"], {**files, repro["test_path"]: repro["test_source"]},
                                   f"{bug_id}: {summary or 'fix'}\n\nRegression test {repro['test_path']} "
                                   f"copied unchanged.", "signoff-engineering", branch)
        m = measure.verify_fix(self.settings, self.forge.path(repo), repro["base"], commit, self.config.test_dir,
                               repro["test_path"], repro["test_source"], list(self.config.fix_paths),
                               checks=self.config.checks, timeout=self.config.timeout)
        if not m.ok:
            self._fix_failed(bug_id, round_, attempt, m.reason, agent_info, m.evidence)
            return self.bug(bug_id)
        # After a crash between opening the change request and recording it, the retried job finds
        # the change request already there: reuse it (same tree), or move its head to what was measured.
        existing = [c for c in self.forge.changes(repo) if c["branch"] == branch and not c.get("merged")]
        if existing:
            cr = existing[0]
            if self.forge.tree(repo, cr["head"]) != self.forge.tree(repo, commit):
                cr["head"] = self.forge.push(repo, cr["number"], {**files, repro["test_path"]: repro["test_source"]},
                                             "measured fix", "signoff-engineering", "Bot")
        else:
            cr = self.forge.open_change(
                repo, branch, repro["base"], f"{bug_id}: {summary or bug.title}"[:200], "signoff-engineering",
                self.config.owner, body=f"Draft fix for {bug_id}. Regression test: {repro['test_path']}. {m.reason}")

        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if b.state != "fixing" or b.round != round_:
                raise ConflictError(f"{bug_id} moved on while the fix was measured", "reload the bug")
            return [NewEvent("fix.verified", {"round": round_, "attempt": attempt, "commit": commit,
                                              "evidence": m.evidence, "checks": m.detail.get("checks", []),
                                              "fingerprint": m.detail.get("fingerprint"), "agent": agent_info}),
                    NewEvent("change.opened", {"round": round_, "repo": repo, "number": cr["number"],
                                               "head": cr["head"], "base": repro["base"], "branch": branch,
                                               "assignee": self.config.owner, "draft": True})], [
                NewJob(f"{bug_id}:review-change:{round_}", ENGINEERING,
                       {"bug_id": bug_id, "step": "review_change", "round": round_})]
        return self._update(bug_id, decide, idempotency_key=f"desk:{bug_id}:change:{round_}:{attempt}")

    def _fix_failed(self, bug_id: str, round_: int, attempt: int, reason: str, agent: dict[str, Any],
                    evidence: str | None = None) -> None:
        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if b.state != "fixing" or b.round != round_ or b.fix_attempts >= attempt:
                return [], []
            give_up = attempt >= self.config.fix_attempts
            jobs = [] if give_up else [NewJob(f"{bug_id}:fix:{round_}:retry{attempt}", ENGINEERING,
                                              {"bug_id": bug_id, "step": "fix", "round": round_})]
            return [NewEvent("fix.failed", {
                "round": round_, "attempt": attempt, "reason": (f"needs a human: {attempt} fix attempts failed; "
                                                                f"last: {reason}") if give_up else reason,
                "needs_human": give_up, "evidence": evidence, "agent": agent})], jobs
        self._update(bug_id, decide)

    # -- 6. review and merge ------------------------------------------------------------------------

    def tier(self, bug: Bug) -> tuple[int, list[str]]:
        assert bug.change is not None
        paths = self.forge.changed_paths(bug.change["repo"], bug.change["base"], bug.change["head"])
        if any(any(fnmatch.fnmatchcase(p, g) for g in self.config.sensitive_paths) for p in paths):
            return 2, paths
        if paths and all(any(fnmatch.fnmatchcase(p, g) for g in self.config.docs_paths) for p in paths):
            return 0, paths
        return 1, paths

    def _codeowners(self, bug: Bug, paths: list[str]) -> set[str]:
        assert bug.change is not None
        text = self.forge.read(bug.change["repo"], bug.change["base"], "CODEOWNERS") or self.forge.read(
            bug.change["repo"], bug.change["base"], ".github/CODEOWNERS") or ""
        rules = codeowners.parse(text)
        owners: set[str] = set()
        for p in paths:
            owners.update(codeowners.owners_of(rules, p))
        return owners

    def approve(self, actor: Actor, bug_id: str, head: str, note: str = "") -> Bug:
        """A human owner approves the exact head SHA through the desk."""
        require(actor, "owner", what="approve a change")
        if not actor.human:
            raise RefusedError(f"{actor.name} is not a human user", "approvals come from people")
        # One identity per person, whichever way they approve (desk or forge): the same login twice
        # is one human. The shared owner key is its own identity and never counts for tier 2.
        identity = "shared-owner-key" if actor.shared else f"human:{actor.name.lower()}"
        return self._record_approval(bug_id, head, actor.name.lower(), identity, actor.shared, "desk", note)

    def _record_approval(self, bug_id: str, head: str, login: str, identity: str, shared: bool, via: str,
                         note: str = "", key: str | None = None) -> Bug:
        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if b.state != "in_review" or b.change is None:
                raise ConflictError(f"{bug_id} has no change under review (state {b.state})", "nothing to approve")
            if head != b.change["head"]:
                raise ConflictError(f"approval names {head[:12]} but the head is {b.change['head'][:12]}",
                                    "review the current head")
            _tier, paths = self.tier(b)
            codeowner = login in self._codeowners(b, paths) and not shared
            return [NewEvent("approval.recorded", {"login": login, "identity": identity, "shared": shared,
                                                   "head": head, "codeowner": codeowner, "via": via,
                                                   "note": note[:500]})], []
        return self._update(bug_id, decide, idempotency_key=key)

    def merge_check(self, bug: Bug, head: str, merged_by: str, merged_by_type: str) -> str | None:
        """Why this merge may not count (None: it may)."""
        if bug.state != "in_review" or bug.change is None:
            return f"{bug.bug_id} has no change under review (state {bug.state})"
        if merged_by_type != "User" or merged_by.endswith("[bot]") or merged_by.startswith("signoff-"):
            return f"merged by {merged_by} ({merged_by_type}): a human user must merge"
        if head != bug.change["head"]:
            return f"merged head {head[:12]} is not the reviewed head {bug.change['head'][:12]}"
        on_head = [a for a in bug.approvals if a["head"] == head]
        if not on_head:
            return "no human approval of this exact head"
        tier, paths = self.tier(bug)
        if tier == 2:
            people = {a["identity"] for a in on_head if not a["shared"]}
            if len(people) < 2:
                return (f"tier 2 change ({', '.join(paths)}) needs two distinct humans; has {len(people)}"
                        + (" (the shared owner key never counts)" if any(a["shared"] for a in on_head) else ""))
            if not any(a["codeowner"] for a in on_head):
                return "tier 2 change needs a code owner's approval"
        return None

    def merge(self, actor: Actor, bug_id: str) -> str:
        """Merge in the local forge, as the owner. The desk checks first, and records the merge only
        from the forge's signed webhook."""
        require(actor, "owner", what="merge a change")
        if not actor.human or actor.shared:
            raise RefusedError(f"{actor.name} cannot merge: a named human user must",
                               "merge with your own owner credential")
        bug = self.bug(bug_id)
        if bug.change is None:
            raise ConflictError(f"{bug_id} has no change request", "nothing to merge")
        why = self.merge_check(bug, bug.change["head"], actor.name, "User")
        if why:
            raise RefusedError(f"merge refused: {why}", "get the approvals the change needs first")
        return self.forge.merge(bug.change["repo"], bug.change["number"], actor.name, "User", sha=bug.change["head"])

    # -- webhooks ----------------------------------------------------------------------------------

    def webhook_secret(self) -> bytes:
        return webhook_secret(self.settings)

    def receive_webhook(self, headers: dict[str, str], body: bytes) -> dict[str, Any]:
        """A signed GitHub-format delivery: verified over the raw bytes, refused when replayed or
        from a repository not on the allowlist, then applied."""
        event, delivery, payload = webhooks.verify(self.webhook_secret(), headers, body)
        # The signature covers the body only, so the delivery id is the sender's word: the same signed
        # body under a new id (or the same id in another case) is the same delivery. De-duplicate on
        # both the id and the signed content.
        case = f"desk/webhook/{delivery.lower()}"
        content = f"desk/webhook-content/{event}/{sha256_bytes(body)}"
        if self.ledger.version(case) or self.ledger.version(content):
            raise ConflictError(f"delivery {delivery} was already processed", "a replay is refused")
        if event == "ping":
            result: dict[str, Any] = {"outcome": "pong"}
        else:
            repo, full_name = webhooks.repo_of(payload)
            # An entry with an owner ("octo-org/shoplite") matches GitHub's full name exactly; a bare
            # name ("shoplite") matches only the local forge's repository of that name.
            allowed = self.config.repos_allowed
            if full_name not in allowed and not (full_name == f"{webhooks.LOCAL_OWNER}/{repo}" and repo in allowed):
                raise RefusedError(f"repository {full_name!r} is not on the allowlist",
                                   "add its full name to [desk] repos_allowed")
            # keyed on the content: two copies racing past the check above apply one effect
            result = self._apply_hook(event, content, repo, payload)
        try:
            self.ledger.append(content, 0, [NewEvent("webhook.processed", {"event": event, "delivery": delivery})])
            self.ledger.append(case, 0, [NewEvent("webhook.processed", {"event": event, "result": result})])
        except ConflictError as exc:
            raise ConflictError(f"delivery {delivery} was already processed", "a replay is refused") from exc
        return result

    def _bug_for_change(self, repo: str, number: int) -> Bug | None:
        for bug in self.bugs():
            if bug.change and bug.change["repo"] == repo and bug.change["number"] == number:
                return bug
        return None

    def _apply_hook(self, event: str, dedupe: str, repo: str, p: dict[str, Any]) -> dict[str, Any]:
        key = f"desk:hook:{dedupe}"
        if event == "deployment_status":
            st, dep = p.get("deployment_status") or {}, p.get("deployment") or {}
            if st.get("state") != "success":
                return {"outcome": "ignored", "why": f"deployment state {st.get('state')}"}
            return self.record_deployment(Actor("recorder", "github"), repo, str(dep.get("sha", "")),
                                          str(st.get("environment") or dep.get("environment") or ""),
                                          str(st.get("environment_url") or ""), key=key)
        pr = p.get("pull_request") or {}
        number = int(p.get("number") or pr.get("number") or 0)
        bug = self._bug_for_change(repo, number)
        if bug is None:
            return {"outcome": "ignored", "why": f"{repo}#{number} is not a desk change"}
        head = str((pr.get("head") or {}).get("sha", ""))
        if event == "pull_request" and p.get("action") == "synchronize":
            def pushed(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
                if b.change is None or b.change["head"] == head:
                    return [], []
                return [NewEvent("change.pushed", {"head": head, "by": (p.get("sender") or {}).get("login")})], []
            self._update(bug.bug_id, pushed, idempotency_key=key)
            return {"outcome": "approvals_cleared", "bug_id": bug.bug_id, "head": head}
        if event == "pull_request_review":
            review = p.get("review") or {}
            reviewer = review.get("user") or {}
            if str(review.get("state", "")).lower() != "approved":
                return {"outcome": "ignored", "why": f"review state {review.get('state')}"}
            if reviewer.get("type") != "User":
                return {"outcome": "ignored", "why": f"{reviewer.get('login')} is a {reviewer.get('type')}, "
                                                     "not a human user"}
            association = str(review.get("author_association") or "").upper()
            if association and association not in ("OWNER", "MEMBER", "COLLABORATOR"):
                # Anyone can review a public pull request; only the repository's people count.
                return {"outcome": "ignored", "why": f"{reviewer.get('login')} is not a member ({association})"}
            commit = str(review.get("commit_id", ""))
            if bug.change is None or commit != bug.change["head"]:
                return {"outcome": "ignored", "why": "the review is of an older head"}
            login = str(reviewer.get("login", "")).lower()
            self._record_approval(bug.bug_id, commit, login, f"human:{login}", False, "forge", key=key)
            return {"outcome": "approval_recorded", "bug_id": bug.bug_id, "login": login}
        if event == "pull_request" and p.get("action") == "closed":
            if not pr.get("merged"):
                return {"outcome": "ignored", "why": "closed without merging"}
            merged_by = pr.get("merged_by") or {}
            login, kind = str(merged_by.get("login", "")), str(merged_by.get("type", ""))
            merge_commit = str(pr.get("merge_commit_sha") or "")
            return self._record_merge(bug.bug_id, head, login, kind, merge_commit, key)
        return {"outcome": "ignored", "why": f"{event}/{p.get('action')} is not used"}

    def _record_merge(self, bug_id: str, head: str, login: str, kind: str, merge_commit: str,
                      key: str) -> dict[str, Any]:
        out: dict[str, Any] = {}

        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            why = self.merge_check(b, head, login, kind)
            if why:
                out.update({"outcome": "merge_refused", "bug_id": bug_id, "why": why})
                return [NewEvent("merge.refused", {"reason": f"merge not accepted: {why}", "head": head,
                                                   "merged_by": {"login": login, "type": kind},
                                                   "merge_commit": merge_commit})], []
            tier, paths = self.tier(b)
            out.update({"outcome": "merged", "bug_id": bug_id, "merge_commit": merge_commit})
            events = [NewEvent("merge.recorded", {"merge_commit": merge_commit, "head": head, "tier": tier,
                                                  "paths": paths, "merged_by": {"login": login, "type": kind},
                                                  "approvals": [a for a in b.approvals if a["head"] == head]})]
            release = self._deployment_containing(merge_commit)
            jobs: list[NewJob] = []
            if release is not None:
                events.append(NewEvent("release.recorded", {**release, "reconciled": "deployment arrived first"}))
                jobs = self._release_jobs(b, release)
                out["released"] = release["commit"]
            return events, jobs
        self._update(bug_id, decide, idempotency_key=key)
        return out

    # -- 7. release --------------------------------------------------------------------------------

    def _deployments(self, repo: str) -> list[dict[str, Any]]:
        return [e.payload for e in self.ledger.read(f"desk/deploy/{repo}") if e.type == "deployment.recorded"]

    def _deployment_containing(self, merge_commit: str) -> dict[str, Any] | None:
        for dep in reversed(self._deployments(self.config.repo)):
            if self.forge.contains(self.config.repo, dep["commit"], merge_commit):
                return dict(dep)
        return None

    def _release_jobs(self, b: Bug, release: dict[str, Any]) -> list[NewJob]:
        return [NewJob(f"{b.bug_id}:notify:released:{b.round}:{rid}", NOTIFY,
                       {"bug_id": b.bug_id, "report_id": rid, "kind": "released", "round": b.round,
                        "commit": release["commit"]}) for rid in sorted(b.reports)]

    def record_deployment(self, actor: Actor, repo: str, commit: str, environment: str, url: str,
                          key: str | None = None, check_health: Callable[[str, str, str], dict[str, Any]] | None = None,
                          also: Sequence[str] = ()) -> dict[str, Any]:
        """The trusted recorder: the exact commit must exist (fail closed), the environment must be
        production, the health endpoint must name the expected service and commit. The deployment is
        kept in the history; every merged bug whose merge it contains is released."""
        from signoff.desk.release import health_check

        require(actor, "recorder", what="record a deployment")
        if repo != self.config.repo:
            raise RefusedError(f"repository {repo!r} is not the desk's repository", f"record {self.config.repo}")
        dcase = f"desk/deploy/{repo}"
        problem = None
        health: dict[str, Any] = {}
        if not re.fullmatch(r"[0-9a-f]{40}", commit):
            problem = f"{commit!r} is not a full commit SHA"
        elif not self.forge.has_commit(repo, commit):
            problem = f"commit {commit[:12]} cannot be found in {repo}: failing closed"
        elif environment != self.config.production_environment:
            problem = f"environment {environment!r} is not {self.config.production_environment!r}"
        else:
            # Every endpoint of the deployment (say, the immutable URL and the public domain) must answer.
            for target in (url, *also):
                health = (check_health or health_check)(target, self.config.service, commit)
                if not health.get("ok"):
                    problem = f"health check failed: {health.get('why')}"
                    break
            health = {"ok": problem is None, "urls": [url, *also], "service": self.config.service, "commit": commit}
        if problem:
            self.ledger.append(dcase, None, [NewEvent("deployment.rejected", {
                "commit": commit, "environment": environment, "url": url, "reason": problem, "by": actor.name})],
                idempotency_key=key)
            return {"outcome": "deployment_rejected", "why": problem}
        number = self.ledger.next_number(f"desk.deploy.{repo}")
        evidence = self._release_evidence(repo, commit, environment, [url, *also], actor.name, number)
        dep = {"deployment_id": number, "commit": commit, "environment": environment, "url": url,
               "health": health, "recorded_by": actor.name, "evidence_kind": "measured", "evidence": evidence}
        self.ledger.append(dcase, None, [NewEvent("deployment.recorded", dep)],
                           idempotency_key=(key + ":dep") if key else None)
        released = []
        for bug in self.bugs():
            if bug.state != "merged" or bug.merge is None:
                continue
            merge_commit = bug.merge["merge_commit"]
            if not self.forge.contains(repo, commit, merge_commit):
                continue

            def decide(b: Bug, mc: str = merge_commit) -> tuple[list[NewEvent], list[NewJob]]:
                if b.state != "merged" or b.merge is None or b.merge["merge_commit"] != mc:
                    return [], []
                return [NewEvent("release.recorded", dep)], self._release_jobs(b, dep)
            self._update(bug.bug_id, decide, idempotency_key=(f"{key}:{bug.bug_id}" if key else
                                                              f"desk:release:{bug.bug_id}:{number}"))
            released.append(bug.bug_id)
        return {"outcome": "deployment_recorded", "deployment_id": number, "released": released}

    def _release_evidence(self, repo: str, commit: str, environment: str, urls: list[str], by: str,
                          number: int) -> str:
        """A signed in-toto statement of what the recorder measured (key `desk-recorder`)."""
        from signoff.trust import KeyStore, statement, subject, write_evidence

        st = statement([subject(f"git:{repo}", gitCommit=commit)], RELEASE_PREDICATE, {
            "kind": "measured", "repository": repo, "commit": commit, "environment": environment,
            "health": {"urls": urls, "service": self.config.service, "commit": commit, "ok": True},
            "recorded_by": by, "deployment_id": number})
        key = KeyStore(self.settings.keys_dir).ensure("desk-recorder")
        return str(write_evidence(st, key, self.settings.evidence_dir, stem=f"desk-release-{commit[:12]}-{number}"))

    def human_resume(self, actor: Actor, bug_id: str, state: str) -> Bug:
        """A person takes a bug out of needs_human (back to reproduction, fixing or review)."""
        require(actor, "owner", what="resume a bug")
        if not actor.human:
            raise RefusedError("only a person may resume a bug", "use a human owner credential")
        if state not in ("reproducing", "fixing", "in_review"):
            raise UsageError(f"cannot resume into {state!r}", "use reproducing, fixing or in_review")

        def decide(b: Bug) -> tuple[list[NewEvent], list[NewJob]]:
            if b.state != "needs_human":
                raise ConflictError(f"{bug_id} does not need a human (state {b.state})", "nothing to resume")
            jobs = []
            if state == "reproducing":
                jobs = [NewJob(f"{bug_id}:reproduce:{b.round}:resumed{b.version}", ENGINEERING,
                               {"bug_id": bug_id, "step": "reproduce", "round": b.round})]
            return [NewEvent("human.resumed", {"state": state, "by": actor.name})], jobs
        return self._update(bug_id, decide)


def webhook_secret(settings: Settings) -> bytes:
    """The forge's webhook signing secret: one per home, whichever process creates it first."""
    return shared_secret(settings.home / "desk" / "webhook.secret")


def forge_for(settings: Settings, ledger: Ledger) -> Forge:
    return Forge(settings.home / "desk" / "forge", ledger, webhook_secret(settings))


def open_desk(settings: Settings, ledger: Ledger | None = None) -> Desk:
    ledger = ledger or Ledger.open(settings)
    return Desk(ledger, settings, forge_for(settings, ledger))


__all__ = ["ENGINEERING", "NOTIFY", "Desk", "Intake", "Quarantined", "forge_for", "open_desk"]
