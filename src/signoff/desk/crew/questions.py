"""Reporter cards where the rooms server has no approval cards (a Switch core, or signoff's own
server with `request_approval` switched off in the concierge's view): the concierge asks each card
as an addressed question, and takes an answer only by the receipt rule (`rooms.domain.decisions`).

    ask       "Is this the bug you saw? ..." addressed to the reporter's linked identity in the
              intake room, sent once per card (keyed by the card id: a retried delivery asks the
              same message). The question's receipt, its responder's bound sender id and its expiry
              are kept in ledger case `desk/question/<card>`.
    answer    a message counts only when it is the message the server recorded, from that bound
              sender id, addressed, in the intake room, in the question's thread, and exactly
              `yes` or `no: <reason>`. The first such answer is recorded on the case; the desk then
              applies it like a card's (`Concierge.collect_answers`), so the reason passes the
              airlock there. Anything else in a question's thread, or an answer-shaped message
              outside one, is ignored and recorded (`desk/crew/ignored`, `by: concierge`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from signoff.desk.crew.agents import IGNORED
from signoff.desk.crew.commands import strip_mentions
from signoff.desk.notify import inbox
from signoff.desk.records import AnswerIgnored, Question, QuestionAnswered, QuestionAsked, question_fold
from signoff.kernel.errors import ConflictError, RefusedError
from signoff.ledger import SqlLedger
from signoff.rooms.client import AgentLoop, page_back
from signoff.rooms.domain.decisions import Message, admit_answer, recorded_once

ANSWER = re.compile(r"yes|no: (?P<reason>\S.*)", re.DOTALL)


def question_case(card: str) -> str:
    return f"desk/question/{card}"


def question_text(title: str, card: str) -> str:
    return (f"{title} (card {card[:8]}) Answer me in this thread with exactly `yes`, or `no: ` and your "
            "reason.")


def heard(env: dict[str, Any]) -> Message:
    """A `message` event as delivered: its id, room, authenticated sender, text, flag and thread."""
    p = env.get("payload") or {}
    thread = p.get("thread_id")
    return Message(str(p.get("message_id")), str(env.get("room_id")), str(p.get("sender")), str(p.get("body", "")),
                   p.get("addressed") is True, thread if isinstance(thread, str) else None)


def admit(asked: dict[str, Any], said: Message) -> re.Match[str]:
    """The receipt rule for an answer (`said`, after the server's @-prefix) to the question
    recorded in `asked`; RefusedError naming why it does not count."""
    question = Message(str(asked["message_id"]), str(asked["room_id"]), str(asked["sender"]), str(asked["body"]))
    hit = admit_answer(f"the question on card {asked['card']}", ANSWER, question, said,
                       responder=str(asked["responder"]), room=str(asked["room_id"]),
                       responder_label="the reporter's linked identity", in_reply=True)
    assert hit is not None  # a pattern always gives its match
    return hit


@dataclass
class LoopQuestions:
    """`notify.Cards` as addressed questions through the concierge's agent loop (called from a
    worker thread); `judge` looks at every event the loop hands the concierge."""

    loop: AgentLoop
    ledger: SqlLedger
    room_id: str
    users: dict[str, str]  # report id -> rooms name of its reporter's linked identity
    senders: dict[str, str]  # that name -> the sender id bound to it (`desk/crew/reporters`)
    clock: Any  # the desk's clock: a question expires like a card

    def ask(self, request_id: str, title: str, options: list[dict[str, str]], expires_at: float,
            responders: list[str]) -> None:
        [who] = responders
        receipt = self.loop.blocking(self.loop.send(self.room_id, question_text(title, request_id),
                                                    key=f"question:{request_id}", targets=[who]))
        asked = QuestionAsked(card=request_id, room_id=self.room_id, message_id=receipt.message_id,
                              sender=receipt.sender, body=receipt.body, responder=self.senders[who],
                              responder_name=who, expires_at=float(expires_at))
        self.ledger.append(question_case(request_id), None, [asked.new_event()],
                           idempotency_key=f"asked:{request_id}")

    def outcome(self, request_id: str) -> tuple[str, str | None]:
        asked, answer = self._question(request_id)
        if answer is not None:
            return ("accepted", None) if answer["answer"] == "yes" else ("declined", str(answer["reason"]))
        if asked is not None and self.clock.now() > float(asked["expires_at"]):
            return "expired", None
        return "pending", None

    def _question(self, card: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        question = question_fold.over(Question(), self.ledger.read(question_case(card)))
        return (None if question.asked is None else question.asked.payload(),
                None if question.answer is None else question.answer.payload())

    def _asked_in(self, thread_id: object) -> dict[str, Any] | None:
        for card in self.users_cards():
            asked, _ = self._question(card)
            if asked is not None and asked["message_id"] == thread_id:
                return asked
        return None

    def users_cards(self) -> list[str]:
        """The cards delivered to linked reporters (their notices name them)."""
        return [n.card for rid in sorted(self.users) for n in inbox(self.ledger, rid).notices if n.card]

    def judge(self, env: dict[str, Any]) -> bool:
        """Record `env` as an answer when the receipt rule admits it, else as ignored; False when
        it is neither in a question's thread nor shaped like an answer (plain talk)."""
        if env.get("type") != "message" or env.get("room_id") != self.room_id:
            return False
        raw = heard(env)
        said = Message(raw.msg_id, raw.room, raw.sender, strip_mentions(raw.text), raw.addressed, raw.thread_id)
        asked = self._asked_in(said.thread_id)
        if asked is None:
            if ANSWER.fullmatch(said.text.strip()) is None:
                return False
            self._ignore(said, None, "not a reply in the thread of a question the concierge asked")
            return True
        if said.sender == asked["sender"]:
            return True  # the concierge's own message in the thread
        try:
            hit = admit(asked, said)
            found = self.loop.blocking(page_back(lambda op, **a: self.loop.call(self.room_id, op, **a), raw.msg_id))
            stored = [] if found is None else [Message(str(found.get("id")), self.room_id, str(found.get("sender")),
                                                       str(found.get("body")))]
            if not recorded_once(stored, raw):
                raise RefusedError("the answer does not match the message the room server recorded",
                                   "answer in the room, as yourself")
            if self._question(str(asked["card"]))[1] is not None:
                raise RefusedError(f"card {asked['card']} was answered already", "the first answer counts")
        except RefusedError as exc:
            self._ignore(said, str(asked["card"]), exc.message)
            return True
        answer = {"card": asked["card"], "message_id": said.msg_id, "sender": said.sender,
                  "answer": "yes" if hit.group("reason") is None else "no", "reason": hit.group("reason")}
        try:
            self.ledger.append(question_case(str(asked["card"])), None, [QuestionAnswered(**answer).new_event()],
                               idempotency_key=f"answered:{asked['card']}")
        except ConflictError:
            pass  # a redelivery of the same answer
        return True

    def _ignore(self, said: Message, card: str | None, why: str) -> None:
        self.ledger.append(IGNORED, None, [AnswerIgnored(
            by="concierge", message_id=said.msg_id, sender=said.sender, card=card, answer=said.text[:200],
            why=why).new_event()], idempotency_key=f"ignored:concierge:{said.msg_id}")
