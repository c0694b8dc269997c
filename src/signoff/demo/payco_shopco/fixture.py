"""The PayCo/ShopCo fixture: where it lives, its two organisations and what each captured.

The fixture's code is in `examples/payco-shopco/` (PayCo in Python, ShopCo in JavaScript). Each side
writes a capture file (JSON lines, `signoff.incident.captures`): PayCo the bytes it sent and signed,
ShopCo the bytes its worker verified. Those captures are what each organisation's evidence server
holds. `parties` is the fixture as an incident configuration: the organisations the demo runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from signoff.demo.fixture import installed_examples
from signoff.incident.captures import Captured, load_capture
from signoff.incident.parties import Organisation, Parties
from signoff.kernel.errors import NotFoundError, UsageError

ORGS = ("payco", "shopco")
ORG_NAMES = {"payco": "PayCo", "shopco": "ShopCo"}  # as people read them
FIXTURE_ENV = "SIGNOFF_INCIDENT_FIXTURE"


def fixture_dir(explicit: Path | None = None) -> Path:
    """The payco-shopco folder: explicit, $SIGNOFF_INCIDENT_FIXTURE, ./examples/, the source checkout's,
    or the installed copy."""
    candidates: list[Path] = []
    if explicit is not None:
        candidates.append(Path(explicit))
    elif os.environ.get(FIXTURE_ENV):
        candidates.append(Path(os.environ[FIXTURE_ENV]))
    else:
        candidates.append(Path.cwd() / "examples" / "payco-shopco")
        candidates.extend(p / "examples" / "payco-shopco" for p in Path(__file__).resolve().parents)
        candidates.append(installed_examples() / "payco-shopco")
    for c in candidates:
        if (c / "payco" / "payco" / "sender.py").is_file() and (c / "shopco" / "app" / "server.js").is_file():
            return c
    raise NotFoundError(
        f"the PayCo/ShopCo fixture is not at {candidates[0]}",
        f"reinstall signoff (its wheel carries the fixture), pass --fixture, or set {FIXTURE_ENV} to "
        "examples/payco-shopco",
    )


def code_files(org: str, fixture: Path | None = None) -> list[Path]:
    """The organisation's own source files (what its guard must never let out)."""
    root = fixture_dir(fixture)
    if org == "payco":
        return sorted((root / "payco" / "payco").glob("*.py"))
    if org == "shopco":
        return sorted((root / "shopco" / "app").rglob("*.js"))
    raise UsageError(f"unknown organisation {org!r}", f"use one of: {', '.join(ORGS)}")


def language_of(org: str) -> str:
    return {"payco": "python", "shopco": "javascript"}[check_org(org)]


def check_org(org: str) -> str:
    if org not in ORGS:
        raise UsageError(f"unknown organisation {org!r}", f"use one of: {', '.join(ORGS)}")
    return org


def customer_names(fixture: Path | None = None) -> list[str]:
    """PayCo's customer list (the fixture's own data; only ever hashed by the guard)."""
    root = fixture_dir(fixture)
    namespace: dict[str, object] = {}
    source = (root / "payco" / "payco" / "events.py").read_text(encoding="utf-8")
    exec(compile(source, "payco/events.py", "exec"), namespace)  # noqa: S102 - our own fixture file
    names = namespace["customer_names"]
    assert callable(names)
    result = names()
    assert isinstance(result, list)
    return [str(n) for n in result]


HUMANS = {"payco": "priya", "shopco": "sam"}
PREFIXES = {"payco": "PAY", "shopco": "SHOP"}
PEOPLE = {"payco": ("dave",), "shopco": ()}  # dave: a PayCo engineer who is not its approver


def parties(fixture: Path | None = None, captures: Path | None = None) -> Parties:
    """PayCo and ShopCo as an incident configuration: each guard protects its own code and the
    customer names (PayCo's customers, which ShopCo holds too); with `captures`, the folder a
    simulation wrote (`<org>-capture.jsonl`) is each evidence server's."""
    names = tuple(customer_names(fixture))
    return Parties(tuple(
        Organisation(org, ORG_NAMES[org], HUMANS[org], language_of(org), prefix=PREFIXES[org],
                     code=tuple(code_files(org, fixture)), people=PEOPLE[org], protected=names,
                     captures=(Path(captures) / f"{org}-capture.jsonl",) if captures is not None else ())
        for org in ORGS))


__all__ = ["FIXTURE_ENV", "ORGS", "ORG_NAMES", "Captured", "check_org", "code_files", "customer_names",
           "fixture_dir", "language_of", "load_capture", "parties"]
