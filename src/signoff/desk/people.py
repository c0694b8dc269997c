"""People, not logins: who is behind an approval, whichever face it came through.

DESIGN rule 4 asks sensitive changes for two distinct *people*. A person is a record: a human owner
credential of the desk (issued to one named person) and the logins `[desk.people]` binds to them on
each face:

    [desk.people.alice]
    desk = ["alice"]            # desk owner credentials (default: the person's own name)
    forge = ["Alice-Work"]      # forge (GitHub) logins
    rooms = ["@alice:example"]  # rooms users (sender ids)

A login no record binds belongs to nobody: it never counts as a second human, and never as the code
owner a tier 2 change needs. The local forge is the desk's own, so its logins are the desk's owner
names. Two logins bound to one person are that person once. A login bound to two people is a
configuration error.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from signoff.kernel.errors import UsageError

FACES = ("desk", "forge", "rooms")


@dataclass(frozen=True)
class People:
    """The configured person records: (face, lower-cased login) -> person."""

    bound: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: object) -> People:
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise UsageError("[desk.people] must be a table of people", '[desk.people.alice] forge = ["alice-gh"]')
        bound: dict[tuple[str, str], str] = {}
        for person, record in raw.items():
            where = f"[desk.people.{person}]"
            if not isinstance(record, Mapping) or set(record) - set(FACES):
                raise UsageError(f"{where} must be a table with only {', '.join(FACES)}",
                                 f'e.g. {where} forge = ["{person}-gh"]')
            logins = {face: record.get(face, [person] if face == "desk" else []) for face in FACES}
            for face, names in logins.items():
                if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
                    raise UsageError(f"{where} {face} must be a list of logins", f'{face} = ["login"]')
                for name in names:
                    key = (face, name.strip().lower())
                    if bound.setdefault(key, person.lower()) != person.lower():
                        raise UsageError(f"{face} login {name!r} is bound to both {bound[key]} and {person}",
                                         "bind each login to one person")
        return cls(bound)

    def names(self) -> list[str]:
        """The configured people, each once, in the order they first appear."""
        return list(dict.fromkeys(self.bound.values()))

    def person(self, face: str, login: str, owners: Collection[str], local_forge: bool) -> str | None:
        """The person behind `login` on `face` (None: nobody the desk knows). `owners` are the names
        of the desk's human owner credentials (not the shared key, not bots)."""
        name = login.strip().lower()
        if (face, name) in self.bound:
            return self.bound[(face, name)]
        if name in owners and (face == "desk" or (face == "forge" and local_forge)):
            return self.bound.get(("desk", name), name)  # an owner credential is its person's
        return None

    def forge_logins(self, person: str, local_forge: bool) -> frozenset[str]:
        """The forge logins of `person` (CODEOWNERS names forge logins)."""
        found = {login for (face, login), p in self.bound.items() if face == "forge" and p == person}
        if local_forge:
            found |= {login for (face, login), p in self.bound.items() if face == "desk" and p == person}
            found.add(person)
        return frozenset(found)
