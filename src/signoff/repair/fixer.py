"""The fixer agent's side of a repair case.

It acts only on a hand-off whose server receipt matches the one the verifier recorded when it sent
it, asks `signoff.agents` for full-file replacements of the allowed paths, and records the proposal
(or the refused attempt) on the case; the verifier's jobs take it from there.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from signoff import git
from signoff.kernel.errors import NotFoundError, SignoffError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.repair import decisions
from signoff.repair.case import read_case, record
from signoff.repair.model import FINAL, FIXER_LOG, CaseState, HandoffRefused, case_key
from signoff.repair.rooms import RepairRooms
from signoff.rooms import handoff_matches

_MAX_FILE_BYTES = 100_000  # larger files are not shown to the fixer


class FixerWorker:
    """Reads the fixer agent's room deliveries and answers the verifier's hand-offs."""

    def __init__(self, ledger: SqlLedger, rooms: RepairRooms, settings: Settings, max_attempts: int,
                 script: str | None = None, receipt_wait: float = 0.0) -> None:
        self.ledger, self.rooms, self.settings = ledger, rooms, settings
        self.max_attempts, self.script = max_attempts, script
        # As its own process the fixer can see a hand-off before the verifier has recorded its
        # receipt (it records it right after the server answers): wait this long for it.
        self.receipt_wait = receipt_wait

    def poll(self) -> int:
        done = 0
        for env in self.rooms.events():
            if env.get("type") == "message" and (env.get("payload") or {}).get("addressed"):
                self.on_message(env)
                done += 1
        return done

    def _handoff(self, env: dict[str, Any]) -> tuple[CaseState, int] | None:
        """The case and attempt of a genuine hand-off: the verifier's recorded receipt and command id."""
        body = str(env["payload"].get("body", ""))
        try:
            command = json.loads(body.split(" ", 1)[1].rsplit(" [ref ", 1)[0])
            case_id, attempt = str(command["case_id"]), int(command["attempt"])
            st = read_case(self.ledger, case_id)
        except (ValueError, KeyError, IndexError, TypeError, NotFoundError):
            return None
        recorded = st.handoffs.get(attempt) or self._await_receipt(st, attempt)
        if recorded is None or not handoff_matches(env, recorded["receipt"]) or \
                command.get("command_id") != recorded["command_id"]:
            return None
        return st, attempt

    def _await_receipt(self, st: CaseState, attempt: int) -> dict[str, Any] | None:
        """The verifier's record of hand-off `attempt`, once written, while that attempt is the
        next one the case can ask for; None when it is not, or not within `receipt_wait`."""
        if st.state in FINAL or attempt != st.attempt + 1 or attempt > self.max_attempts:
            return None
        deadline = time.monotonic() + self.receipt_wait
        while time.monotonic() < deadline:
            time.sleep(0.1)
            found = read_case(self.ledger, st.case_id).handoffs.get(attempt)
            if found is not None:
                return found
        return None

    def on_message(self, env: dict[str, Any]) -> None:
        from signoff.agents import ProposalRejected, agent_for

        p = env["payload"]
        idem = f"repair:fixer:{p['message_id']}"
        found = self._handoff(env)
        if found is None:
            room_id = env.get("room_id")
            refused = HandoffRefused(message_id=str(p["message_id"]), room_id=None if room_id is None else str(room_id),
                                     sender=None if p.get("sender") is None else str(p["sender"]))
            self.ledger.append(FIXER_LOG.prefix + self.rooms.agent_id, None, [refused.new_event()],
                               [decisions.say(str(room_id), "hand-off refused: this message is not the verifier's "
                                              "recorded hand-off (receipt mismatch).", idem)],
                               idempotency_key=idem)
            return
        st, attempt = found
        if not st.open_attempt(attempt):
            return  # already acted on (a redelivery after a restart)
        case_id, c = st.case_id, st.contract
        repo = git.open_repo(Path(c.repo))
        files = {}
        for path in git.tracked_paths(repo, st.base):
            data = git.read_file_at(repo, st.base, path)
            if data is not None and len(data) < _MAX_FILE_BYTES:
                files[path] = data.decode("utf-8", errors="replace")
        task = {"case_id": case_id, "attempt": attempt, "behaviour": c.behaviour, "base": st.base,
                "allowed_paths": list(c.allow), "files": files}
        agent = agent_for("fixer", self.settings, self.ledger, script=self.script or c.fixer_script)
        try:
            proposal = agent.propose(task, client=f"repair:{case_id}", case_id=case_key(case_id),
                                     allowed_paths=list(c.allow) or None)
        except SignoffError as exc:
            # A rejected proposal, a spent budget or a provider that gave no reply: a failed attempt,
            # recorded and said in the room; the next attempt (or the review) follows.
            why = exc.reason if isinstance(exc, ProposalRejected) else exc.message
            record(self.ledger, case_id, decisions.FailAttempt(attempt, why, self.max_attempts, idem), idem)
            return
        proposed = decisions.Propose(attempt, proposal.output, proposal.kind, proposal.provider, proposal.model,
                                     proposal.record)
        record(self.ledger, case_id, proposed, idem)
