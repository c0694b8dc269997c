"""The concierge: delivers desk notifications from the outbox to reporters.

Every notification is a job written with the state change that caused it. Delivery appends a
notice to the reporter's tracking page (ledger case `desk/inbox/<report>`, idempotent on the job
id) and, where the report is linked to a room user, asks an approval card whose request id derives
from the job id (uuid5), so a retried delivery asks the same card. Card answers are collected by
`collect_answers`: a wrong responder's answer is discarded by the rooms layer; a stale answer (the
bug moved on) is acknowledged and dropped. A "no" carries the reason its reporter posted with the
answer (the web console's answer form posts it), through the airlock; without one the reporter is
asked for it on the tracking page. `Cards` is where the cards go: a rooms service (`RoomLink`) or
the concierge process's agent loop (`crew.concierge`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from signoff.desk.credentials import DeskCaller, require
from signoff.desk.records import CardApplied, CardNeedsReason, Inbox, NoticeDelivered, inbox_fold
from signoff.desk.workflow import NOTIFY, Desk, Quarantined
from signoff.kernel.errors import ConflictError
from signoff.ledger import Job, Outbox, SqlLedger, Worker

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


class Cards(Protocol):
    """Where cards go and how their answers come back: a room, and the reporters linked to room users."""

    users: dict[str, str]  # report id -> rooms user name of its reporter

    def ask(self, request_id: str, title: str, options: list[dict[str, str]], expires_at: float,
            responders: list[str]) -> None: ...

    def outcome(self, request_id: str) -> tuple[str, str | None]:
        """The card's state (pending, accepted, declined, expired) and the reason its responder
        posted with the answer, if any."""
        ...


@dataclass
class RoomLink:
    """Cards asked straight on a rooms service as the concierge's agent (tests; the crew's
    concierge process asks through its agent loop instead, `crew.concierge.LoopCards`)."""

    rooms: Any  # signoff.rooms.RoomService
    agent: Any  # the concierge's rooms Principal (an agent)
    room_id: str
    users: dict[str, str]  # report id -> rooms user name of its reporter

    def ask(self, request_id: str, title: str, options: list[dict[str, str]], expires_at: float,
            responders: list[str]) -> None:
        self.rooms.request_approval(self.agent, self.room_id, request_id, title, options, expires_at=expires_at,
                                    responders=responders)

    def outcome(self, request_id: str) -> tuple[str, str | None]:
        state = str(self.rooms.approval(self.agent, request_id).state)
        return state, (self.rooms.answer_reason(self.agent, request_id) if state == "declined" else None)



def inbox(ledger: SqlLedger, report_id: str) -> Inbox:
    """A reporter's tracking page: the notices delivered to it, in order."""
    return inbox_fold.over(Inbox(), ledger.read(f"desk/inbox/{report_id}"))

class Concierge:
    def __init__(self, desk: Desk, actor: DeskCaller, link: Cards | None = None) -> None:
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
        card = None
        if self.link is not None and p["report_id"] in self.link.users:
            card = card_id(job.job_id)
            self.link.ask(card, TITLE[p["kind"]], [{"id": "yes", "label": "Yes", "decision": "accept"},
                                                   {"id": "no", "label": "No", "decision": "decline"}],
                          self.desk.clock.now() + 23 * 3600, [self.link.users[p["report_id"]]])
        notice = NoticeDelivered(job_id=job.job_id, kind=p["kind"], bug_id=p["bug_id"], round=p["round"],
                                 text=notice_text(p), **({"card": card} if card is not None else {}))
        self.desk.ledger.append(case, None, [notice.new_event()], idempotency_key=job.job_id)
        return notice.payload()

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
        is asked for it on the tracking page (reported once) and the card is looked at again later,
        so a reason posted after the answer still counts."""
        if self.link is None:
            return []
        out = []
        for rid in sorted(self.link.users):
            for notice in inbox(self.desk.ledger, rid).notices:
                card = notice.card
                if not card:
                    continue
                done = f"desk/card/{card}"
                if self.desk.ledger.version(done):
                    continue
                state, reason = self.link.outcome(card)
                if state == "pending":
                    continue
                result = self._apply(rid, notice.payload(), card, state, reason)
                try:
                    if result["outcome"] == "needs_reason":
                        self.desk.ledger.append(f"{done}/needs-reason", 0, [CardNeedsReason(**result).new_event()])
                    else:
                        self.desk.ledger.append(done, 0, [CardApplied(**result).new_event()])
                except ConflictError:
                    continue  # applied (or reported) already
                out.append(result)
        return out

    def _apply(self, rid: str, notice: dict[str, Any], card: str, state: str, reason: str | None) -> dict[str, Any]:
        base = {"report_id": rid, "card": card, "kind": notice["kind"], "round": notice["round"]}
        if state == "expired":
            return base | {"outcome": "expired"}
        reporter = DeskCaller("reporter", rid, report_id=rid)
        answer = "yes" if state == "accepted" else "no"
        if answer == "no" and reason is None:
            # The reason passes the airlock like a reason given on the tracking page (the desk's
            # answer steps filter it); without one nothing changes yet.
            return base | {"outcome": "needs_reason", "note": "a 'no' needs a reason on the tracking page"}
        try:
            if notice["kind"] == "reproduced":
                self.desk.confirm(reporter, answer, reason if answer == "no" else None, bug_id=notice["bug_id"],
                                  round_=notice["round"])
            else:
                bug = self.desk.bug(notice["bug_id"])
                if bug.round != notice["round"]:
                    raise ConflictError("stale", "")
                self.desk.verify_release(reporter, answer, reason if answer == "no" else None,
                                         bug_id=notice["bug_id"])
        except ConflictError:
            return base | {"outcome": "stale", "note": "the bug moved on; answer acknowledged and dropped"}
        except Quarantined as exc:
            return base | {"outcome": "reason_held", "families": list(exc.families),
                           "note": "the reason could not be accepted; the reporter is asked again on the tracking page"}
        return base | {"outcome": "applied", "answer": answer}
