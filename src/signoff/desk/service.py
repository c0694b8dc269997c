"""The desk's service facade: the typed commands a person gives through any face, and `execute`,
the one entry point the faces (HTTP API, CLI, pages, bridges) call for them.

A face parses and authenticates; it builds a command and calls `execute(desk, actor, command)`,
which checks the actor's role, gathers the facts the rule needs (the change's paths and code owners,
the clock) and runs the pure decision of `signoff.desk.decisions` at the version it read. A person's
approval and merge are the one content-bound approval (`signoff.ledger.approval`): each names the
head the face showed, and anything else is refused with nothing recorded.

    execute(desk, alice, ApproveChange("BUG-0001", head="3f2a…", note="reviewed the diff"))
    execute(desk, alice, MergeChange("BUG-0001", head="3f2a…"))   # returns the merge commit

This module is also the one door the faces come through for everything else they need of the desk
(opening it, its credentials, its service loops, the crew, the intake form's fields, its doctor
checks): the names are re-exported here so a face never imports an inner desk module
(tests/unit/desk/test_facade.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

from signoff.desk.approvals import dispute_digest
from signoff.desk.bug_rooms import room_name
from signoff.desk.credentials import Credentials, DeskCaller
from signoff.desk.crew import link_reporter, recorded, require_crew
from signoff.desk.crew import setup as setup_crew
from signoff.desk.crew.agents import PROCESS_ROLES
from signoff.desk.crew.remote import link_remote, link_standin, setup_remote
from signoff.desk.crew.serve import serve_crew
from signoff.desk.crew.status import crew_view
from signoff.desk.doctor import doctor_checks
from signoff.desk.engineering import EngineeringService
from signoff.desk.intake import FIELDS
from signoff.desk.local import configured_owners, init_local
from signoff.desk.model import Bug
from signoff.desk.notify import Concierge
from signoff.desk.reporters import REPORT_ID
from signoff.desk.workflow import Desk, Quarantined, open_desk


@dataclass(frozen=True)
class ApproveChange:
    """A human owner approves the change request of `bug_id` at exactly `head` (the one shown)."""

    bug_id: str
    head: str
    note: str = ""


@dataclass(frozen=True)
class MergeChange:
    """A named human owner merges the change of `bug_id` at `head`, the head they reviewed: every face
    names the head it showed (the CLI prints the current head before it merges), and no other merges."""

    bug_id: str
    head: str


@dataclass(frozen=True)
class AcceptDispute:
    """A human owner agrees with a late reporter's "no" (dispute `index` of `bug_id`), the one shown:
    `shown` is the digest of its text as the face showed it (`dispute_digest`); any other is refused."""

    bug_id: str
    index: int
    shown: str | None = None
    via: str = "desk"


@dataclass(frozen=True)
class ResumeBug:
    """A person takes `bug_id` out of needs_human, into `state` (reproducing, fixing or in_review)."""

    bug_id: str
    state: str


PersonCommand = ApproveChange | MergeChange | AcceptDispute | ResumeBug


@overload
def execute(desk: Desk, actor: DeskCaller, command: MergeChange) -> str: ...


@overload
def execute(desk: Desk, actor: DeskCaller, command: ApproveChange | AcceptDispute | ResumeBug) -> Bug: ...


def execute(desk: Desk, actor: DeskCaller, command: PersonCommand) -> Bug | str:
    """Run a person's command on the desk: the bug after it, or for a merge the merge commit (the
    merge itself is recorded from the forge's signed webhook)."""
    if isinstance(command, ApproveChange):
        return desk.approve(actor, command.bug_id, command.head, command.note)
    if isinstance(command, MergeChange):
        return desk.merge(actor, command.bug_id, command.head)
    if isinstance(command, AcceptDispute):
        return desk.accept_dispute(actor, command.bug_id, command.index, command.shown, command.via)
    return desk.human_resume(actor, command.bug_id, command.state)


__all__ = [
    "FIELDS", "PROCESS_ROLES", "REPORT_ID", "AcceptDispute", "ApproveChange", "Bug", "Concierge", "Credentials", "Desk",
    "DeskCaller", "EngineeringService", "MergeChange", "PersonCommand", "Quarantined", "ResumeBug", "configured_owners",
    "crew_view",
    "dispute_digest", "doctor_checks", "execute", "init_local", "link_remote", "link_reporter", "link_standin",
    "open_desk", "recorded", "require_crew", "room_name", "serve_crew", "setup_crew", "setup_remote",
]
