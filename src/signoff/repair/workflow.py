"""The repair workflow in rooms: a state machine over the ledger, driven by room messages.

A case moves REPORTED -> CONTRACT_PROPOSED -> APPROVED -> REPRODUCED -> FIX_REQUESTED -> CANDIDATE ->
VERIFIED | REJECTED | INCONCLUSIVE -> (another attempt, or) AWAITING_REVIEW -> ACCEPTED | DECLINED, with
BLOCKED when the base revision does not show the defect. Every transition is an event on the case
(`repair.case.<id>`); every effect (a room message, a document, an execution, a commit) is an outbox
job written in the same transaction as the event that causes it, and every job handler first checks
whether its effect already happened, so a restart at any point resumes without repeating one.

Authority is checked from what the room server recorded, never from message text:
- approval, acceptance and rejection count only as the exact command `@<verifier> approve <case>`
  in the case room, addressed, from the linked operator, and (for approval) only while the harness
  still digests to what was presented;
- the fixer acts only on a message whose server receipt matches the one the verifier recorded when
  it sent the hand-off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import NotFoundError, SignoffError
from signoff.kernel.settings import Settings
from signoff.ledger import Event, Job, Ledger, NewEvent, NewJob, Outbox, Worker
from signoff.repair.harness import freeze, harness_digest
from signoff.repair.verdict import VERIFIED
from signoff.repair.verifier import VerifyRequest, harness_store, verify
from signoff.rooms import Principal, Receipt, RoomService, handoff_matches
from signoff.rooms.client import Person

STATES = ("REPORTED", "CONTRACT_PROPOSED", "APPROVED", "REPRODUCED", "BLOCKED", "FIX_REQUESTED", "CANDIDATE",
          "VERIFIED", "REJECTED", "INCONCLUSIVE", "AWAITING_REVIEW", "ACCEPTED", "DECLINED")
FINAL = ("ACCEPTED", "DECLINED", "BLOCKED")
TOPICS = ("repair.say", "repair.present", "repair.reproduce", "repair.handoff", "repair.commit",
          "repair.verify", "repair.review")
_COMMAND = re.compile(r"\b(approve|accept|reject)\s+([A-Za-z0-9][\w.-]*)")


def case_key(case_id: str) -> str:
    return f"repair.case.{case_id}"


@dataclass(frozen=True)
class Contract:
    """What "fixed" means for cases reported in one room: authored in advance, presented, approved."""

    name: str
    behaviour: str
    repo: str
    base: str
    harness: str
    expect: str
    regression: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    runner: str = "pytest"
    timeout: float = 60.0
    fixer_script: str = "default"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Contract:
        return cls(**d)


@dataclass
class CaseState:
    case_id: str
    state: str
    room_id: str
    operator: str  # the linked operator's sender id, opaque (as the server writes it)
    contract: Contract
    base: str
    harness_digest: str
    operator_name: str = ""  # whom replies @-mention (display only: commands are checked by `operator`)
    attempt: int = 0
    handoffs: dict[int, dict[str, Any]] = field(default_factory=dict)  # attempt -> {command_id, receipt}
    proposals: dict[int, dict[str, Any]] = field(default_factory=dict)
    failures: dict[int, str] = field(default_factory=dict)
    candidates: dict[int, str] = field(default_factory=dict)
    verdicts: dict[int, dict[str, Any]] = field(default_factory=dict)
    reproduction: dict[str, Any] | None = None
    history: list[str] = field(default_factory=list)

    @property
    def last_verdict(self) -> dict[str, Any] | None:
        return self.verdicts[max(self.verdicts)] if self.verdicts else None


_STATE_OF = {
    "repair.reported": "REPORTED", "repair.contract_proposed": "CONTRACT_PROPOSED", "repair.approved": "APPROVED",
    "repair.reproduced": "REPRODUCED", "repair.blocked": "BLOCKED", "repair.fix_requested": "FIX_REQUESTED",
    "repair.candidate": "CANDIDATE", "repair.review_requested": "AWAITING_REVIEW", "repair.accepted": "ACCEPTED",
    "repair.declined": "DECLINED",
}


def fold(events: list[Event]) -> CaseState | None:
    """The case's state from its events (the events are the source of truth)."""
    st: CaseState | None = None
    for ev in events:
        p = ev.payload
        if ev.type == "repair.reported":
            st = CaseState(p["case_id"], "REPORTED", p["room_id"], p["operator"], Contract.from_json(p["contract"]),
                           p["base"], p["harness_digest"], str(p.get("operator_name") or ""))
        if st is None:
            continue
        if ev.type in _STATE_OF:
            st.state = _STATE_OF[ev.type]
            st.history.append(st.state)
        if ev.type == "repair.reproduced":
            st.reproduction = p
        elif ev.type == "repair.fix_requested":
            st.attempt = int(p["attempt"])
            st.handoffs[int(p["attempt"])] = p
        elif ev.type == "repair.proposal":
            st.proposals[int(p["attempt"])] = p
        elif ev.type == "repair.attempt_failed":
            st.failures[int(p["attempt"])] = str(p["reason"])
        elif ev.type == "repair.candidate":
            st.candidates[int(p["attempt"])] = p["commit"]
        elif ev.type == "repair.verdict":
            st.verdicts[int(p["attempt"])] = p
            st.state = p["verdict"]
            st.history.append(st.state)
    return st


