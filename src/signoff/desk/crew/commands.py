"""The crew's command allowlist: the only words an agent's message can act on.

    start_reproduction BUG-0001 round=1     manager -> reproducer
    propose_reproduction BUG-0001 round=1   reproducer -> manager (the test travels as a room document)
    start_fix BUG-0001 round=1              manager -> fixer
    submit_fix BUG-0001 round=1             fixer -> manager (the files travel as a room document)
    start_review BUG-0001 round=1 of=test   manager -> reviewer (of=test: the reproduction; of=change: the draft)
    submit_review BUG-0001 round=1 of=test  reviewer -> manager (an advisory note, as a room document)
    start_smoke BUG-0001 round=1            manager -> smoke (the deployed release to accept)
    submit_smoke BUG-0001 round=1           smoke -> manager (what it measured, as a room document)

Each pair is a request and its answer; nothing here approves, merges or deploys. The review pair
carries the reviewer's opinion (recorded as an advisory note, never an approval), the smoke pair a
measurement of the live release (recorded beside it; it changes no state).

`approve`, `merge` and `deploy` do not exist on this path: people do those, on the desk, with their
own credentials. An agent that sends one is refused, and the refusal is recorded in the ledger
(case `desk/crew/refusals`, once per message id), so an owner sees who tried.

A command is a whole message (after the server's @-prefix): one verb, one bug id, one round (and
the tag of the sender's keyed send). Any other text, extra words included, is not a command:
untrusted text never becomes one by containing one. Being a command is not enough to be acted on:
the receiver also checks the sender's role and its receipt (`signoff.desk.crew.agents`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from signoff.desk.records import CommandRefused, CrewRecords, crew_fold
from signoff.kernel.errors import RefusedError
from signoff.ledger import SqlLedger

ALLOWED: dict[str, tuple[str, str]] = {  # verb -> (sender role, receiver role)
    "start_reproduction": ("manager", "reproducer"),
    "propose_reproduction": ("reproducer", "manager"),
    "start_fix": ("manager", "fixer"),
    "submit_fix": ("fixer", "manager"),
    "start_review": ("manager", "reviewer"),
    "submit_review": ("reviewer", "manager"),
    "start_smoke": ("manager", "smoke"),
    "submit_smoke": ("smoke", "manager"),
}
REVIEWS = ("start_review", "submit_review")  # these, and only these, name what is reviewed (of=...)
FORBIDDEN = ("approve", "merge", "deploy")
REFUSALS = "desk/crew/refusals"
_MENTIONS = re.compile(r"^(?:@[A-Za-z0-9._-]+\s+)*")
# A keyed send carries its key's tag (`[ref 0123456789]`, see AgentLoop.send); nothing else may follow.
_COMMAND = re.compile(r"^(?P<verb>[a-z_]+) (?P<bug>BUG-\d{4,}) round=(?P<round>[1-9]\d{0,5})"
                      r"(?: of=(?P<of>test|change))?(?: \[ref [0-9a-f]{10}\])?$")
_VERB = re.compile(r"^(?P<verb>[a-z_]+)\b")


@dataclass(frozen=True)
class Command:
    verb: str
    bug_id: str
    round: int
    of: str | None = None  # a review's subject: test or change

    @property
    def text(self) -> str:
        return f"{self.verb} {self.bug_id} round={self.round}" + (f" of={self.of}" if self.of else "")

    def document(self, template: str) -> str:
        """A room document's name for this command (`template` with its round and subject)."""
        return template.format(round=self.round, of=self.of)


def strip_mentions(body: str) -> str:
    """The message without the @-prefix the server adds for its targets."""
    return _MENTIONS.sub("", body, count=1).strip()


def parse(body: str) -> Command | None:
    """The allowlisted command `body` is, or None when it is not exactly one. A forbidden verb
    (approve, merge, deploy) raises RefusedError: it is never a command, whatever follows it."""
    text = strip_mentions(body)
    head = _VERB.match(text)
    if head and head["verb"] in FORBIDDEN:
        raise RefusedError(f"{head['verb']!r} is not a crew command",
                           "people approve, merge and deploy on the desk; agents may only send "
                           + ", ".join(ALLOWED))
    found = _COMMAND.match(text)
    if found is None or found["verb"] not in ALLOWED or (found["of"] is None) == (found["verb"] in REVIEWS):
        return None
    return Command(found["verb"], found["bug"], int(found["round"]), found["of"])


def accepts(command: Command, sender_role: str | None, receiver_role: str) -> bool:
    """True when `sender_role` may send this command and `receiver_role` is the one to act on it."""
    return ALLOWED[command.verb] == (sender_role, receiver_role)


def record_refusal(ledger: SqlLedger, message_id: str, room_id: str, sender: str, sender_role: str | None,
                   body: str, why: str) -> None:
    """Book a refused command once per message id (a redelivered message adds nothing)."""
    ledger.append(REFUSALS, None, [CommandRefused(
        message_id=message_id, room_id=room_id, sender=sender, sender_role=sender_role,
        text=strip_mentions(body)[:200], why=why).new_event()], idempotency_key=f"refused:{message_id}")


def refusals(ledger: SqlLedger) -> list[dict[str, object]]:
    return [ev.payload() for ev in crew_fold.over(CrewRecords(), ledger.read(REFUSALS)).refusals]
