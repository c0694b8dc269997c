"""The concierge: delivers desk notifications from the outbox to reporters.

Every notification is a job written with the state change that caused it. Delivery appends a
notice to the reporter's tracking page (ledger case `desk/inbox/<report>`, idempotent on the job
id) and, where the report is linked to a room user, asks an approval card whose request id derives
from the job id (uuid5), so a retried delivery asks the same card. Card answers are collected by
`collect_answers`: a wrong responder's answer is discarded by the rooms layer; a stale answer (the
bug moved on) is acknowledged and dropped. A "no" carries the reason its reporter posted with the
answer (the web console's answer form posts it), through the airlock; without one the reporter is
asked for it on the tracking page.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from signoff.desk.credentials import DeskCaller, require
from signoff.desk.workflow import NOTIFY, Desk, Quarantined
from signoff.kernel.errors import ConflictError
from signoff.ledger import Job, NewEvent, Outbox, Worker

LEASE_SECONDS = 60
CARD_NS = uuid.UUID("6f1c1a52-5d57-4a55-9b35-3f0d1f0f2b11")
TEXT = {
    "reproduced": "{bug} was reproduced by a failing test. Is this the bug you saw?",
    "released": "{bug} is fixed in {commit} and is live now. Does it work for you?",
}
TITLE = {"reproduced": "Is this the bug you saw?", "released": "Does the live fix work for you?"}


def notice_text(payload: dict[str, Any]) -> str:
    """What a notification job tells its reporter."""
    return TEXT[payload["kind"]].format(bug=payload["bug_id"], commit=str(payload.get("commit", ""))[:12])


def card_id(job_id: str) -> str:
    return str(uuid.uuid5(CARD_NS, job_id))


@dataclass
class RoomLink:
    """Where cards go: the rooms service, the concierge's agent and the room."""

    rooms: Any  # signoff.rooms.RoomService
    agent: Any  # the concierge's rooms Principal (an agent)
    room_id: str
    users: dict[str, str]  # report id -> rooms user name of its reporter


class Concierge:
    def __init__(self, desk: Desk, actor: DeskCaller, link: RoomLink | None = None) -> None:
        require(actor, "concierge", what="deliver notifications")
        self.desk = desk
        self.actor = actor
        self.link = link

        def handle(job: Job) -> None:
            self.deliver(job)

        # A failed delivery is recorded on the job and retried with backoff.
        self.outbox = Outbox(desk.ledger, lease_seconds=LEASE_SECONDS)
        self.worker = Worker(self.outbox, {NOTIFY: handle})

    def deliver(self, job: Job) -> dict[str, Any]:
        """Put the job's notice on its reporter's tracking page (and ask the card, when linked);
        idempotent on the job id, so a retried delivery adds nothing."""
        p = job.payload
        case = f"desk/inbox/{p['report_id']}"
        notice = {"job_id": job.job_id, "kind": p["kind"], "bug_id": p["bug_id"], "round": p["round"],
                  "text": notice_text(p)}
        card = None
        if self.link is not None and p["report_id"] in self.link.users:
            card = card_id(job.job_id)
            self.link.rooms.request_approval(
                self.link.agent, self.link.room_id, card, TITLE[p["kind"]],
                [{"id": "yes", "label": "Yes", "decision": "accept"},
                 {"id": "no", "label": "No", "decision": "decline"}],
                expires_at=self.desk.clock.now() + 23 * 3600, responders=[self.link.users[p["report_id"]]])
            notice["card"] = card
        self.desk.ledger.append(case, None, [NewEvent("notice.delivered", notice)], idempotency_key=job.job_id)
        return notice

    def claim(self) -> dict[str, Any] | None:
        """A notification for a concierge outside this process to deliver (the HTTP face), leased to
        it; None when there is none. It reports back with `delivered`."""
        job = self.outbox.claim([NOTIFY])
        if job is None:
            return None
        p = job.payload
        return {"job_id": job.job_id, "lease_id": job.lease_id, "report_id": p["report_id"], "kind": p["kind"],
                "text": notice_text(p)}

    def delivered(self, job_id: str, lease_id: str) -> bool:
        """The outside concierge delivered a claimed notification: the notice is recorded as `deliver`
        records it, and the job is done. False when the job is not pending or the lease was lost."""
        if not any(j.job_id == job_id for j in self.outbox.jobs("pending", NOTIFY)):
            return False
        job = Job(job_id, NOTIFY, None, self.outbox.payload(job_id) or {}, 0, lease_id, 0.0)
        self.deliver(job)
        return self.outbox.ack(job)

    def run_once(self) -> bool:
        return self.worker.run_once()

    def drain(self, limit: int = 1000) -> int:
        return self.worker.drain(limit)

    def collect_answers(self) -> list[dict[str, Any]]:
        """Apply answered cards once. "yes" confirms or verifies; "no" needs the reason the reporter
        posted with it (through the airlock): without one, or with one the airlock holds, the reporter
        is asked for it on the tracking page and nothing changes until it arrives."""
        if self.link is None:
            return []
        out = []
        for rid in sorted(self.link.users):
            for ev in self.desk.ledger.read(f"desk/inbox/{rid}"):
                card = ev.payload.get("card")
                if ev.type != "notice.delivered" or not card:
                    continue
                done = f"desk/card/{card}"
                if self.desk.ledger.version(done):
                    continue
                state = self.link.rooms.approval(self.link.agent, card)
                if state.state == "pending":
                    continue
                result = self._apply(rid, ev.payload, state)
                try:
                    self.desk.ledger.append(done, 0, [NewEvent("card.applied", result)])
                except ConflictError:
                    continue
                out.append(result)
        return out

    def _apply(self, rid: str, notice: dict[str, Any], card: Any) -> dict[str, Any]:
        base = {"report_id": rid, "card": card.request_id, "kind": notice["kind"], "round": notice["round"]}
        if card.state == "expired":
            return base | {"outcome": "expired"}
        reporter = DeskCaller("reporter", rid, report_id=rid)
        answer = "yes" if card.state == "accepted" else "no"
        reason = None
        if answer == "no":
            # The reason the reporter posted with the answer, if any; it passes the airlock like a
            # reason given on the tracking page (the desk's answer steps filter it).
            reason = self.link.rooms.answer_reason(self.link.agent, card.request_id) if self.link else None
            if reason is None:
                return base | {"outcome": "needs_reason", "note": "a 'no' needs a reason on the tracking page"}
        try:
            if notice["kind"] == "reproduced":
                self.desk.confirm(reporter, answer, reason, bug_id=notice["bug_id"], round_=notice["round"])
            else:
                bug = self.desk.bug(notice["bug_id"])
                if bug.round != notice["round"]:
                    raise ConflictError("stale", "")
                self.desk.verify_release(reporter, answer, reason, bug_id=notice["bug_id"])
        except ConflictError:
            return base | {"outcome": "stale", "note": "the bug moved on; answer acknowledged and dropped"}
        except Quarantined as exc:
            return base | {"outcome": "reason_held", "families": list(exc.families),
                           "note": "the reason could not be accepted; the reporter is asked again on the tracking page"}
        return base | {"outcome": "applied", "answer": answer}
