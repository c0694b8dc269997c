"""Evidence and the ledger's chain in the browser: every evidence file with its kind badge and its
`evidence verify` result (signers, problem, notes) and the raw envelope to download; the chain's
`ledger verify` status with its signed checkpoints."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response

# Predicate checks live with their workflows; importing them registers the checks, as
# `signoff evidence verify` does.
import signoff.incident  # the incident evidence check (registered by the package)
import signoff.notes  # the notes evidence check (registered by the facade)
import signoff.repair.evidence  # noqa: F401
from signoff.kernel.errors import NotFoundError, UnavailableError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import Event, SqlLedger
from signoff.ledger.browse import event_page, event_types
from signoff.ledger.checkpoints import stored
from signoff.repair import REPAIR_CASE
from signoff.rooms import Principal
from signoff.trust import KeyStore, TrustPolicy, verify_file
from signoff.web.desk_access import desk_of, desk_owner
from signoff.web.listing import Lister, Listing, Sort, listed, page_number, search_text
from signoff.web.render import PageRoute, page
from signoff.web.state import signed_in, web_state

router = APIRouter(route_class=PageRoute)
SUFFIX = ".intoto.json"
TIMELINE = 200  # files the evidence page verifies and shows, newest first


def home_settings(request: Request) -> Settings:
    """The settings of the home this server serves (503 without one)."""
    settings = web_state(request).settings
    if settings is None:
        raise UnavailableError("this server has no signoff home", "run `signoff serve` on a home")
    return settings


def confined(root: Path, name: str) -> Path | None:
    """The evidence file `name` names under `root`, or None when it would lead outside (an absolute
    name, `..`, a link out) or is not an evidence file."""
    if not name.endswith(SUFFIX) or "\\" in name:
        return None
    base = root.resolve()
    found = (base / name).resolve()
    if not found.is_relative_to(base) or not found.is_file():
        return None
    return found


def verified(settings: Settings, paths: list[Path]) -> list[dict[str, Any]]:
    """`evidence verify` of each file, as the page shows it (names relative to the evidence folder)."""
    if not paths:
        return []  # no keys to read from disk (a bug page without evidence yet)
    trusted = KeyStore(settings.keys_dir).trusted()
    policy = TrustPolicy.from_config(settings.section("trust", "signers"))
    root = settings.evidence_dir.resolve()
    out = []
    for path in paths:
        name = str(path.resolve().relative_to(root)) if path.resolve().is_relative_to(root) else None
        if name is None or confined(root, name) is None:
            out.append({"name": str(path), "ok": False, "problem": "not a file in the evidence folder, not read",
                        "kind": None, "signers": [], "predicate_type": None, "notes": [], "download": False})
            continue
        report = verify_file(path, trusted, policy).as_json()
        out.append({**report, "name": name, "download": True})
    return out


def evidence_files(settings: Settings) -> list[Path]:
    root = settings.evidence_dir
    if not root.is_dir():
        return []
    files = [p for p in root.rglob(f"*{SUFFIX}") if p.is_file()]
    return sorted(files, key=lambda p: (p.stat().st_mtime, str(p)), reverse=True)[:TIMELINE]


EVIDENCE = Lister[dict[str, Any]](
    text=lambda f: " ".join([f["name"], f["kind"] or "unlabelled", f["predicate_type"] or "", *f["signers"],
                             f.get("problem") or "", "verified" if f["ok"] else "does not verify"]),
    sorts={"newest": Sort("newest first", lambda f: 0),  # evidence_files lists them newest first; the sort is stable
           "name": Sort("name", lambda f: f["name"])},
    state=lambda f: f["kind"] or "unlabelled", owner=lambda f: ", ".join(f["signers"]) or "nobody",
    state_label="kind", owner_label="signed by")


def made_for(request: Request, user: Principal) -> dict[Path, list[tuple[str, str]]]:
    """What each evidence file was made for, as (name, page) links the person may open: the repair
    cases of their rooms (from the events that name a file) and, for a desk owner, the bugs."""
    web = web_state(request)
    found: dict[Path, list[tuple[str, str]]] = {}
    rooms = {r["room_id"] for r in web.rooms.list_rooms(user)}
    case_room: dict[str, str] = {}
    named: list[tuple[str, str]] = []
    for event in web.rooms.ledger.stream(prefix=REPAIR_CASE.prefix):
        case = event.case_id.removeprefix(REPAIR_CASE.prefix)
        if event.type == "repair.reported":
            case_room[case] = str(event.payload.get("room_id"))
        if event.payload.get("evidence"):
            named.append((case, str(event.payload["evidence"])))
    for case, path in named:
        if case_room.get(case) in rooms:
            found.setdefault(Path(path).resolve(), []).append((f"repair case {case}", f"/repair/{case}"))
    desk = desk_of(request)
    if desk is not None and desk_owner(desk, user) is not None:
        for bug in desk.bugs():
            for path in bug.evidence:
                found.setdefault(Path(path).resolve(), []).append((f"bug {bug.bug_id}", f"/bugs/{bug.bug_id}"))
    return {path: list(dict.fromkeys(links)) for path, links in found.items()}


@router.get("/evidence")
def evidence(request: Request) -> Response:
    user = signed_in(request)
    settings = home_settings(request)
    shown = listed(request, verified(settings, evidence_files(settings)), EVIDENCE)
    links = made_for(request, user)
    root = settings.evidence_dir.resolve()
    for f in shown.items:
        f["made_for"] = links.get((root / f["name"]).resolve(), []) if f["download"] else []
    return page(request, "evidence.html", l=shown, files=shown.items, limit=TIMELINE)


@router.get("/evidence/raw/{name:path}")
def raw(request: Request, name: str) -> Response:
    signed_in(request)
    found = confined(home_settings(request).evidence_dir, name)
    if found is None:
        raise NotFoundError(f"no evidence file {name!r}", "download files from the evidence page")
    return evidence_download(found)


def evidence_download(found: Path) -> Response:
    """An evidence file as a download (a file `confined` found: never a name from the request)."""
    return Response(found.read_bytes(), media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{found.name}"'})


EVENT_SORTS = [("newest", "newest first"), ("oldest", "oldest first")]
EVENTS_PER_PAGE = 50


def ledger_events(request: Request, ledger: SqlLedger) -> Listing[Event]:
    """One page of the chain's events, searched (case, type, payload) and filtered by type in the
    database, as a Listing for the page's search form and pager."""
    text = search_text(request)
    types = event_types(ledger)
    type_ = request.query_params.get("state") or None
    if type_ is not None and type_ not in types:
        raise UsageError("the event type asked for is not in this ledger", "pick one from the form's list")
    sort = request.query_params.get("sort") or "newest"
    if sort not in dict(EVENT_SORTS):
        raise UsageError("the order asked for is not one this list offers", "pick one from the form's list")
    number = page_number(request.query_params.get("page"))
    found = event_page(ledger, text.split(), type_, sort == "newest", (number - 1) * EVENTS_PER_PAGE,
                       EVENTS_PER_PAGE)
    return Listing(path=request.url.path, items=found.events, total=sum(types.values()), matched=found.matched,
                   page=number, per_page=EVENTS_PER_PAGE, text=text, state=type_, owner=None, sort=sort,
                   sorts=EVENT_SORTS, states=sorted(types.items()), state_label="event type")


@router.get("/ledger")
def ledger(request: Request) -> Response:
    signed_in(request)
    settings = home_settings(request)
    web = web_state(request)
    listing = ledger_events(request, web.rooms.ledger)  # a bad query is refused before the chain is verified
    report = web.chain.verify(KeyStore(settings.keys_dir).trusted())
    reread = web.chain.reread()
    age = None if reread.at is None else max(0, round(time.time() - reread.at))
    return page(request, "ledger.html", report=report, reread=reread, reread_age=age,
                checkpoints=list(reversed(stored(web.rooms.ledger.engine)))[:50], l=listing,
                payload_text=lambda p: json.dumps(p, indent=1, sort_keys=True, ensure_ascii=False))
