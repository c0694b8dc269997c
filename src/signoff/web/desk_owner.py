"""The desk's pages for owners: the bug board by state, and a bug's page (dossiers labelled
untrusted, the reproduction, advisory notes labelled advisory, the change as a diff with its tier,
the approvals so far and what is still missing), with "approve this exact head" and "merge".
The crew page shows each crew role's status from the server's own view of its connections
(heartbeats), the policy drift and the commands it refused.
The desk decides every step; a refusal is shown with its reason and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from signoff.desk.service import (
    AcceptDispute,
    ApproveChange,
    Bug,
    Desk,
    DeskCaller,
    MergeChange,
    crew_view,
    dispute_digest,
    execute,
    room_name,
)
from signoff.kernel.errors import NotFoundError, RefusedError, UnavailableError, UsageError
from signoff.rooms.client import RoomsConfig
from signoff.web.desk_access import desk_of, desk_owner
from signoff.web.diffs import diff_files, split_asked
from signoff.web.evidence_pages import confined, evidence_download, verified
from signoff.web.listing import Lister, Sort, listed
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, signed_in, web_state

router = APIRouter(route_class=PageRoute)
STATES = ("reproducing", "awaiting_reporter", "fixing", "in_review", "needs_human", "reopened", "merged",
          "released", "verified")
PER_PAGE = 100  # bugs the board lists at once; the rest are a page away
TIERS = {0: "tier 0: documentation only", 1: "tier 1: code (one human approval of the exact head)",
         2: "tier 2: sensitive paths (two distinct humans, one of them a code owner)"}


def _owner(request: Request) -> tuple[Desk, DeskCaller]:
    user = signed_in(request)
    desk = desk_of(request)
    if desk is None:
        raise UnavailableError("this server has no bug desk", "run `signoff serve` on a desk's home")
    owner = desk_owner(desk, user)
    if owner is None:
        raise RefusedError(f"{user.name} is not a desk owner",
                           f"an admin issues one: signoff desk credential owner {user.name}")
    return desk, owner


def _activity(bug: Bug) -> str:
    return str(bug.log[-1]["at"]) if bug.log else ""


BOARD = Lister[Bug](
    text=lambda b: f"{b.bug_id} {b.title} {b.component} {b.state.replace('_', ' ')}",
    sorts={"activity": Sort("latest activity first", _activity, reverse=True),
           "newest": Sort("newest first", lambda b: b.bug_id, reverse=True),
           "oldest": Sort("oldest first", lambda b: b.bug_id),
           "title": Sort("title", lambda b: (b.title.casefold(), b.bug_id))},
    state=lambda b: b.state, owner=lambda b: b.component, owner_label="component",
    per_page=PER_PAGE, states=STATES)


@router.get("/bugs")
def board(request: Request) -> Response:
    """One table of bugs, searched, filtered by state and component, sorted and paged on the
    server (`?q=&state=&owner=&sort=&page=`); the states with bugs in them, with their counts."""
    desk, _ = _owner(request)
    shown = listed(request, desk.bugs(), BOARD)
    # Only the bugs shown are summarised and rendered: at 1,000 bugs, rendering all was most of the time.
    return page(request, "board.html", l=shown, bugs=[{**b.summary(), "activity": _activity(b)} for b in shown.items])


@router.get("/bugs/{bug_id}")
def bug_page(request: Request, bug_id: str) -> Response:
    desk, owner = _owner(request)
    bug = desk.bug(bug_id)  # read once: the dossier and the diff below are made from it
    desk.dossier(owner, bug_id, bug)  # what engineering may read: refused here to anyone else
    change: dict[str, Any] | None = None
    if bug.change is not None:
        tier, paths = desk.tier(bug)
        missing = desk.merge_check(bug, bug.change["head"], owner.name, "User")
        change = {**bug.change, "tier": TIERS[tier], "paths": paths, "missing": missing,
                  "diff": diff_files(desk.change_diff(owner, bug_id, bug)),
                  "approvals": [a for a in bug.approvals if a["head"] == bug.change["head"]]}
    files = verified(desk.settings, [Path(p) for p in bug.evidence])
    # The bug's room, when this server holds it and the person may read it (the desk names it after the bug).
    room = next((r for r in web_state(request).rooms.list_rooms(signed_in(request)) if r["name"] == room_name(bug_id)),
                None)
    # Each report's dossier (redacted by the airlock) field by field, each field's text as Markdown.
    reports = [{"fields": r["dossier"].get("fields", {}), "rendered": r["rendered"]} for r in bug.reports.values()]
    return page(request, "bug.html", bug=bug.summary(), reports=reports, reproduction=bug.reproduction,
                files=files, notes=desk.notes(bug_id), change=change, owner=owner,
                open_disputes={d["index"]: dispute_digest(bug_id, d) for d in bug.open_disputes()},
                split=split_asked(request), room=room)


@router.get("/bugs/{bug_id}/evidence/{name:path}")
def bug_evidence(request: Request, bug_id: str, name: str) -> Response:
    """One of the bug's own evidence files, from the desk's evidence folder (the desk may keep its
    home apart from the server's: /evidence/raw serves the server's home only)."""
    desk, _ = _owner(request)
    root = desk.settings.evidence_dir
    found = confined(root, name)
    listed = {Path(p).resolve() for p in desk.bug(bug_id).evidence}
    if found is None or found not in listed:  # the bug's files only, never another path in the folder
        raise NotFoundError(f"no evidence file {name!r} on {bug_id}", "download files from the bug's page")
    return evidence_download(found)


@router.post("/bugs/{bug_id}/approve")
async def approve(request: Request, bug_id: str) -> Response:
    form = await checked_form(request)
    desk, owner = _owner(request)
    execute(desk, owner, ApproveChange(bug_id, form.get("head", ""), form.get("note", "")))
    return RedirectResponse(f"/bugs/{bug_id}#change", status_code=303)


@router.post("/bugs/{bug_id}/merge")
async def merge(request: Request, bug_id: str) -> Response:
    form = await checked_form(request)
    desk, owner = _owner(request)
    execute(desk, owner, MergeChange(bug_id, form.get("head", "")))  # the head the page showed, and no other
    # The desk records a merge only from the forge's signed webhook: take the local forge's now.
    desk.deliver_forge_webhooks()
    return RedirectResponse(f"/bugs/{bug_id}", status_code=303)


@router.post("/bugs/{bug_id}/disputes/{index}/accept")
async def accept_dispute(request: Request, bug_id: str, index: str) -> Response:
    """Agree with a late reporter's "no" (the desk reopens the bug for a new reproduction)."""
    form = await checked_form(request)
    desk, owner = _owner(request)
    if not index.isdigit() or len(index) > 6 or form.get("bug") != bug_id:
        raise UsageError("the form does not name one of this bug's disputes", "use the buttons on the bug page")
    # The digest of the dispute the page showed: another dispute, or this one changed, is refused.
    execute(desk, owner, AcceptDispute(bug_id, int(index), form.get("shown"), via="web"))
    return RedirectResponse(f"/bugs/{bug_id}#disputes", status_code=303)


@router.get("/crew")
def crew_page(request: Request) -> Response:
    desk, _ = _owner(request)
    return page(request, "crew.html", crew=crew_view(desk.ledger, web_state(request).rooms,
                                                  keys=RoomsConfig.from_settings(desk.settings)))
