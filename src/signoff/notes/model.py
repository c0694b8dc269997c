"""The notes workflow's cases, events and states, on the aggregate contract (`signoff.ledger.aggregate`).

Three case types, with the prefixes old code wrote (they are hashed into existing ledgers):

- `notes.run.<SHA-256 of review.json>`: the human decisions on a run (`notes.decided`), folded
  into `State` over the run's reviewed sentences (which live in the run folder: the service reads
  them and hands them to `initial`);
- `notes.room.<digest>` and `notes.room.<digest>.handled`: how far a run has read its room
  (`notes.room_cursor`) and which room messages it answered (`notes.room_handled`);
- `notes.handoffs.<run>`: the room agents' hand-offs, announced (`notes.handing_off`) and sent
  with their receipt (`notes.handed_off`).

Every notes event type ever written is declared here, with the payload shapes old code wrote:
fields later code added are optional, so the events written before them read unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from signoff.kernel.canonical import canonical_digest
from signoff.ledger.aggregate import EventBody, Fold, Stamp, case_type
from signoff.ledger.approval import Approval

NOTES_RUN = case_type("notes.run", "notes.run.")
NOTES_ROOM = case_type("notes.room", "notes.room.")
NOTES_HANDOFFS = case_type("notes.handoffs", "notes.handoffs.")

DECISION = "signoff/decision@1"  # the `schema` every decision record carries (and its export)
ACTIONS = ("approve", "reject", "edit", "ship")


class _Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Aliased(EventBody):
    """An event whose stored keys include names Python reserves (`schema`, `from`): stored by alias."""

    model_config = ConfigDict(populate_by_name=True)

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


# -- a run's decisions ----------------------------------------------------------------------------


class RoomRef(_Record):
    """Where a decision made in a room came from: the room, the server's message id, its sender."""

    room_id: str
    message_id: str
    sender: str


class Decided(_Aliased, type="notes.decided", case=NOTES_RUN):
    """One human decision on a run. `digests` (approve) names the text each approved sentence had;
    `unverified` (approve all) the sentences left out and why; `shown` the digest the face sent;
    `approval` (since the aggregate contract) the content-bound approval made by
    `signoff.ledger.approval.approve`. Decisions written before a field existed lack it."""

    schema_: str = Field(alias="schema")
    seq: int
    at: str
    by: str
    source: str
    action: Literal["approve", "reject", "edit", "ship"]
    target: str | None = None
    shown: str | None = None
    ref: RoomRef | None = None
    digests: dict[str, str] | None = None
    unverified: dict[str, str] | None = None
    text: str | None = None
    approval: Approval | None = None

    def payload(self) -> dict[str, Any]:
        # As old code wrote it: absent optional fields are left out (target is always written).
        return {"target": None, **self.model_dump(mode="json", by_alias=True, exclude_none=True)}


def text_digest(text: str) -> str:
    return canonical_digest({"text": text})


@dataclass
class SentenceState:
    id: str
    text: str
    facts: list[str]
    status: str = "pending"  # pending | approved | rejected
    edited: bool = False
    by: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class State:
    """A run's sentences after its decisions, replayed in order (last decision wins)."""

    sentences: list[SentenceState]
    shipped: bool = False
    count: int = 0
    records: list[Decided] = field(default_factory=list)  # the decisions, in order
    message_ids: set[str] = field(default_factory=set)  # room messages already decided on

    @classmethod
    def of(cls, sentences: list[dict[str, Any]]) -> State:
        """The state before any decision, over the reviewed sentences of the run folder."""
        return cls([SentenceState(s["id"], s["text"], list(s["facts"])) for s in sentences])

    def get(self, sid: str) -> SentenceState:
        return next(s for s in self.sentences if s.id == sid)

    def as_json(self) -> dict[str, Any]:
        return {"shipped": self.shipped, "decisions": self.count,
                "sentences": [{k: v for k, v in s.__dict__.items()} for s in self.sentences]}


