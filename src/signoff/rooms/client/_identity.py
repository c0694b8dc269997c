"""Who sent a message, in a workflow's terms, from the sender id the server authenticated.

Sender ids are opaque: signoff writes `user:<id>`, a Switch core writes Matrix ids (puppets for
bridged people, `@switch-agent-…` for agents). A workflow never parses them and never trusts a name
in a message body. It binds a person to a role (operator, approver, decider) in one of three ways:
- configured: `[rooms.people] <name> = "<sender id>"` (`Identities.configured`);
- the embedded server's own directory of users and agents (`Identities.of_directory`);
- a receipt probe: the person posts through their own authenticated face, and the sender id the
  server wrote on that exact message (found by its server-assigned id) is bound (`probe_sender`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from signoff.kernel.errors import ConflictError, NotFoundError, UsageError


@dataclass(frozen=True)
class Person:
    name: str
    kind: str  # "user" (a person) or "agent"
    sender: str


class Identities:
    """Sender id -> who it is. Compared whole (constant-time is not needed: ids are not secrets)."""

    def __init__(self, people: Iterable[Person] = ()) -> None:
        self._by_sender: dict[str, Person] = {}
        for person in people:
            self.bind(person)

    @classmethod
    def configured(cls, people: Mapping[str, str]) -> Identities:
        """`{name: sender id}` from `[rooms.people]`: everyone configured is a person."""
        return cls(Person(name, "user", sender) for name, sender in people.items())

    @classmethod
    def of_directory(cls, users: Iterable[Any], agents: Iterable[Any] = ()) -> Identities:
        """From principals with `name`, `kind` and `sender` (the embedded server's directory)."""
        return cls(Person(p.name, p.kind, p.sender) for p in [*users, *agents])

    def bind(self, person: Person) -> None:
        if not person.sender:
            raise UsageError(f"{person.name} has an empty sender id", "bind the id the server writes")
        known = self._by_sender.get(person.sender)
        if known is not None and known != person:
            raise ConflictError(f"sender {person.sender} is already bound to {known.name}",
                                "one sender id stands for one person")
        self._by_sender[person.sender] = person

    def who(self, sender: str) -> Person | None:
        return self._by_sender.get(sender)

    def sender_of(self, name: str) -> str | None:
        found = [p.sender for p in self._by_sender.values() if p.name == name and p.kind == "user"]
        return found[0] if len(found) == 1 else None


def probe_sender(post: Callable[[str], Mapping[str, Any]], find: Callable[[str], Mapping[str, Any] | None],
                 nonce: str) -> str:
    """Learn a person's sender id from a message they post through their own authenticated face:
    `post(text)` returns the server's `{event_id}`, `find(event_id)` reads that message back as the
    workflow's agent sees it. The id comes from the server's record, never from the text."""
    if not nonce:
        raise UsageError("a probe needs a nonce", "pass a fresh random string")
    posted = post(f"identity probe {nonce}")
    message_id = str(posted.get("event_id") or "")
    found = find(message_id) if message_id else None
    if found is None:
        raise NotFoundError("the probe message was not found in the room", "check that both are members")
    sender = found.get("sender")
    if not isinstance(sender, str) or not sender or not str(found.get("body", "")).endswith(nonce):
        raise ConflictError("the probe message read back does not match what was posted",
                            "probe again in a room nobody else controls")
    return sender
