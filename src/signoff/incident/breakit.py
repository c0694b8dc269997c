"""Try to break it: a visitor's text put through the real controls, as a company agent's post to the
shared room would be: both companies' pinned disclosure guards and the airlock. The answer holds the
verdicts and the rules or families that fired, never the text; nothing is stored (the guards run
unlogged) and nothing is logged.

The guards are the ones `Workspace.setup` builds for the organisations the face hands in (the
demo's: never a real incident's, whose guards would answer guesses at its protected values), in a
workspace of their own under the signoff home (`incident-try/`), so that trying text never touches a
real incident's workspace or its ledgers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.airlock import DESCRIPTIONS, scan
from signoff.incident.guard import Post
from signoff.incident.parties import Parties
from signoff.incident.redteam import FORBIDDEN, LIVE, sent_text
from signoff.incident.stack import ROOM_NAMES
from signoff.incident.workspace import SHARED_ROOM, Workspace
from signoff.kernel.errors import UsageError
from signoff.trust import KeyStore

MAX_CHARS = 4000  # a post to the shared room, not a document


@dataclass(frozen=True)
class Attack:
    name: str
    where: str
    text: str | None      # exactly what the red team sends, where it is a text
    fired: str | None     # what the red team fires at a control, where it is not a text

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "where": self.where, "text": self.text, "fired": self.fired}


def attacks() -> list[Attack]:
    """Every attack of `signoff incident redteam`: the live ones with the exact text sent, the
    forbidden actions by what they fire."""
    live = [Attack(a.name, f"{a.who} in {ROOM_NAMES.get(a.room, a.room)}", sent_text(a), None) for a in LIVE]
    forbidden = [Attack(name, "straight at the controls", None, name) for name in FORBIDDEN]
    return [*live, *forbidden]


def try_workspace(home: Path, keys: KeyStore, parties: Parties) -> Workspace:
    ws = Workspace(Path(home) / "incident-try", keys)
    if not ws.is_set_up():
        ws.setup(parties)
    return ws


def try_text(ws: Workspace, text: str) -> dict[str, Any]:
    """The airlock's verdict and each guard's, for `text` posted to the shared room."""
    if not text.strip():
        raise UsageError("there is no text to try", "type or paste what an agent might post")
    if len(text) > MAX_CHARS:
        raise UsageError(f"the text is {len(text)} characters; at most {MAX_CHARS} are tried",
                         "try a shorter text: one post to the shared room")
    airlock = scan(text)
    guards = {}
    for org in ws.orgs:
        verdict = ws.guard(org, logged=False).check(Post(SHARED_ROOM, text))
        guards[org] = {"allowed": verdict.allowed, "rules": list(verdict.rules), "counts": dict(verdict.counts)}
    return {
        "airlock": {"quarantined": airlock.quarantined, "families": list(airlock.families),
                    "descriptions": {f: DESCRIPTIONS.get(f, "") for f in airlock.families}},
        "guards": guards,
        "blocked": airlock.quarantined or not all(g["allowed"] for g in guards.values()),
    }


__all__ = ["MAX_CHARS", "Attack", "attacks", "try_text", "try_workspace"]
