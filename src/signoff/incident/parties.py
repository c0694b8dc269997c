"""The organisations of an incident, from configuration: who they are, what their guard protects,
and where their evidence is.

An incident has two or more organisations. Each names its approver (the person whose approval a
disclosure needs), its agent, the prefix of its disclosure ids (`D-<PREFIX>-<n>`), its code (files
its guard must never let out, in one language Pygments knows), extra secret patterns (regular
expressions its guard blocks beside the built-in key formats), a file of protected values (customer
names, account numbers: one per line; only salted hashes of them reach the guard's configuration)
and its captures (what its evidence server serves: JSON-lines files or folders of payload files,
see `signoff.incident.captures`).

Written as TOML (`Parties.load`), one table per organisation, paths relative to the file:

    [org.acme]
    name = "Acme"
    approver = "alice"
    language = "go"
    code = ["acme/**/*.go"]
    secret_patterns = ["ACME-[0-9]{8}"]
    protected_values = "acme-customers.txt"
    captures = ["captures/acme.jsonl"]

`Parties.as_json()` is what a workspace keeps (`parties.json`): everything but the protected values.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from signoff.kernel.errors import NotFoundError, UsageError

ORG_KEY = re.compile(r"^[a-z][a-z0-9]{1,23}$")
PERSON = re.compile(r"^[a-z][a-z0-9._-]{0,39}$")
PREFIX = re.compile(r"^[A-Z]{2,8}$")
# Names the workspace and its pins use for other things.
# The notary's comparison rows hold each organisation's byte count under its key, beside these.
RESERVED = frozenset({"shared", "parties", "captures", "evidence", "playbooks", "settings", "notary", "mediator",
                      "approver", "observer", "admin", "path", "status", "delta", "type"})
FIELDS = frozenset({"name", "approver", "agent", "prefix", "language", "code", "secret_patterns",
                    "protected_values", "captures", "people"})


def default_prefix(key: str) -> str:
    """The leading letters of the key, upper case, at most 8 (`acme2` -> `ACME`)."""
    return re.sub(r"[^a-z].*$", "", key)[:8].upper()


@dataclass(frozen=True)
class Organisation:
    key: str                                   # a short slug: rooms, files and pins are named by it
    name: str                                  # as people read it
    approver: str                              # the person whose approval a disclosure needs
    language: str = "python"                   # of its code (a Pygments lexer name)
    agent: str = ""                            # its agent (default `<key>-agent`)
    prefix: str = ""                           # of its disclosure ids (default: its key's letters)
    code: tuple[Path, ...] = ()                # files its guard protects
    secret_patterns: tuple[str, ...] = ()      # regular expressions its guard blocks
    captures: tuple[Path, ...] = ()            # what its evidence server serves
    people: tuple[str, ...] = ()               # others of the organisation in its private room
    # Protected values in the clear: held in memory while the guard is built, never written by this
    # class (`as_json` leaves them out), and only their salted hashes reach the guard configuration.
    protected: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not ORG_KEY.match(self.key) or self.key in RESERVED:
            raise UsageError(f"organisation key {self.key!r} is not usable",
                             "use 2-24 lower-case letters or digits, starting with a letter "
                             f"(not one of {', '.join(sorted(RESERVED))})")
        if not self.agent:
            object.__setattr__(self, "agent", f"{self.key}-agent")
        if not self.prefix:
            object.__setattr__(self, "prefix", default_prefix(self.key))
        for who in (self.approver, self.agent, *self.people):
            if not PERSON.match(who) or who in RESERVED:
                raise UsageError(f"{self.key}: {who!r} is not a usable name for a person or agent",
                                 "use lower-case letters, digits, '.', '_' or '-', starting with a letter")
        if not self.name.strip():
            raise UsageError(f"organisation {self.key} has no name", f"give [org.{self.key}] a name")
        if not PREFIX.match(self.prefix) or not self.key.upper().startswith(self.prefix):
            # The id names its organisation: D-ACME-3 can only be acme's.
            raise UsageError(f"{self.key}: disclosure prefix {self.prefix!r} is not usable",
                             f"use 2-8 capital letters that begin {self.key.upper()}")
        for pattern in self.secret_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise UsageError(f"{self.key}: secret pattern {pattern!r} is not a regular expression ({exc})",
                                 "fix the pattern (Python's re syntax)") from None

    @property
    def private_room(self) -> str:
        return f"{self.key}-internal"

    def as_json(self) -> dict[str, Any]:
        """Everything but the protected values (a workspace's `parties.json`)."""
        return {"key": self.key, "name": self.name, "approver": self.approver, "agent": self.agent,
                "prefix": self.prefix, "language": self.language, "code": [str(p) for p in self.code],
                "secret_patterns": list(self.secret_patterns), "captures": [str(p) for p in self.captures],
                "people": list(self.people)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Organisation:
        try:
            return cls(str(data["key"]), str(data["name"]), str(data["approver"]), str(data.get("language", "python")),
                       str(data.get("agent", "")), str(data.get("prefix", "")),
                       tuple(Path(p) for p in data.get("code", [])),
                       tuple(str(p) for p in data.get("secret_patterns", [])),
                       tuple(Path(p) for p in data.get("captures", [])),
                       tuple(str(p) for p in data.get("people", [])))
        except (KeyError, TypeError) as exc:
            raise UsageError(f"an organisation needs key, name and approver ({exc})",
                             "write them in the incident configuration") from None


@dataclass(frozen=True)
class Parties:
    """The organisations of one incident, in the order configured."""

    orgs: tuple[Organisation, ...]

    def __post_init__(self) -> None:
        if len(self.orgs) < 2:
            raise UsageError("an incident needs two or more organisations", "configure each one as [org.<key>]")
        for what, values in (("key", [o.key for o in self.orgs]), ("prefix", [o.prefix for o in self.orgs]),
                             ("person or agent", [n for o in self.orgs for n in (o.approver, o.agent, *o.people)])):
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:
                raise UsageError(f"the same {what} is configured twice: {', '.join(twice)}",
                                 f"give each organisation its own {what}")
        for o in self.orgs:
            for other in self.orgs:
                if other is not o and other.key.upper().startswith(o.prefix):
                    raise UsageError(f"{o.key}'s prefix {o.prefix} also begins {other.key}'s key",
                                     f"give {o.key} a longer prefix")

    def __iter__(self) -> Iterator[Organisation]:
        return iter(self.orgs)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.orgs)

    @property
    def names(self) -> dict[str, str]:
        return {o.key: o.name for o in self.orgs}

    def get(self, key: str | None) -> Organisation:
        for o in self.orgs:
            if o.key == key:
                return o
        raise UsageError(f"unknown organisation {key!r}", f"use one of: {', '.join(self.keys)}")

    def check(self, key: str) -> str:
        return self.get(key).key

    def of_prefix(self, prefix: str) -> Organisation | None:
        return next((o for o in self.orgs if o.prefix == prefix), None)

    def others(self, key: str) -> tuple[Organisation, ...]:
        return tuple(o for o in self.orgs if o.key != key)

    def as_json(self) -> dict[str, Any]:
        return {"version": 1, "orgs": [o.as_json() for o in self.orgs]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Parties:
        orgs = data.get("orgs")
        if not isinstance(orgs, list) or not all(isinstance(o, dict) for o in orgs):
            raise UsageError("not a list of organisations", "write parties with Parties.as_json()")
        return cls(tuple(Organisation.from_json(o) for o in orgs))

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.as_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> Parties:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise NotFoundError(f"no organisations at {path}", "run `signoff incident setup`") from exc
        except ValueError as exc:
            raise UsageError(f"{path} is not JSON", "run `signoff incident setup` again") from exc
        if not isinstance(data, dict):
            raise UsageError(f"{path} is not a list of organisations", "run `signoff incident setup` again")
        return cls.from_json(data)

    @classmethod
    def load(cls, path: Path) -> Parties:
        """An incident configuration (TOML, see the module's doc; a folder means its `incident.toml`);
        paths are relative to its folder."""
        path = Path(path)
        if path.is_dir():
            path = path / "incident.toml"
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError as exc:
            raise NotFoundError(f"no incident configuration at {path}", "write one (docs/incident.md, "
                                "\"Your own incident\") or pass its path") from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path} is not TOML: {exc}", "fix the file") from exc
        except OSError as exc:
            raise UsageError(f"cannot read {path} ({exc.strerror})", "pass the path of a readable incident.toml") \
                from exc
        orgs = data.get("org")
        if not isinstance(orgs, dict) or not all(isinstance(v, dict) for v in orgs.values()):
            raise UsageError(f"{path} configures no organisations", "add a table [org.<key>] for each one")
        return cls(tuple(_org_from_toml(key, table, path.parent) for key, table in orgs.items()))


def _strings(key: str, table: Mapping[str, Any], name: str) -> list[str]:
    value = table.get(name, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"[org.{key}] {name} is not a list of strings", f'write {name} = ["..."]')
    return list(value)


def _code_files(key: str, patterns: list[str], base: Path) -> tuple[Path, ...]:
    files: set[Path] = set()
    for pattern in patterns:
        root = Path(pattern)
        if root.is_absolute():
            found = sorted(Path(root.anchor).glob(str(root.relative_to(root.anchor))))
        else:
            found = sorted(base.glob(pattern))
        found = [p.resolve() for p in found if p.is_file()]
        if not found:
            # A guard that protects nothing would pass every line of code: say so now.
            raise UsageError(f"[org.{key}] code pattern {pattern!r} matches no file (relative to {base})",
                             "point code at the organisation's source files")
        files.update(found)
    return tuple(sorted(files))


def _protected(key: str, value: Any, base: Path) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, str):
        raise UsageError(f"[org.{key}] protected_values is not a file name",
                         "name a file with one protected value a line (it stays with you; only salted hashes "
                         "of its values are kept)")
    path = base / value
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise NotFoundError(f"[org.{key}] protected values file not found: {path}", "fix the path") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"[org.{key}] protected values file {path} is not UTF-8",
                         "save it as UTF-8 (the guard matches names with their accents)") from exc
    return tuple(v.strip() for v in lines if v.strip() and not v.lstrip().startswith("#"))


