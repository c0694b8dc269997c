"""`signoff serve --demo`: the pages on the state `signoff demo` (`make demo`) left behind, so that a
newcomer can look around at once.

The home holds the rooms, evidence and ledger of the repair, notes and ledger demos; the desk demo
keeps its last run on a home of its own (`last_run_home`), which becomes the app's desk. A visitor
is bound to both the way an admin binds anyone: a room user `visitor` (an admin, so every demo
room is readable) and a human owner credential of the same name on the demo desk. Signing in takes
a one-time link, printed at start; nothing here holds a password.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path

from fastapi import FastAPI

from signoff.demo.desk import last_run_home
from signoff.demo.visitor import SCRIPTED, VISITOR, RepairAgents, ask_card, ensure_visitor
from signoff.desk.workflow import open_desk
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.rooms import RoomService
from signoff.rooms.domain.signin import SignIns

# Folders only the demos write into a home: one of them means the demos ran here (the incident
# demo's runs live where the console lists them).
DEMO_FOLDERS = ("demo-desk", "demo-repair", "incident-runs")


@dataclass(frozen=True)
class DemoVisit:
    home: Path
    user: str
    signin_token: str  # shown once: spent by its first use
    desk_home: Path | None


def require_demo_state(current: Settings) -> None:
    """Refuse (before anything is opened or written) a home the demos never ran on."""
    if not any((current.home / folder).is_dir() for folder in DEMO_FOLDERS):
        raise UsageError(f"{current.home} holds no demo state",
                         "run `make demo` (or `signoff demo`) first, in the folder you serve from")


def open_demo(app: FastAPI, current: Settings) -> DemoVisit:
    """Bind the visitor, give the app the demo desk, leave the visitor's work (see
    `signoff.demo.visitor`), and issue a one-time sign-in link's secret."""
    require_demo_state(current)
    rooms: RoomService = app.state.rooms
    user = ensure_visitor(rooms, current.home)
    desk_home: Path | None = last_run_home(current)
    if desk_home is not None and desk_home.is_dir():
        desk = open_desk(Settings.load(home=desk_home))
        if not any(c.get("role") == "owner" and c.get("name") == VISITOR for c in desk.credentials.list()):
            # The token is not kept: the pages bind a signed-in person to an owner by name.
            desk.credentials.issue("owner", VISITOR, human=True)
        app.state.desk = desk
    else:
        desk_home = None
    ask_card(rooms, user)
    # The visitor decides on the notes runs as `[notes] deciders` says, for the served app only.
    notes = dict(current.section("notes"))
    notes["deciders"] = [*notes.get("deciders", []), VISITOR]
    app.state.settings = replace(current, raw={**current.raw, "notes": notes})
    app.state.simulated_people = SCRIPTED
    app.state.demo_agents = RepairAgents(rooms, current, threading.Event()).start()
    token = SignIns(rooms.ledger).issue_link(user.id)
    return DemoVisit(current.home, VISITOR, token, desk_home)
