"""The repair workflow in rooms: a state machine over the ledger, driven by room messages.

A case moves REPORTED -> CONTRACT_PROPOSED -> APPROVED -> REPRODUCED -> FIX_REQUESTED -> CANDIDATE ->
VERIFIED | REJECTED | INCONCLUSIVE -> (another attempt, or) AWAITING_REVIEW -> ACCEPTED | DECLINED, with
BLOCKED when the base revision does not show the defect, and ABANDONED when its operator ends it
(the operator may also resume a case stuck on a lost hand-off, and ask for another attempt once
the attempts have ended: RETRY_REQUESTED, then the next hand-off). Every transition is an event on the case
(`repair.case.<id>`); every effect (a room message, a document, an execution, a commit) is an outbox
job written in the same transaction as the event that causes it, and every job handler first checks
whether its effect already happened, so a restart at any point resumes without repeating one.

The parts: `model` (the contract, the typed events and the fold), `decisions` (the rules as pure
decisions), `service` (the facade every face calls: it reads, decides and records), `jobs` (the
effects, one handler per topic) and `fixer` (the fixer agent's side). `RepairWorkflow` is the
verifier agent's side: it turns room deliveries into the service's typed commands.
"""

from __future__ import annotations

from typing import Any

from signoff.kernel.errors import NotFoundError, SignoffError
from signoff.kernel.settings import Settings
from signoff.ledger import Job, Outbox, SqlLedger, Worker
from signoff.repair import decisions
from signoff.repair.decisions import DefectReport, Move, OperatorCommand
from signoff.repair.fixer import FixerWorker
from signoff.repair.jobs import TOPICS, RepairJobs
from signoff.repair.model import CaseState, Contract
from signoff.repair.rooms import RepairRooms
from signoff.repair.service import RepairService
from signoff.rooms.client import Person, is_automated_notice

__all__ = ["CaseState", "Contract", "FixerWorker", "RepairWorkflow"]


class RepairWorkflow:
    """The verifier agent's side: reads its room deliveries, keeps cases, runs the outbox jobs."""

    def __init__(self, ledger: SqlLedger, rooms: RepairRooms, settings: Settings, fixer_name: str,
                 max_attempts: int = 2) -> None:
        self.ledger, self.rooms, self.settings = ledger, rooms, settings
        self.service = RepairService(ledger, settings, rooms.agent_id)
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
        self.service.watch(room_id, contract, operator.sender, operator.name, self.rooms.name)

    def case(self, case_id: str) -> CaseState:
        return self.service.case(case_id)

    def cases(self) -> list[CaseState]:
        return self.service.cases()

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
        moved = decisions.parse_stuck(body, self.rooms.name)
        if moved is not None:
            self._on_stuck(moved, message_id, room_id, sender)
            return
        parsed = decisions.parse_command(body, self.rooms.name)
        if parsed is None:
            self.service.report(DefectReport(message_id, room_id, sender, body))
            return
        self.service.decide(OperatorCommand(parsed.verb, parsed.case_id, parsed.exact, message_id, room_id, sender,
                                            candidate=parsed.commit, shown=parsed.shown), self.rooms.name)

    def on_card(self, env: dict[str, Any]) -> None:
        """An answer on one of the verifier's approval cards (`approval_outcome`, addressed to the
        requester): decided by the same rules as the typed command, by the responder the server
        authenticated. Anything that is not an answer on a card of ours changes nothing."""
        p = env.get("payload") or {}
        if env.get("type") != "approval_outcome" or p.get("addressed") is not True \
                or p.get("requester_agent_id") != self.rooms.agent_id:
            return
        request_id = str(p.get("request_id") or "")
        case_id = decisions.card_case(request_id)
        try:
            st = self.case(case_id)
        except NotFoundError:
            return
        command = decisions.card_command(st, {**p, "room_id": env.get("room_id")})
        if command is not None:
            self.service.decide(command, self.rooms.name)

    def _on_stuck(self, moved: tuple[str, str, str], message_id: str, room_id: str, sender: str) -> None:
        """The operator resumes, abandons or retries a case from the room."""
        verb, case_id, reason = moved
        watch = self.service.watched(room_id)
        # The name replies use comes from the watch, and only for the operator it bound.
        name = watch.operator_name if watch is not None and sender == watch.operator else ""
        self.service.move(case_id, Move(verb, sender, name, reason, "room", decisions.message_key(message_id),
                                        room_id))