def apply_decision(state: State, rec: Decided) -> None:
    """One decision onto `state`: what the fold does per `notes.decided`, and the offline check per
    exported line."""
    state.count += 1
    state.records.append(rec)
    if rec.ref is not None:
        state.message_ids.add(rec.ref.message_id)
    if rec.action == "ship":
        state.shipped = True
        return
    ids = {s.id for s in state.sentences}
    targets = sorted(ids, key=lambda x: int(x[1:])) if rec.target == "all" else [str(rec.target)]
    for sid in targets:
        if sid not in ids:
            continue
        s = state.get(sid)
        if rec.action == "approve" and sid in (rec.unverified or {}):
            s.notes.append(f"decision {rec.seq}: not approved: {(rec.unverified or {})[sid]}")
            continue
        if rec.action == "approve":
            if (rec.digests or {}).get(sid) != text_digest(s.text):
                # The approval names other text than this sentence has at this point: it binds nothing.
                s.notes.append(f"decision {rec.seq}: approval was for other text; ignored")
                continue
            s.status, s.by = "approved", rec.by
        elif rec.action == "reject":
            s.status, s.by = "rejected", rec.by
        elif rec.action == "edit":
            s.text, s.edited, s.status, s.by = str(rec.text), True, "pending", rec.by


run_fold = Fold[State](NOTES_RUN)


@run_fold.on(Decided)
def _decided(state: State, ev: Decided, at: Stamp) -> None:
    apply_decision(state, ev)


def replay(sentences: list[dict[str, Any]], records: list[Decided]) -> State:
    """The state of `sentences` after `records` (decisions read from the ledger or an export)."""
    state = State.of(sentences)
    for rec in records:
        apply_decision(state, rec)
    return state


# -- a run's room: cursor and answered messages ---------------------------------------------------


class RoomCursor(EventBody, type="notes.room_cursor", case=NOTES_ROOM):
    """How far the run has read the agent's event stream of `room_id` (embedded server)."""

    room_id: str
    agent: str
    cursor: int


class RoomHandled(EventBody, type="notes.room_handled", case=NOTES_ROOM):
    """A room message answered (any server); `sender` is set for the agent's own replies."""

    message_id: str
    sender: str | None = None

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


@dataclass
class RoomLog:
    key: str
    cursor: RoomCursor | None = None  # the last one saved
    handled: set[str] = field(default_factory=set)
    own: set[str] = field(default_factory=set)  # the agent's own sender ids (its replies)


room_fold = Fold[RoomLog](NOTES_ROOM)


@room_fold.on(RoomCursor)
def _cursor(log: RoomLog, ev: RoomCursor, at: Stamp) -> None:
    log.cursor = ev


@room_fold.on(RoomHandled)
def _handled(log: RoomLog, ev: RoomHandled, at: Stamp) -> None:
    log.handled.add(ev.message_id)
    if ev.sender:
        log.own.add(ev.sender)


# -- the room agents' hand-offs -------------------------------------------------------------------


class ReceiptBody(_Record):
    """A `signoff.rooms.domain.receipts.Receipt` as recorded."""

    message_id: str
    room_id: str
    sender: str
    body: str
    addressed: bool = True
    thread_id: str | None = None
    target_statuses: dict[str, str] = Field(default_factory=dict)
    sequence: int | None = None


class HandingOff(_Aliased, type="notes.handing_off", case=NOTES_HANDOFFS):
    """A hand-off announced before it is sent (`key`: verb, run and source)."""

    key: str
    from_: str = Field(alias="from")
    to: str
    text: str
    source: str | None


class HandedOff(EventBody, type="notes.handed_off", case=NOTES_HANDOFFS):
    """The hand-off sent, with the server's receipt of the message."""

    key: str
    receipt: ReceiptBody


@dataclass
class Handoffs:
    run: str
    by_key: dict[str, dict[str, Any]] = field(default_factory=dict)  # {key, from, to, text, source, receipt?}


handoffs_fold = Fold[Handoffs](NOTES_HANDOFFS)


@handoffs_fold.on(HandingOff)
def _announced(log: Handoffs, ev: HandingOff, at: Stamp) -> None:
    log.by_key.setdefault(ev.key, {}).update(ev.payload())


@handoffs_fold.on(HandedOff)
def _sent(log: Handoffs, ev: HandedOff, at: Stamp) -> None:
    log.by_key.setdefault(ev.key, {}).update(ev.payload())


FOLDS: tuple[Fold[Any], ...] = (run_fold, room_fold, handoffs_fold)
