"""The PayCo/ShopCo fixture: where it lives and what each organisation captured.

The fixture's code is in `examples/payco-shopco/` (PayCo in Python, ShopCo in JavaScript). Each side
writes a capture file (JSON lines): PayCo the bytes it sent and signed, ShopCo the bytes its worker
verified. Those captures are what each organisation's evidence server holds.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass
from pathlib import Path

from signoff.kernel.errors import NotFoundError, UsageError

ORGS = ("payco", "shopco")
ORG_NAMES = {"payco": "PayCo", "shopco": "ShopCo"}  # as people read them
FIXTURE_ENV = "SIGNOFF_INCIDENT_FIXTURE"


def fixture_dir(explicit: Path | None = None) -> Path:
    """The payco-shopco folder: explicit, $SIGNOFF_INCIDENT_FIXTURE, ./examples/, or the source checkout's."""
    candidates: list[Path] = []
    if explicit is not None:
        candidates.append(Path(explicit))
    elif os.environ.get(FIXTURE_ENV):
        candidates.append(Path(os.environ[FIXTURE_ENV]))
    else:
        candidates.append(Path.cwd() / "examples" / "payco-shopco")
        candidates.extend(p / "examples" / "payco-shopco" for p in Path(__file__).resolve().parents)
    for c in candidates:
        if (c / "payco" / "payco" / "sender.py").is_file() and (c / "shopco" / "app" / "server.js").is_file():
            return c
    raise NotFoundError(
        f"the PayCo/ShopCo fixture is not at {candidates[0]}",
        f"run from a signoff checkout, pass --fixture, or set {FIXTURE_ENV} to examples/payco-shopco",
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


@dataclass(frozen=True)
class Captured:
    """One request as an organisation saw it: the bytes it signed (PayCo) or verified (ShopCo)."""

    event_id: str
    status: int
    raw: bytes


def load_capture(path: Path) -> list[Captured]:
    """Read a capture file written by either side of the fixture."""
    out: list[Captured] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise NotFoundError(f"capture file not found: {path}", "run `signoff incident simulate` first") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            blob = row.get("raw_b64") or row.get("verified_b64")
            out.append(Captured(str(row["event_id"]), int(row["status"]), base64.b64decode(blob, validate=True)))
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            raise UsageError(f"{path} line {n} is not a capture record", "re-run the simulation") from exc
    return out


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