def _org_from_toml(key: str, table: Mapping[str, Any], base: Path) -> Organisation:
    unknown = sorted(set(table) - FIELDS)
    if unknown:
        raise UsageError(f"[org.{key}] has settings signoff does not know: {', '.join(unknown)}",
                         f"use only: {', '.join(sorted(FIELDS))}")
    for name in ("name", "approver", "agent", "prefix", "language"):
        if name in table and not isinstance(table[name], str):
            raise UsageError(f"[org.{key}] {name} is not a string", f'write {name} = "..."')
    if "name" not in table or "approver" not in table:
        raise UsageError(f"[org.{key}] needs a name and an approver", 'write name = "..." and approver = "..."')
    if "code" in table and "language" not in table:
        # The guard reads the code with this language's lexer: a guess would protect the wrong shapes.
        raise UsageError(f"[org.{key}] names code but not its language", 'add language = "go" (say): a language '
                         "Pygments knows")
    org = Organisation(key, table["name"], table["approver"], table.get("language", "python"),
                       table.get("agent", ""), table.get("prefix", ""),
                       _code_files(key, _strings(key, table, "code"), base),
                       tuple(_strings(key, table, "secret_patterns")),
                       tuple((base / p).resolve() for p in _strings(key, table, "captures")),
                       tuple(_strings(key, table, "people")),
                       _protected(key, table.get("protected_values"), base))
    from signoff.incident.shapes import lexer

    lexer(org.language)  # an unknown language is refused now, not when the guard first reads a post
    return org


def with_captures(parties: Parties, captures: Mapping[str, list[Path]]) -> Parties:
    """The same organisations with these captures (e.g. a reproduction written for this run)."""
    return Parties(tuple(replace(o, captures=tuple(captures.get(o.key, o.captures))) for o in parties))


__all__ = ["ORG_KEY", "Organisation", "Parties", "default_prefix", "with_captures"]