class RepairDesk:
    """The verifier agent's side: reads its room deliveries, keeps cases, runs the outbox jobs."""

    def __init__(self, ledger: Ledger, rooms: RoomService, settings: Settings, verifier: Principal,
                 fixer: Principal, max_attempts: int = 2) -> None:
        self.ledger, self.rooms, self.settings = ledger, rooms, settings
        self.verifier, self.fixer = verifier, fixer
        self.max_attempts = max_attempts
        # Only a SignoffError is a job's failure; anything else stops the loop with the lease held
        # (the job is delivered again once the lease lapses).
        self.worker = Worker(Outbox(ledger), {topic: self._run for topic in TOPICS}, failures=(SignoffError,),
                             error_text=lambda exc: exc.message if isinstance(exc, SignoffError) else str(exc))
        self._cursor = 0

    # -- set-up ---------------------------------------------------------------------------------

    def watch(self, room_id: str, contract: Contract, operator: Principal | Person) -> None:
        """Cases reported in `room_id` use `contract`; `operator` is the person whose commands count:
        a principal of the embedded server, or a person bound by sender id (`[rooms.people]`)."""
        self.ledger.append(f"repair.room.{room_id}", None, [NewEvent("repair.watch", {
            "room_id": room_id, "contract": contract.as_json(), "operator": operator.sender,
            "operator_name": operator.name})],
            idempotency_key=f"repair:watch:{room_id}:{canonical_digest(contract.as_json())}")

    def _watch(self, room_id: str) -> dict[str, Any] | None:
        events = self.ledger.read(f"repair.room.{room_id}")
        return events[-1].payload if events else None

    def case(self, case_id: str) -> CaseState:
        st = fold(self.ledger.read(case_key(case_id)))
        if st is None:
            raise NotFoundError(f"no repair case {case_id}", "list cases with `signoff repair cases`")
        return st

    def cases(self) -> list[CaseState]:
        out = []
        for key in self.ledger.case_ids("repair.case."):
            st = fold(self.ledger.read(key))
            if st is not None:
                out.append(st)
        return out

    # -- the loop -------------------------------------------------------------------------------

    def poll(self, max_steps: int = 1000) -> int:
        """Handle new messages and due jobs until nothing is left; returns how many were handled."""
        done = 0
        for _ in range(max_steps):
            progressed = False
            for env in self.rooms.agent_events(self.verifier.id, self._cursor):
                self._cursor = env["sequence"]
                if env.get("type") == "message":
                    self.on_message(env)
                    done += 1
                    progressed = True
            if self.worker.run_once():
                done += 1
                progressed = True
            if not progressed:
                break
        return done

    # -- messages -------------------------------------------------------------------------------

    def _say(self, room_id: str, text: str, key: str) -> NewJob:
        return NewJob(f"say:{key}", "repair.say", {"room_id": room_id, "text": text, "marker": key})

    def _log(self, key: str, events: list[NewEvent], jobs: list[NewJob], idem: str) -> None:
        self.ledger.append(key, None, events, jobs, idempotency_key=idem)

    def on_message(self, env: dict[str, Any]) -> None:
        p = env.get("payload") or {}
        if not p.get("addressed"):
            return  # not directed at the verifier: it is conversation, never a command
        message_id, room_id = str(p.get("message_id")), str(env.get("room_id"))
        body, sender = str(p.get("body", "")), str(p.get("sender", ""))
        idem = f"repair:msg:{message_id}"
        mention = f"@{self.verifier.name}"
        m = _COMMAND.search(body)
        if m is None:
            self._on_report(room_id, message_id, body, sender, idem)
            return
        verb, case_id = m.group(1), m.group(2)
        exact = body.strip() == f"{mention} {verb} {case_id}"
        desk_log = f"repair.desk.{self.verifier.id}"
        try:
            st = self.case(case_id)
        except NotFoundError:
            self._log(desk_log, [NewEvent("repair.command_refused", {"message_id": message_id, "reason": "unknown"})],
                      [self._say(room_id, f"{verb} refused: there is no case {case_id}.", idem)], idem)
            return
        # The harness is read once; the rules are applied to the case as it is when the decision is
        # written (Ledger.update), so a command checked against a state that moved meanwhile is
        # decided again, never recorded against the old state.
        digest = self._current_digest(st) if verb == "approve" and exact else ""
        self.ledger.update(case_key(case_id), lambda history: self._decide_command(
            _folded(history), verb, exact, message_id, room_id, sender, digest, idem), idempotency_key=idem)

    def _decide_command(self, st: CaseState, verb: str, exact: bool, message_id: str, room_id: str, sender: str,
                        digest: str, idem: str) -> tuple[list[NewEvent], list[NewJob]]:
        case_id, mention = st.case_id, f"@{self.verifier.name}"
        refusal = None
        if room_id != st.room_id:
            refusal = f"{verb} refused: commands for {case_id} count only in its case room."
        elif sender != st.operator:
            refusal = f"{verb} refused: only the linked operator can {verb} {case_id}."
        elif not exact:
            refusal = (f"{verb} refused: only the exact command `{mention} {verb} {case_id}` counts; "
                       "a quoted or embedded command does not.")
        elif verb == "approve" and st.state != "CONTRACT_PROPOSED":
            refusal = f"approve refused: {case_id} is {st.state}, not awaiting approval."
        elif verb in ("accept", "reject") and st.state != "AWAITING_REVIEW":
            refusal = f"{verb} refused: {case_id} is {st.state}, not awaiting review."
        elif verb == "accept" and (st.last_verdict or {}).get("verdict") != VERIFIED:
            refusal = f"accept refused: {case_id} has no VERIFIED candidate; it can only be rejected."
        elif verb == "approve" and digest != st.harness_digest:
            refusal = (f"approve refused: the harness changed since it was presented "
                       f"(presented {st.harness_digest[:12]}, now {digest[:12]}); nothing was approved.")
        if refusal is not None:
            return ([NewEvent("repair.command_refused", {"message_id": message_id, "verb": verb, "room_id": room_id,
                                                         "sender": sender, "reason": refusal})],
                    [self._say(room_id, refusal, idem)])
        if verb == "approve":
            return ([NewEvent("repair.approved", {"message_id": message_id, "by": sender,
                                                  "harness_digest": st.harness_digest})],
                    [NewJob(f"{case_id}:reproduce", "repair.reproduce", {"case_id": case_id}),
                     self._say(room_id, f"{case_id} approved (harness {st.harness_digest[:12]}); reproducing on "
                                        f"base {st.base[:12]}.", idem)])
        if verb == "accept":
            return ([NewEvent("repair.accepted", {"message_id": message_id, "by": sender,
                                                  "candidate": st.candidates.get(max(st.verdicts), "")})],
                    [self._say(room_id, f"{case_id} accepted.", idem)])
        return ([NewEvent("repair.declined", {"message_id": message_id, "by": sender})],
                [self._say(room_id, f"{case_id} rejected by review; closed.", idem)])

    def _record(self, case_id: str, still: Callable[[CaseState], bool], events: list[NewEvent],
                jobs: list[NewJob], idem: str) -> None:
        """Record a job's outcome on the case while `still` holds for the case as it is then; when
        another delivery of the job got there first, nothing is written."""

        def decide(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
            return (events, jobs) if still(_folded(history)) else ([], [])

        self.ledger.update(case_key(case_id), decide, idempotency_key=idem)

    def _current_digest(self, st: CaseState) -> str:
        try:
            return harness_digest(Path(st.contract.harness))
        except SignoffError:
            return "unreadable"

    def _on_report(self, room_id: str, message_id: str, body: str, sender: str, idem: str) -> None:
        watch = self._watch(room_id)
        if watch is None:
            return
        open_cases = [c for c in self.cases() if c.room_id == room_id and c.state not in FINAL]
        if open_cases:
            c = open_cases[0]
            self._log(f"repair.desk.{self.verifier.id}", [NewEvent("repair.noted", {"message_id": message_id})],
                      [self._say(room_id, f"{c.case_id} is open ({c.state}).", idem)], idem)
            return
        contract = Contract.from_json(watch["contract"])
        repo = git.open_repo(Path(contract.repo))
        base = git.resolve(repo, contract.base)
        frozen = freeze(Path(contract.harness), harness_store(self.settings))
        number = self.ledger.next_number(f"repair.{contract.name}")
        case_id = f"{contract.name}-{number:02d}"
        events = [
            NewEvent("repair.reported", {"case_id": case_id, "room_id": room_id, "message_id": message_id,
                                         "reporter": sender, "report": body[:4000], "operator": watch["operator"],
                                         "operator_name": watch["operator_name"],
                                         "contract": contract.as_json(), "base": base,
                                         "harness_digest": frozen.digest}),
            NewEvent("repair.contract_proposed", {"harness_digest": frozen.digest, "base": base}),
        ]
        jobs = [NewJob(f"{case_id}:present", "repair.present", {"case_id": case_id,
                                                                 "operator_name": watch["operator_name"]})]
        self.ledger.append(case_key(case_id), 0, events, jobs, idempotency_key=idem)

    # -- jobs -----------------------------------------------------------------------------------

    def _run(self, job: Job) -> None:
        self.run_job(job.topic, job.job_id, job.payload)

    def run_job(self, topic: str, key: str, payload: dict[str, Any]) -> None:
        handlers: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "repair.say": self._job_say, "repair.present": self._job_present,
            "repair.reproduce": self._job_reproduce, "repair.handoff": self._job_handoff,
            "repair.commit": self._job_commit, "repair.verify": self._job_verify, "repair.review": self._job_review,
        }
        handlers[topic](key, payload)

    def _posted(self, room_id: str, marker: str) -> dict[str, Any] | None:
        """The verifier's earlier message carrying `marker`, if an earlier run already posted it."""
        for msg in self.rooms.read_messages(self.verifier, room_id, after=0, limit=1000):
            if msg["sender"] == self.verifier.sender and marker in msg["body"]:
                return msg
        return None

    def _post(self, room_id: str, text: str, marker: str, targets: tuple[str, ...] = ()) -> Receipt:
        tag = f"[ref {canonical_digest(marker)[:10]}]"
        found = self._posted(room_id, tag)
        if found is not None:
            return Receipt(found["message_id"], room_id, found["sender"], found["body"], bool(targets),
                           found.get("thread_id"))
        return self.rooms.post_message(self.verifier, room_id, f"{text} {tag}", target_names=targets)

    def _job_say(self, key: str, p: dict[str, Any]) -> None:
        self._post(p["room_id"], p["text"], p["marker"])

    def _job_present(self, key: str, p: dict[str, Any]) -> None:
        st = self.case(p["case_id"])
        c = st.contract
        name = f"contract {st.case_id}"
        content = "\n".join([
            f"# Repair contract {st.case_id}", "", f"Expected behaviour: {c.behaviour}", "",
            f"- base revision: {st.base}", f"- harness digest: {st.harness_digest}",
            f"- expected test (must fail on base by an assertion, then pass): {c.expect}",
            f"- regression tests (must keep passing): {', '.join(c.regression) or 'none'}",
            f"- paths the fix may change: {', '.join(c.allow) or 'any'}",
            f"- runner: {c.runner}", "",
            f"Approve exactly this with `@{self.verifier.name} approve {st.case_id}`.",
        ])
        docs = {d["name"]: d for d in self.rooms.documents(self.verifier, st.room_id)}
        doc_id = docs[name]["document_id"] if name in docs else self.rooms.create_document(
            self.verifier, st.room_id, name, content, description="the executable contract of a repair case")
        self._post(st.room_id, f"@{p['operator_name']} contract for {st.case_id} is in document '{name}' "
                               f"(harness {st.harness_digest[:12]}, base {st.base[:12]}). Approve it with "
                               f"`@{self.verifier.name} approve {st.case_id}`.", key)
        self._record(st.case_id, lambda now: True, [NewEvent("repair.contract_presented", {"document_id": doc_id})],
                     [], f"repair:done:{key}")

    def _request(self, st: CaseState, **overrides: Any) -> VerifyRequest:
        c = st.contract
        fields: dict[str, Any] = dict(
            repo=Path(c.repo), base=st.base, candidate=st.base, harness=None, expect=c.expect,
            regression=list(c.regression), allow=list(c.allow), pythonpath=list(c.pythonpath), runner=c.runner,
            timeout=c.timeout, approved_digest=st.harness_digest, frozen_digest=st.harness_digest)
        fields.update(overrides)
        return VerifyRequest(**fields)

    def _job_reproduce(self, key: str, p: dict[str, Any]) -> None:
        st = self.case(p["case_id"])
        if st.reproduction is not None or st.state == "BLOCKED":
            return
        result = verify(self._request(st, stages=("base",)), self.settings)
        base = result.stages["base"].summary
        if base.assertion and base.outcome == "failed":
            events = [NewEvent("repair.reproduced", {"message": base.message, "fingerprint": result.fingerprint,
                                                     "evidence": str(result.evidence)})]
            jobs = [NewJob(f"{st.case_id}:handoff:1", "repair.handoff", {"case_id": st.case_id, "attempt": 1}),
                    self._say(st.room_id, f"{st.case_id} reproduced on base: {base.message.splitlines()[0]}",
                              f"{key}:said")]
        else:
            # Only the base stage ran; say why it did not show the defect (or why nothing ran).
            base_reasons = [r for r in result.reasons if r["detail"].startswith("base:") or
                            r["code"] in ("harness_changed", "sandbox_unavailable", "environment_unprepared",
                                          "export_failed")]
            why = "; ".join(r["detail"] or r["text"] for r in base_reasons) or base.outcome
            events = [NewEvent("repair.blocked", {"reason": why, "evidence": str(result.evidence)})]
            jobs = [self._say(st.room_id, f"{st.case_id} blocked: the expected assertion did not fail on base "
                                          f"({why}). No fix will be requested.", f"{key}:said")]
        self._record(st.case_id, lambda now: now.reproduction is None and now.state != "BLOCKED", events, jobs,
                     f"repair:done:{key}")

    def _job_handoff(self, key: str, p: dict[str, Any]) -> None:
        st = self.case(p["case_id"])
        attempt = int(p["attempt"])
        if attempt in st.handoffs:
            return
        command = {"command_id": canonical_digest({"case": st.case_id, "attempt": attempt})[:24],
                   "action": "propose_fix", "case_id": st.case_id, "base": st.base, "attempt": attempt}
        receipt = self._post(st.room_id, json.dumps(command, sort_keys=True), key, targets=(self.fixer.name,))
        self._record(st.case_id, lambda now: attempt not in now.handoffs, [NewEvent("repair.fix_requested", {
            "attempt": attempt, "command_id": command["command_id"], "receipt": receipt.to_dict()})], [],
            f"repair:done:{key}")

    def _job_commit(self, key: str, p: dict[str, Any]) -> None:
        st = self.case(p["case_id"])
        attempt = int(p["attempt"])
        if attempt in st.candidates:
            return
        proposal = st.proposals[attempt]
        repo = git.open_repo(Path(st.contract.repo))
        files = {f["path"]: f["content"] for f in proposal["files"]}
        message = f"{st.case_id} attempt {attempt}: {proposal['summary'][:200]}"
        commit = git.commit_files(repo, st.base, files, message,
                                      ref=f"refs/signoff/repair/{st.case_id}/{attempt}")
        self._record(st.case_id, lambda now: attempt not in now.candidates, [NewEvent("repair.candidate", {
            "attempt": attempt, "commit": commit})],
            [NewJob(f"{st.case_id}:verify:{attempt}", "repair.verify", {"case_id": st.case_id, "attempt": attempt})],
            f"repair:done:{key}")

    def _job_verify(self, key: str, p: dict[str, Any]) -> None:
        st = self.case(p["case_id"])
        attempt = int(p["attempt"])
        if attempt in st.verdicts:
            return
        commit = st.candidates[attempt]
        result = verify(self._request(st, candidate=commit), self.settings)
        diff = git.diff_text(git.open_repo(Path(st.contract.repo)), st.base, commit, limit=20_000)
        events = [NewEvent("repair.verdict", {
            "attempt": attempt, "candidate": commit, "verdict": result.verdict, "reasons": result.reasons,
            "fingerprint": result.fingerprint, "evidence": str(result.evidence), "diff": diff,
            "tamper": result.tamper})]
        self._record(st.case_id, lambda now: attempt not in now.verdicts, events,
                     [self._next(st, attempt, result.verdict)], f"repair:done:{key}")

    def _next(self, st: CaseState, attempt: int, verdict: str | None) -> NewJob:
        if verdict != VERIFIED and attempt < self.max_attempts:
            return NewJob(f"{st.case_id}:handoff:{attempt + 1}", "repair.handoff",
                          {"case_id": st.case_id, "attempt": attempt + 1})
        return NewJob(f"{st.case_id}:review", "repair.review", {"case_id": st.case_id})

    def after_failed_attempt(self, st: CaseState, attempt: int) -> NewJob:
        return self._next(st, attempt, None)

    def _job_review(self, key: str, p: dict[str, Any]) -> None:
        st = self.case(p["case_id"])
        if st.state in ("AWAITING_REVIEW", *FINAL):
            return
        v = st.last_verdict
        if v is None:
            text = (f"@{self._operator_name(st)} {st.case_id}: no candidate after {self.max_attempts} attempts "
                    f"({'; '.join(st.failures.values())}). Reply `@{self.verifier.name} reject {st.case_id}`.")
        else:
            name = f"review {st.case_id} attempt {v['attempt']}"
            docs = {d["name"] for d in self.rooms.documents(self.verifier, st.room_id)}
            if name not in docs:
                self.rooms.create_document(self.verifier, st.room_id, name,
                                           f"verdict {v['verdict']}\nevidence {v['evidence']}\n\n{v['diff']}",
                                           description="verdict, evidence and diff of a repair candidate")
            action = (f"`@{self.verifier.name} accept {st.case_id}` or `@{self.verifier.name} reject {st.case_id}`"
                      if v["verdict"] == VERIFIED else f"`@{self.verifier.name} reject {st.case_id}`")
            text = (f"@{self._operator_name(st)} {st.case_id}: {v['verdict']} for candidate {v['candidate'][:12]} "
                    f"(fingerprint {v['fingerprint'][:12]}); diff and evidence in document '{name}', "
                    f"evidence file {v['evidence']}. Reply {action}.")
        self._post(st.room_id, text, key)
        self._record(st.case_id, lambda now: now.state not in ("AWAITING_REVIEW", *FINAL),
                     [NewEvent("repair.review_requested", {})], [], f"repair:done:{key}")

    def _operator_name(self, st: CaseState) -> str:
        # Sender ids are opaque (a Matrix id on Switch): the name comes from the watch, never from
        # parsing the id. Cases reported before the name was recorded fall back to the id itself.
        return st.operator_name or st.operator


