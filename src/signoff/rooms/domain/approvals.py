"""Approval cards: an agent asks, named people (or people holding a named role) answer; the first
allowed answer decides.

Each card is its own ledger case (`rooms.approval.<card_id>`); answers and expiry are decisions
over that case's history through `Ledger.update`, so racing answers decide once.

Card ids are scoped by their asker: an agent names its card (`request_id`, unique among its own
cards), and the server-wide `card_id` is `<agent id>.<request id>`, so no other agent can take an
id first and leave the rightful card unasked. An agent finds its own cards by request id; people
and bridges answer by `card_id` (a request id alone is accepted only while one card has it).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.ids import check_id
from signoff.ledger import Event, NewEvent
from signoff.rooms.domain.identities import Identities
from signoff.rooms.domain.membership import Membership
from signoff.rooms.domain.messages import Messages
from signoff.rooms.domain.model import (
    DECISION_VERBS,
    Approval,
    ApprovalOption,
    Principal,
    check_position,
    check_text,
    option_label,
)
from signoff.rooms.domain.people_roles import PeopleRoles, role_of
from signoff.rooms.storage.store import RoomStore, loads
from signoff.rooms.storage.tables import rooms_approvals

DECIDED = ("approval.answered", "approval.expired")
MAX_EXPIRY = 253402300799.0  # 9999-12-31T23:59:59Z; beyond it a time cannot be shown (or made a float)


MAX_REQUEST_ID = 150  # so that a card id (agent id, ".", request id) fits the 200-character column


def _case(card_id: str) -> str:
    return f"rooms.approval.{card_id}"


def card_key(agent_id: str, request_id: str) -> str:
    """The server-wide id of `agent_id`'s card `request_id`: its asker's id first."""
    return f"{agent_id}.{request_id}"


def answer_note(title: str, label: str, reason: str) -> str:
    """The message a person posts with their answer, giving its reason (the web console does)."""
    return f"Answered \u201c{title}\u201d: {label}. Reason: {reason.strip()}"


def check_shown(card: Approval, digest: Any) -> None:
    """Refuse an answer that does not name the digest of this card as it is shown."""
    if not isinstance(digest, str) or not digest:
        raise UsageError("an answer must carry the digest of the card it answers",
                         "send the card's `digest` as shown with it (read the card again to get it)")
    if digest != card.digest:
        raise ConflictError(f"the answer was for other content than card {card.request_id!r} shows "
                            "(its digest differs)", "read the card again and answer what it shows")


def _reason_in(body: str, title: str, label: str) -> str | None:
    head = answer_note(title, label, "")
    return body[len(head):].strip() or None if body.startswith(head) else None


class Approvals:
    def __init__(self, store: RoomStore, identities: Identities, membership: Membership,
                 messages: Messages, people_roles: PeopleRoles) -> None:
        self.store = store
        self.identities = identities
        self.membership = membership
        self.messages = messages
        self.people_roles = people_roles

    def _card(self, card_id: str) -> Approval:
        row = self.store.one(select(rooms_approvals).where(rooms_approvals.c.request_id == card_id))
        if row is None:
            raise NotFoundError(f"no approval request {card_id!r}", "use the card_id the server gave the card")
        card = json.loads(row.card)
        return Approval(
            # cards asked before ids were scoped have their request id as their card id
            request_id=str(card.get("request_id", row.request_id)), scoped_id=row.request_id, room_id=row.room_id,
            requester_agent_id=row.requester_agent_id,
            title=card["title"], options=tuple(ApprovalOption(**o) for o in card["options"]),
            responders=tuple(card["responders"]), expires_at=float(row.expires_at), state=row.state,
            outcome=loads(row.outcome), responder_roles=tuple(card.get("responder_roles", ())),
            requester_name=card.get("requester_name"), requested_at=card.get("requested_at"),
        )

    def _find(self, actor: Principal, ref: str) -> Approval:
        """The card `ref` names: for an agent its own card of that request id first; then the card
        whose card id it is; then the one card asked with that request id (several: none)."""
        if actor.kind == "agent" and self._exists(card_key(actor.id, ref)):
            return self._card(card_key(actor.id, ref))
        if self._exists(ref):
            return self._card(ref)
        rows = self.store.all(select(rooms_approvals.c.request_id).where(
            rooms_approvals.c.request_id.endswith(f".{ref}", autoescape=True)))
        named = [r.request_id for r in rows if r.request_id.partition(".")[2] == ref]
        if len(named) != 1:
            raise NotFoundError(f"no approval card {ref!r}" if not named else
                                f"several approval cards were asked as {ref!r}", "use the card's card_id")
        return self._card(named[0])

    def _exists(self, card_id: str) -> bool:
        return self.store.one(select(rooms_approvals.c.request_id)
                              .where(rooms_approvals.c.request_id == card_id)) is not None

    def _answering_as(self, actor: Principal, card: Approval,
                      held: dict[str, set[str]] | None = None) -> str | None:
        """How the actor may answer the card now: "named", or the role they hold now; None if not.
        `held` is the people's roles table when the caller already read it."""
        if actor.kind != "user":
            return None
        if actor.id in card.responders:
            return "named"
        if not card.responder_roles:
            return None
        table = held if held is not None else self.people_roles.table()
        role = next((r for r in card.responder_roles if actor.id in table.get(r, set())), None)
        return f"role:{role}" if role else None

    def request_approval(self, actor: Principal, room_id: str, request_id: str, title: str,
                         options: list[dict[str, Any]], expires_at: float, responders: list[str]) -> Approval:
        """Post an approval card (idempotent by request_id: a retry returns the same card)."""
        if actor.kind != "agent":
            raise RefusedError("approval cards are requested by agents", "use an agent's key")
        check_id("request_id", request_id)
        if len(request_id) > MAX_REQUEST_ID:
            raise UsageError(f"request_id is over {MAX_REQUEST_ID} characters", "use a shorter id per decision")
        key = card_key(actor.id, request_id)
        # This agent's card (or one it asked before card ids were scoped, under the bare request id).
        own = next((k for k in (key, request_id) if self._exists(k)), None)
        card = self._card(own) if own is not None else None
        if card is not None and card.requester_agent_id == actor.id:
            if card.room_id != room_id:
                raise ConflictError(f"request_id {request_id!r} is already used by your card in another room",
                                    "use a fresh request_id")
            return card
        self.membership.require_read(actor, room_id)
        if not isinstance(title, str) or not title.strip():
            raise UsageError("an approval card needs a title", "pass title")
        check_text("title", title)
        if not isinstance(options, list) or not options:
            raise UsageError("an approval card needs options", "pass [{id, label, decision: accept|decline}]")
        clean_options = []
        for o in options:
            if not isinstance(o, dict) or not isinstance(o.get("id"), str) or not isinstance(o.get("label"), str) \
                    or o.get("decision") not in DECISION_VERBS:
                raise UsageError(f"bad approval option {o!r}", "each option is {id, label, decision: accept|decline}")
            check_id("option id", o["id"])
            check_text("option label", o["label"], allow_newlines=False)
            clean_options.append({"id": o["id"], "label": option_label(o["decision"], o["label"]),
                                  "decision": o["decision"]})
        if len({o["id"] for o in clean_options}) != len(clean_options):
            raise UsageError("approval option ids must be unique", "rename the duplicates")
        if not isinstance(expires_at, int | float) or isinstance(expires_at, bool) \
                or not self.store.clock.now() < expires_at <= MAX_EXPIRY:
            raise UsageError("expires_at must be a future time in epoch seconds", "pass now + a few minutes")
        if not isinstance(responders, list) or not responders or not all(isinstance(r, str) for r in responders):
            raise UsageError("name at least one responder (user name or id, or role:NAME)",
                             "pass responders=[\"alice\"] or [\"role:dba\"]")
        responder_ids: list[str] = []
        roles: list[str] = []
        for r in responders:
            role = role_of(r)
            if role is not None:
                # Checked now only so that a card nobody could answer is refused with a reason; who
                # holds the role is decided again at each answer.
                if not self.people_roles.holders(role):
                    raise UsageError(f"nobody holds the role {role!r} on this server",
                                     f"an admin grants it: signoff rooms role grant {role} USER")
                roles.append(role)
                continue
            try:
                responder_ids.append(self.identities.user(r).id)
            except NotFoundError:
                responder_ids.append(self.identities.user_by_name(r).id)
        payload = {"request_id": request_id, "card_id": key, "room_id": room_id, "requester_agent_id": actor.id,
                   "requester_name": actor.name, "requested_at": self.store.clock.now(), "title": title,
                   "options": clean_options,
                   "responders": responder_ids, "expires_at": float(expires_at)}
        if roles:
            payload["responder_roles"] = sorted(set(roles))
        try:
            self.store.append(_case(key), [NewEvent("approval.requested", payload)], expected=0)
        except ConflictError:
            return self.request_approval(actor, room_id, request_id, title, options, expires_at, responders)
        return self._card(key)

    def _visible(self, actor: Principal, ref: str) -> Approval:
        """The card, for its room's readers and its named responders. Anyone else gets the same
        bare refusal whether or not the card exists: no room id, no requester, nothing written."""
        try:
            card = self._find(actor, ref)
            if self._answering_as(actor, card) is not None:
                return card
            self.membership.require_read(actor, card.room_id)
            return card
        except (NotFoundError, RefusedError) as exc:
            raise RefusedError("you may not see or answer this approval card",
                               "use the card_id of a card in one of your rooms") from exc

    def approval(self, actor: Principal, request_id: str) -> Approval:
        return self._visible(actor, request_id)

    def room_approvals(self, actor: Principal, room_id: str, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """The cards of a room in the order they were requested, after sequence `after` (for its
        readers: a bridge shows them in chat)."""
        self.membership.require_read(actor, room_id)
        check_position("after", after)
        rows = self.store.all(select(rooms_approvals.c.request_id, rooms_approvals.c.requested_seq).where(
            rooms_approvals.c.room_id == room_id, rooms_approvals.c.requested_seq > after)
            .order_by(rooms_approvals.c.requested_seq).limit(max(1, min(int(limit), 1000))))
        return [{**self._card(r.request_id).to_dict(), "sequence": int(r.requested_seq)} for r in rows]

    def pending_approvals(self, actor: Principal) -> list[Approval]:
        rows = self.store.all(select(rooms_approvals.c.request_id).where(rooms_approvals.c.state == "pending"))
        cards = [self._card(r.request_id) for r in rows]
        held = self.people_roles.table() if any(c.responder_roles for c in cards) else {}
        return [c for c in cards if actor.is_admin or self._answering_as(actor, c, held) is not None]

    def answer_approval(self, actor: Principal, request_id: str, option_id: str, digest: str,
                        via: dict[str, Any] | None = None) -> dict[str, Any]:
        """A human answers the card they were shown: `digest` is that card's (`Approval.digest`:
        its asker, times, question and every option with its decision), and an answer for any other
        card is refused. The first allowed answer decides; a wrong responder's answer is discarded
        and recorded; an answer after expiry yields the `expired` outcome. `via` (an answer a bridge
        relayed under an identity claim) is recorded with the answer."""
        if actor.kind != "user":
            raise RefusedError("only people answer approval cards", "answer with a user token")
        card = self._visible(actor, request_id)
        check_shown(card, digest)
        if not isinstance(option_id, str) or option_id not in {o.id for o in card.options}:
            raise UsageError(f"unknown option {option_id!r}",
                             f"choose one of {', '.join(o.id for o in card.options)}")
        outcome: dict[str, Any] = {}

        def decide(history: list[Event]) -> tuple[list[NewEvent], list[Any]]:
            outcome.clear()
            done = [e for e in history if e.type in DECIDED]
            if done:
                outcome.update(done[0].payload)
                return [], []
            base = {"request_id": card.request_id, "card_id": card.card_id, "room_id": card.room_id,
                    "requester_agent_id": card.requester_agent_id, **({"via": via} if via else {})}
            if self.store.clock.now() >= card.expires_at:
                outcome.update({**base, "outcome": "expired", "option_id": None, "responder": None,
                                "responder_name": None, "allowed": None})
                return [NewEvent("approval.expired", dict(outcome))], []
            # Resolved here, at the answer (and again on a retry): a role held now, not when asked.
            answering_as = self._answering_as(actor, card)
            if answering_as is None:
                outcome.update({**base, "outcome": "discarded", "option_id": option_id,
                                "responder": actor.sender, "responder_name": actor.display_name,
                                "allowed": False})
                return [NewEvent("approval.discarded", dict(outcome))], []
            option = next(o for o in card.options if o.id == option_id)
            outcome.update({**base, "outcome": "accepted" if option.decision == "accept" else "declined",
                            "option_id": option_id, "decision": option.decision, "responder": actor.sender,
                            "responder_name": actor.display_name, "allowed": True,
                            "answered_at": utc_iso(self.store.clock.now())})
            if answering_as != "named":
                outcome["responder_role"] = answering_as[len("role:"):]
            return [NewEvent("approval.answered", dict(outcome))], []

        if self.store.ledger.update(_case(card.card_id), decide).seqs:
            self.store.projector.catch_up()
        return dict(outcome)

    def answer_reason(self, actor: Principal, request_id: str) -> str | None:
        """The reason the card's deciding responder posted with their answer (`answer_note`, in the
        card's room, after the answer), or None. Only that person's own post counts: a reason typed
        by anyone else, or posted before they answered, is not theirs for this card."""
        card = self._visible(actor, request_id)
        decided = [e for e in self.store.ledger.read(_case(card.card_id)) if e.type == "approval.answered"]
        if not decided:
            return None
        answer = decided[0].payload
        label = next((o.label for o in card.options if o.id == answer["option_id"]), None)
        if label is None:
            return None
        after = decided[0].seq
        while True:
            page = self.messages.read_messages(actor, card.room_id, after, 500)
            for m in page:
                if m["sender"] == answer["responder"] and not m["auto_reply"]:
                    found = _reason_in(m["body"], card.title, label)
                    if found is not None:
                        return found
            if len(page) < 500:
                return None
            after = page[-1]["sequence"]

    def expire_approvals(self) -> list[str]:
        """Record the `expired` outcome of every pending card past its time; returns their request ids."""
        rows = self.store.all(select(rooms_approvals.c.request_id, rooms_approvals.c.room_id,
                                     rooms_approvals.c.requester_agent_id, rooms_approvals.c.card).where(
            rooms_approvals.c.state == "pending", rooms_approvals.c.expires_at <= self.store.clock.now()))
        expired = []
        for r in rows:
            def decide(history: list[Event], r: Any = r) -> tuple[list[NewEvent], list[Any]]:
                if any(e.type in DECIDED for e in history):
                    return [], []
                return [NewEvent("approval.expired", {
                    "request_id": json.loads(r.card).get("request_id", r.request_id), "card_id": r.request_id,
                    "room_id": r.room_id, "requester_agent_id": r.requester_agent_id,
                    "outcome": "expired", "option_id": None, "responder": None, "responder_name": None,
                    "allowed": None})], []

            if self.store.ledger.update(_case(r.request_id), decide).seqs:
                expired.append(json.loads(r.card).get("request_id", r.request_id))
        if expired:
            self.store.projector.catch_up()
        return expired
