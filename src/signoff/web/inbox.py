"""What is waiting for the signed-in person, across the workflows, newest first: each item says
what waits, since when, and links to the page where they decide.

Read through the workflows' own facades and projections (the room service's pending cards, the
repair service's cases, the notes service's deciders and runs, the desk's bugs); nothing here
decides who may act: an item is listed where the workflow would take that person's decision (the
linked operator of a repair case, a notes decider, a desk owner, a card's responder), and the page
it links to asks the workflow again.

Incident approvals are listed to the person `[web] incident_views` binds to an organisation, for
each running (not yet recorded) run in which that organisation waits for them as its approver
(`incident.service.awaiting`: disclosures, fix requests, a proposed root cause); a recorded run's
approvals are history, not requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from fastapi import Request

from signoff.desk.service import Bug
from signoff.incident import service
from signoff.kernel.errors import SignoffError
from signoff.repair import CaseState, RepairService
from signoff.rooms import Principal
from signoff.web.desk_access import desk_of, desk_owner
from signoff.web.incident_pages import bound_org, keys_of, link, runs_base
from signoff.web.notes_pages import notes_service, runs_listed
from signoff.web.render import moment, templates
from signoff.web.scripted import simulated  # noqa: F401  (registers the pages' "simulated" label)
from signoff.web.state import web_state

# A case's state waiting for its operator: (kind, title, anchor on the case page, the stage a card may decide).
REPAIR_WAITS = {"CONTRACT_PROPOSED": ("repair contract", "Approve the contract of {case}", "contract", "contract"),
                "AWAITING_REVIEW": ("repair accept", "Accept or reject the fix for {case}", "actions", "review")}


@dataclass(frozen=True)
class Waiting:
    kind: str  # what sort of decision: "approval card", "repair contract", "notes run", ...
    title: str
    href: str  # the page where the person decides
    at: str  # when it started waiting, ISO 8601 ("" when the workflow did not record it)
    detail: str = ""
    key: str = ""  # what stays the same while it waits (a card's id: its link is its place on the page)

    @property
    def identity(self) -> str:
        """The same item from one reading to the next (notifications send each once)."""
        return f"{self.kind}|{self.key or self.href}|{self.at}"

    @property
    def order(self) -> datetime:
        return moment(self.at) or datetime.min.replace(tzinfo=UTC)


def _iso(value: float | None) -> str:
    found = moment(value)
    return found.isoformat() if found else ""


def answerable_cards(request: Request, user: Principal) -> list[Any]:
    """The pending cards `user` may answer: named on it, or holding one of its roles now. (The rooms
    service lists every pending card to an admin, who may read them all but answer only their own.)"""
    rooms = web_state(request).rooms
    cards = rooms.pending_approvals(user)
    held = rooms.people_role_table() if any(c.responder_roles for c in cards) else {}
    return [c for c in cards if user.id in c.responders
            or any(user.id in held.get(role, set()) for role in c.responder_roles)]


def _cards(request: Request, user: Principal) -> list[Waiting]:
    web = web_state(request)
    cards = answerable_cards(request, user)
    names = {r["room_id"]: r["name"] for r in web.rooms.list_rooms(user)} if cards else {}
    # The anchor is the card's own id (the id grammar's characters are all fragment-safe): a link
    # sent by webhook or e-mail must still open this card after others were answered or asked.
    return [Waiting("approval card", card.title, f"/#card-{card.card_id}", _iso(card.requested_at),
                    f"in room {names.get(card.room_id, card.room_id)}, asked by "
                    f"{card.requester_name or card.requester_agent_id}", key=card.card_id)
            for card in cards]


def _repair(request: Request, user: Principal) -> list[Waiting]:
    """Cases waiting for their linked operator (only they may approve, accept or reject)."""
    settings = web_state(request).settings
    if settings is None:  # an app without a home (in-process use) has no repair workspace
        return []
    service = RepairService(web_state(request).rooms.ledger, settings)
    mine: list[CaseState] = [c for c in service.cases() if c.operator == user.sender and c.state in REPAIR_WAITS]
    out = []
    for case in mine:
        kind, title, anchor, stage = REPAIR_WAITS[case.state]
        if case.card(stage) is not None:
            continue  # asked on an approval card: decided there (listed with the cards), not on the case page
        since = service.history(case.case_id)[-1].recorded_at  # when the case moved to this state
        out.append(Waiting(kind, title.format(case=case.case_id), f"/repair/{quote(case.case_id)}#{anchor}", since,
                           case.contract.behaviour[:200]))
    return out


def _notes(request: Request, user: Principal) -> list[Waiting]:
    """Runs not shipped yet, for a notes decider only (nobody else may decide on them)."""
    if web_state(request).settings is None or not notes_service(request).may_decide(user.name):
        return []
    return [Waiting("notes run", f"Decide on the release notes {run['name']}", f"/notes/runs/{quote(run['name'])}",
                    run["modified"], f"{run['approved']} of {run['sentences']} sentences approved")
            for run in runs_listed(request) if not run["shipped"]]


def _bug(bug: Bug) -> list[Waiting]:
    href = f"/bugs/{quote(bug.bug_id)}"
    last = bug.log[-1]["at"] if bug.log else ""
    out = []
    if bug.state == "in_review":
        out.append(Waiting("bug review", f"Review and merge the change for {bug.bug_id}: {bug.title}",
                           f"{href}#change", bug.times.get("draft", last)))
    elif bug.state == "needs_human":
        out.append(Waiting("bug needing a person", f"{bug.bug_id}: {bug.title}", href, last, bug.needs_human or ""))
    out.extend(Waiting("dispute", f"A late reporter answered no on {bug.bug_id}: {bug.title}", f"{href}#disputes",
                       str(d.get("at", "")), f"report {d.get('report_id', '')}: {d.get('reason', '')}")
               for d in bug.open_disputes())
    return out


def _bugs(request: Request, user: Principal) -> list[Waiting]:
    """For a desk owner: changes in review, bugs that need a person, disputes not yet agreed with."""
    desk = desk_of(request)
    if desk is None or desk_owner(desk, user) is None:
        return []
    # Most bugs wait for nobody: only those in review, needing a person or with a dispute are looked at.
    return [item for bug in desk.bugs() if bug.state in ("in_review", "needs_human") or bug.disputes
            for item in _bug(bug)]


INCIDENT_KINDS = {"disclosure": "Approve or refuse the disclosure {ref}", "fix": "Approve the fix request {ref}",
                  "root_cause": "Confirm the root cause of {ref}"}


def _incidents(request: Request, user: Principal) -> list[Waiting]:
    """For a person bound to an organisation: what its running incidents wait for them to decide."""
    org = bound_org(request, user) if web_state(request).settings is not None else None
    if org is None:
        return []
    base, keys = runs_base(request), keys_of(request)
    out = []
    for run in service.list_runs(base):
        if run["recorded"]:
            continue  # finished: its approvals are history
        run_dir = service.find_run(base, run["name"])
        if org not in service.run_orgs(run_dir):
            continue
        since = _iso((run_dir / "run.json").stat().st_mtime)
        for item in service.awaiting(service.console_view(run_dir, keys, org), org, user.name):
            title = INCIDENT_KINDS.get(item.kind, "Decide on {ref}").format(ref=item.ref)
            out.append(Waiting("incident approval", f"{title} (incident {run['name']})",
                               f"{link(run['name'], org)}#decide-{quote(item.ref)}", since, item.shown[:200]))
    return out


def _off_the_loop(read: Callable[[Request, Principal], list[Waiting]], request: Request,
                  user: Principal) -> list[Waiting]:
    """`read(request, user)`, on a thread of its own when called on the server's event loop (a page
    rendered by an async route): an incident's record is read with a loop of its own, which cannot
    start inside a running one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return read(request, user)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(read, request, user).result()


def waiting_for(request: Request, user: Principal) -> list[Waiting]:
    """Everything waiting for `user`, newest first (read once a request: the page and its menu share it)."""
    kept: tuple[str, list[Waiting]] | None = getattr(request.state, "waiting", None)
    if kept is None or kept[0] != user.id:
        found = [*_cards(request, user), *_repair(request, user), *_notes(request, user), *_bugs(request, user),
                 *_off_the_loop(_incidents, request, user)]
        kept = (user.id, sorted(found, key=lambda w: w.order, reverse=True))
        request.state.waiting = kept
    return kept[1]


def waiting_count(request: Request, user: Principal) -> int | None:
    """For the menu of every page: None when a workflow cannot be read now (the start page, which
    reads the same, then says why), so that no other page fails for the menu's sake."""
    try:
        return len(waiting_for(request, user))
    except SignoffError:
        return None


# The menu shows the count on every signed-in page (base.html).
templates.globals["waiting_count"] = waiting_count