class FixerWorker:
    """The fixer agent's side: acts only on hand-offs whose receipt matches the verifier's record,
    asks `signoff.agents` for full-file replacements of allowed paths, and records the proposal."""

    def __init__(self, desk: RepairDesk, fixer: Principal, script: str | None = None) -> None:
        self.desk, self.fixer, self.script = desk, fixer, script
        self._cursor = 0

    def poll(self) -> int:
        done = 0
        for env in self.desk.rooms.agent_events(self.fixer.id, self._cursor):
            self._cursor = env["sequence"]
            if env.get("type") == "message" and (env.get("payload") or {}).get("addressed"):
                self.on_message(env)
                done += 1
        return done

    def on_message(self, env: dict[str, Any]) -> None:
        from signoff.agents import ProposalRejected, agent_for

        desk = self.desk
        p = env["payload"]
        idem = f"repair:fixer:{p['message_id']}"
        body = str(p.get("body", ""))
        try:
            command = json.loads(body.split(" ", 1)[1].rsplit(" [ref ", 1)[0])
            case_id, attempt = str(command["case_id"]), int(command["attempt"])
            st = desk.case(case_id)
        except (ValueError, KeyError, IndexError, TypeError, NotFoundError):
            command, st, attempt = None, None, 0
        record = st.handoffs.get(attempt) if st is not None else None
        if st is None or record is None or not handoff_matches(env, record["receipt"]) or \
                command.get("command_id") != record["command_id"]:  # type: ignore[union-attr]
            desk.ledger.append(f"repair.fixer.{self.fixer.id}", None, [NewEvent("repair.handoff_refused", {
                "message_id": p["message_id"], "room_id": env.get("room_id"), "sender": p.get("sender")})],
                [NewJob(f"say:{idem}", "repair.say", {"room_id": env.get("room_id"), "marker": idem,
                                                      "text": "hand-off refused: this message is not the "
                                                              "verifier's recorded hand-off (receipt mismatch)."})],
                idempotency_key=idem)
            return
        if not _open_attempt(st, attempt):
            return  # already acted on (a redelivery after a restart)
        c = st.contract
        repo = git.open_repo(Path(c.repo))
        files = {}
        for path in git.tracked_paths(repo, st.base):
            data = git.read_file_at(repo, st.base, path)
            if data is not None and len(data) < 100_000:
                files[path] = data.decode("utf-8", errors="replace")
        task = {"case_id": case_id, "attempt": attempt, "behaviour": c.behaviour, "base": st.base,
                "allowed_paths": list(c.allow), "files": files}
        agent = agent_for("fixer", desk.settings, desk.ledger, script=self.script or c.fixer_script)
        try:
            proposal = agent.propose(task, client=f"repair:{case_id}", case_id=case_key(case_id),
                                     allowed_paths=list(c.allow) or None)
        except SignoffError as exc:
            # A rejected proposal, a spent budget or a provider that gave no reply: a failed attempt,
            # recorded and said in the room; the next attempt (or the review) follows.
            why = exc.reason if isinstance(exc, ProposalRejected) else exc.message
            desk._record(case_id, lambda now: _open_attempt(now, attempt), [NewEvent("repair.attempt_failed", {
                "attempt": attempt, "reason": why})],
                [desk.after_failed_attempt(st, attempt),
                 desk._say(st.room_id, f"{case_id} attempt {attempt}: the fixer's proposal was refused "
                                       f"({why}).", idem)], idem)
            return
        out = proposal.output
        desk._record(case_id, lambda now: _open_attempt(now, attempt), [NewEvent("repair.proposal", {
            "attempt": attempt, "summary": out["summary"], "files": out["files"], "kind": proposal.kind,
            "provider": proposal.provider, "model": proposal.model, "record": proposal.record})],
            [NewJob(f"{case_id}:commit:{attempt}", "repair.commit", {"case_id": case_id, "attempt": attempt})], idem)


def _folded(history: list[Event]) -> CaseState:
    st = fold(history)
    if st is None:  # cases are never deleted: one that was read before still exists
        raise NotFoundError("the repair case has no report event", "check the ledger with `signoff ledger verify`")
    return st


def _open_attempt(st: CaseState, attempt: int) -> bool:
    """The fixer has not acted on this attempt yet."""
    return attempt not in st.proposals and attempt not in st.failures


