"""Decisions asked and answered as addressed messages, where a server has no approval cards
(`Capabilities.decision_channel` is `addressed_command`).

One rule for every workflow that decides this way (the incident's fix approvals, the desk's reporter
questions): an answer counts only when it is the message the server recorded (its id, its
authenticated sender, its text), from the one bound responder, addressed, in the room the question
was asked in, in the exact form the question asked for and, when asked for, as a reply in the
question's thread. A name typed in a message proves nothing; a copy has another id or sender.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from signoff.kernel.errors import RefusedError


@dataclass(frozen=True)
class Message:
    """A chat message as the room server recorded it (server-assigned id, authenticated sender)."""

    msg_id: str
    room: str
    sender: str
    text: str
    addressed: bool = True  # as its receiver saw it (the server's flag, never the text)
    thread_id: str | None = None  # the thread root it replies in, as the server resolved it


def recorded_once(stored: Iterable[Message], said: Message) -> bool:
    """True when the room's history holds exactly one message with `said`'s id, and it has
    `said`'s sender and text: the event is what the server recorded, not a replayed or edited one."""
    same_id = [m for m in stored if m.msg_id == said.msg_id]
    return len(same_id) == 1 and same_id[0].sender == said.sender and same_id[0].text == said.text


def admit_answer(what: str, command: str | re.Pattern[str], asked: Message, answer: Message, *,
                 responder: str, room: str, responder_label: str, in_reply: bool = False) -> re.Match[str] | None:
    """Refuse (`RefusedError`, naming why) unless `answer` answers `asked`: from `responder`, in
    `room` (both messages), addressed, with exactly `command` (a string, or a pattern the whole text
    must match; its match is returned) and, with `in_reply`, in the thread of `asked`."""
    if answer.sender != responder:
        raise RefusedError(f"approval of {what} from {answer.sender!r} does not count",
                           f"only {responder_label} ({responder}) can approve")
    if answer.room != room or asked.room != room:
        raise RefusedError(f"approvals for {what} count only in {room}", f"ask and answer {what} in {room}")
    if not answer.addressed:
        raise RefusedError(f"an answer to {what} counts only when addressed", "address the one who asked")
    if in_reply and answer.thread_id != asked.msg_id:
        raise RefusedError(f"the answer does not reply to the question about {what}",
                           "answer in the question's thread")
    if isinstance(command, str):
        if answer.text.strip() != command:
            raise RefusedError(f"approval text is not the exact command {command!r}",
                               f"reply with exactly: {command}")
        return None
    hit = command.fullmatch(answer.text.strip())
    if hit is None:
        raise RefusedError(f"the answer to {what} is not in the form asked for", "reply in the form the question gave")
    return hit
