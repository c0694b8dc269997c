"""The repair workflow in rooms: a state machine over the ledger, driven by room messages.

A case moves REPORTED -> CONTRACT_PROPOSED -> APPROVED -> REPRODUCED -> FIX_REQUESTED -> CANDIDATE ->
VERIFIED | REJECTED | INCONCLUSIVE -> (another attempt, or) AWAITING_REVIEW -> ACCEPTED | DECLINED, with
BLOCKED when the base revision does not show the defect, and ABANDONED when its operator ends it
(`stuck`: the operator may also resume a case stuck on a lost hand-off). Every transition is an event on the case
(`repair.case.<id>`); every effect (a room message, a document, an execution, a commit) is an outbox
job written in the same transaction as the event that causes it, and every job handler first checks
whether its effect already happened, so a restart at any point resumes without repeating one.

The parts: `case` (the contract, the fold and reading cases), `commands` (the rules as pure
decisions), `jobs` (the effects, one handler per topic) and `fixer` (the fixer agent's side).
`RepairWorkflow` is the verifier agent's side and the one entry point to them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import NotFoundError, SignoffError
from signoff.kernel.settings import Settings
from signoff.ledger import Job, NewEvent, Outbox, SqlLedger, Worker
from signoff.repair import commands, stuck
from signoff.repair.case import FINAL, CaseState, Contract, case_key, folded, read_case, read_cases
from signoff.repair.commands import DefectReport, OperatorCommand
from signoff.repair.fixer import FixerWorker
from signoff.repair.harness import digest_now, freeze
from signoff.repair.jobs import TOPICS, RepairJobs
from signoff.repair.rooms import RepairRooms
from signoff.repair.verifier import harness_store
from signoff.rooms.client import Person, is_automated_notice

__all__ = ["CaseState", "Contract", "FixerWorker", "RepairWorkflow"]


def watch_room(ledger: SqlLedger, room_id: str, contract: Contract, operator: Person, verifier_name: str) -> None:
    """Cases reported in `room_id` use `contract`; `operator` is the person whose commands count,
    bound by the sender id the server writes (`Identities`: configured, or the embedded server's
    directory), never by a name in a message; commands address the agent `verifier_name`."""
    ledger.append(f"repair.room.{room_id}", None, [NewEvent("repair.watch", {
        "room_id": room_id, "contract": contract.as_json(), "operator": operator.sender,
        "operator_name": operator.name, "verifier_name": verifier_name})],
        idempotency_key=f"repair:watch:{room_id}:{canonical_digest(contract.as_json())}")


class RepairWorkflow:
    """The verifier agent's side: reads its room deliveries, keeps cases, runs the outbox jobs."""

    def __init__(self, ledger: SqlLedger, rooms: RepairRooms, settings: Settings, fixer_name: str,
                 max_attempts: int = 2) -> None:
        self.ledger, self.rooms, self.settings = ledger, rooms, settings
        self.fixer_name = fixer_name
        self.max_attempts = max_attempts
        self.jobs = RepairJobs(ledger, rooms, settings, fixer_name, max_attempts)
        # Only a SignoffError is a job's failure; anything else stops the loop with the lease held
        # (the job is delivered again once the lease lapses).
        self.worker = Worker(Outbox(ledger), {topic: self._run for topic in TOPICS}, failures=(SignoffError,),
                             error_text=lambda exc: exc.message if isinstance(exc, SignoffError) else str(exc))

    def fixer_worker(self, fixer_rooms: RepairRooms, script: str | None = None) -> FixerWorker:
        """The fixer agent's side of this workflow (`script` overrides the contract's scripted fixer)."""
        return FixerWorker(self.ledger, fixer_rooms, self.settings, self.max_attempts, script)

    # -- set-up and reading ---------------------------------------------------------------------

    def watch(self, room_id: str, contract: Contract, operator: Person) -> None:
        watch_room(self.ledger, room_id, contract, operator, self.rooms.name)

    def _watch(self, room_id: str) -> dict[str, Any] | None:
        events = self.ledger.read(f"repair.room.{room_id}")
        return events[-1].payload if events else None

    def case(self, case_id: str) -> CaseState:
        return read_case(self.ledger, case_id)

    def cases(self) -> list[CaseState]:
        return read_cases(self.ledger)

    # -- the loop -------------------------------------------------------------------------------

    def poll(self, max_steps: int = 1000) -> int:
        """Handle new messages and due jobs until nothing is left; returns how many were handled."""
        done = 0
        for _ in range(max_steps):
            progressed = False
            for env in self.rooms.events():
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

    def _run(self, job: Job) -> None:
        self.run_job(job.topic, job.job_id, job.payload)

    def run_job(self, topic: str, key: str, payload: dict[str, Any]) -> None:
        self.jobs.run(topic, key, payload)

    # -- messages -------------------------------------------------------------------------------

    def on_message(self, env: dict[str, Any]) -> None:
        p = env.get("payload") or {}
        if not p.get("addressed"):
            return  # not directed at the verifier: it is conversation, never a command
        if is_automated_notice(env):
            return  # the server's own notice (Switch's "I'm currently offline", a refusal): never answered
        message_id, room_id = str(p.get("message_id")), str(env.get("room_id"))
        body, sender = str(p.get("body", "")), str(p.get("sender", ""))
        moved = stuck.parse_stuck(body, self.rooms.name)
        if moved is not None:
            self._on_stuck(moved, message_id, room_id, sender)
            return
        parsed = commands.parse_command(body, self.rooms.name)
        if parsed is None:
            self._on_report(DefectReport(message_id, room_id, sender, body))
            return
        verb, case_id, exact, commit = parsed
        command = OperatorCommand(verb, case_id, exact, message_id, room_id, sender, candidate=commit)
        try:
            st = self.case(case_id)
        except NotFoundError:
            events, jobs = commands.refuse_unknown(command)
            self.ledger.append(self._verifier_log, None, events, jobs, idempotency_key=command.key)
            return
        # The harness is read once; the rules are applied to the case as it is when the decision is
        # written (Ledger.update), so a command checked against a state that moved meanwhile is
        # decided again, never recorded against the old state.
        if verb == "approve" and exact:
            command = replace(command, harness_digest=digest_now(Path(st.contract.harness)))
        self.ledger.update(case_key(case_id), lambda history: commands.decide(
            folded(history), command, self.rooms.name), idempotency_key=command.key)

    def on_card(self, env: dict[str, Any]) -> None:
        """An answer on one of the verifier's approval cards (`approval_outcome`, addressed to the
        requester): decided by the same rules as the typed command, by the responder the server
        authenticated. Anything that is not an answer on a card of ours changes nothing."""
        p = env.get("payload") or {}
        if env.get("type") != "approval_outcome" or p.get("addressed") is not True \
                or p.get("requester_agent_id") != self.rooms.agent_id:
            return
        request_id = str(p.get("request_id") or "")
        case_id = request_id.removeprefix("repair-card:").rsplit(":", 1)[0]
        try:
            st = self.case(case_id)
        except NotFoundError:
            return
        command = commands.card_command(st, {**p, "room_id": env.get("room_id")})
        if command is None:
            return
        if command.verb == "approve":
            command = replace(command, harness_digest=digest_now(Path(st.contract.harness)))
        self.ledger.update(case_key(case_id), lambda history: commands.decide(
            folded(history), command, self.rooms.name), idempotency_key=command.key)

    def _on_stuck(self, moved: tuple[str, str, str], message_id: str, room_id: str, sender: str) -> None:
        """The operator resumes or abandons a stuck case from the room (`repair.stuck`)."""
        verb, case_id, reason = moved
        key = commands.message_key(message_id)
        try:
            self.case(case_id)
        except NotFoundError:
            self.ledger.append(self._verifier_log, None, [NewEvent("repair.command_refused", {
                "message_id": message_id, "reason": "unknown"})],
                [commands.say(room_id, f"{verb} refused: there is no case {case_id}.", key)], idempotency_key=key)
            return
        name = str((self._watch(room_id) or {}).get("operator_name") or "")
        self.ledger.update(case_key(case_id), lambda history: stuck.decision(
            folded(history), verb, sender, name if sender == folded(history).operator else "", reason, "room",
            key, room_id), idempotency_key=key)

    @property
    def _verifier_log(self) -> str:
        return f"repair.desk.{self.rooms.agent_id}"

    def _on_report(self, report: DefectReport) -> None:
        watch = self._watch(report.room_id)
        if watch is None:
            return
        open_cases = [c for c in self.cases() if c.room_id == report.room_id and c.state not in FINAL]
        if open_cases:
            events, jobs = commands.note_open(open_cases[0], report)
            self.ledger.append(self._verifier_log, None, events, jobs, idempotency_key=report.key)
            return
        contract = Contract.from_json(watch["contract"])
        repo = git.open_repo(Path(contract.repo))
        base = git.resolve(repo, contract.base)
        frozen = freeze(Path(contract.harness), harness_store(self.settings))
        number = self.ledger.next_number(f"repair.{contract.name}")
        case_id = f"{contract.name}-{number:02d}"
        events, jobs = commands.open_case(case_id, report, watch, base, frozen.digest)
        self.ledger.append(case_key(case_id), 0, events, jobs, idempotency_key=report.key)
