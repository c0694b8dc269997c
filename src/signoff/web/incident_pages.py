"""The incident console: the runs, one run's three lanes beside its record, notary table, approvals
ledgers and guard decisions (live while it runs, replayed from its recording once finished), viewed
as both companies or as one of them; a finished run's postmortem; the preflight panel. The pages
only call `signoff.incident.service` (runs, views, postmortem, preflight); the view is cut down in
`service.console_view`, before rendering, so a frosted lane has nothing in it to leak."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from signoff.incident import service
from signoff.kernel.errors import ConflictError, RefusedError, UnavailableError, UsageError
from signoff.kernel.settings import Settings
from signoff.rooms import Principal
from signoff.trust import KeyStore
from signoff.web.listing import Lister, Sort, listed
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, signed_in, still_signed_in, web_state

router = APIRouter(route_class=PageRoute)
LIVE_POLL_SECONDS = 1.0  # how often the live stream looks whether a running incident's rooms changed


def incident_settings(request: Request) -> Settings:
    settings = web_state(request).settings
    if settings is None:
        raise UsageError("the incident console needs a signoff home", "start the pages with `signoff serve`")
    return settings


def demo_scenario(request: Request) -> service.Scenario:
    """The scripted incident this server runs for the preflight's scratch run and "try to break it":
    the entry point that starts the server hands it in (`signoff serve`: the PayCo/ShopCo demo), so
    the pages never build an incident of their own."""
    make: Callable[[], service.Scenario] | None = getattr(request.app.state, "incident_scenario", None)
    if make is None:
        raise UnavailableError("this server runs no scripted incident", "start the pages with `signoff serve`")
    return make()


def runs_base(request: Request) -> Path:
    return service.runs_base(incident_settings(request).home)


def keys_of(request: Request) -> KeyStore:
    return KeyStore(incident_settings(request).keys_dir)


def only_params(request: Request, *names: str) -> None:
    """Refuse a parameter the page does not take, rather than ignore what the sender meant by it."""
    extra = sorted(set(request.query_params) - set(names))
    if extra:
        takes = f"it takes only {', '.join(names)}" if names else "it takes none"
        # The parameter is not named back: no page text comes from the query string.
        raise UsageError("this page was given a parameter it does not take", f"leave it out: {takes}")


def one_param(request: Request, name: str) -> str | None:
    """A query parameter given at most once: a repeated one is refused, never resolved either way."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise UsageError(f"{name} is given {len(values)} times", f"give {name} once")
    return values[0] if values else None


def view_of(request: Request, user: Principal, names: dict[str, str]) -> str | None:
    """The view asked for, if this person may open it: someone bound to one company
    (`[web] incident_views`) sees the incident as that company only (`names`: the run's companies)."""
    try:
        as_org = service.check_view(one_param(request, "as"))
    except UsageError as exc:  # not named back: no page text comes from the query string
        raise UsageError("the view asked for is not one of the companies", exc.fix) from None
    if as_org is not None and as_org not in names:  # before a live stream starts, not inside it
        raise UsageError("the view asked for is not one of the companies",
                         f"view as one of: {', '.join(names)}, or as all of them")
    bound = bound_org(request, user)
    if bound is not None and as_org != bound:
        raise RefusedError(f"{user.name} may see incidents as {names.get(bound, bound)} only",
                           f"open the run with ?as={bound}")
    return as_org


def bound_org(request: Request, user: Principal) -> str | None:
    return web_state(request).config.incident_views.get(user.name)


def step_of(request: Request) -> int | None:
    raw = one_param(request, "at")
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise UsageError("at must be a step number", "move the scrubber, or open the run again") from exc


def link(run: str, as_org: str | None, **extra: Any) -> str:
    query = [("as", as_org)] if as_org else []
    query += [(k, str(v)) for k, v in extra.items() if v is not None]
    return f"/incident/runs/{run}" + (f"?{urlencode(query)}" if query else "")


INCIDENT_RUNS = Lister[dict[str, Any]](
    text=lambda r: f"{r['name']} {'recorded' if r['recorded'] else 'running'}",
    sorts={"newest": Sort("newest first", lambda r: 0),  # list_runs gives them newest first; the sort is stable
           "name": Sort("name", lambda r: r["name"])},
    state=lambda r: "recorded" if r["recorded"] else "running", states=("running", "recorded"))


@router.get("/incident")
def runs(request: Request) -> Response:
    user = signed_in(request)
    from signoff.web.incident_try import warm  # (it imports this module)

    warm(request.app)  # this page links to "try to break it": work its results out meanwhile
    return page(request, "incident_runs.html", l=listed(request, service.list_runs(runs_base(request)), INCIDENT_RUNS),
                bound=bound_org(request, user))


@router.get("/incident/runs/{run}")
def run_page(request: Request, run: str) -> Response:
    user = signed_in(request)
    only_params(request, "as", "at")
    run_dir = service.find_run(runs_base(request), run)
    as_org = view_of(request, user, service.run_orgs(run_dir))
    at = step_of(request)
    view = service.console_view(run_dir, keys_of(request), as_org, at)
    bound = bound_org(request, user)
    waiting = service.awaiting(view, bound, user.name) if bound is not None and at is None else []
    writes = service.writes_for(view, bound, user.name) if bound is not None and at is None else ()
    # A colleague bound to the organisation sees its view; who decides and writes for it is named.
    decider = view.approver(bound) if bound is not None and not view.recorded and \
        view.approver(bound) != user.name else None
    return page(request, "incident_run.html", c=view, org_names=view.names, link=link, bound=bound,
                awaiting=waiting, writes=writes, decider=decider,
                json_text=lambda d: json.dumps(d, indent=1, sort_keys=True, ensure_ascii=False))


def _acting_for(request: Request, user: Principal, run: str, org: str, verb: str) -> tuple[Path, str]:
    """The run folder, and `org` if `user` is bound to it (`[web] incident_views`): who may `verb`
    for an organisation from its page (the facade then checks they are its approver)."""
    run_dir = service.find_run(runs_base(request), run)
    names = service.run_orgs(run_dir)
    if org not in names:
        raise UsageError("not one of the run's organisations", f"{verb} for one of: {', '.join(names)}")
    if bound_org(request, user) != org:
        raise RefusedError(f"{user.name} does not {verb} for {names[org]}",
                           f"only people bound to an organisation ([web] incident_views) {verb} for it")
    return run_dir, org


DECIDE_FIELDS = {"csrf", "org", "ref", "digest", "option"}


@router.post("/incident/runs/{run}/decide")
async def decide(request: Request, run: str) -> Response:
    """A person bound to an organisation decides what waits for it, on what the page showed (the
    form carries its digest): through the incident's facade, which checks it against the run as it
    is now and posts the person's exact command in the room."""
    form = await checked_form(request)
    user = signed_in(request)
    only_params(request)
    extra = sorted(set(form) - DECIDE_FIELDS)
    if extra or any(not form.get(name) for name in DECIDE_FIELDS):
        raise UsageError("this form needs org, ref, digest and option, and nothing else",
                         "reload the run page and use its buttons")
    run_dir, org = _acting_for(request, user, run, form["org"], "decide")
    cmd = service.Decide(org, user.name, form["ref"], form["digest"], form["option"])
    await run_in_threadpool(service.decide, run_dir, keys_of(request), cmd)
    return RedirectResponse(link(run, org), status_code=303)


WRITE_FIELDS = {"csrf", "org", "kind", "text", "ref", "digest"}


@router.post("/incident/runs/{run}/write")
async def write(request: Request, run: str) -> Response:
    """A person bound to an organisation writes in their own words: its approver a report or
    request to the commander, their organisation's fix, a draft redrafted (naming the digest of
    the draft the page showed); its approver or one of its people a disclosure with no draft before
    it. Through the incident's facade, posted as that person."""
    form = await checked_form(request)
    user = signed_in(request)
    only_params(request)
    extra = sorted(set(form) - WRITE_FIELDS)
    if extra or any(not form.get(name) for name in ("org", "kind", "text")):
        raise UsageError("this form needs org, kind and text (ref and digest to redraft), and nothing else",
                         "reload the run page and use its forms")
    run_dir, org = _acting_for(request, user, run, form["org"], "write")
    cmd = service.Write(org, user.name, form["kind"], form["text"], form.get("ref", ""), form.get("digest", ""))
    await run_in_threadpool(service.write, run_dir, keys_of(request), cmd)
    return RedirectResponse(link(run, org), status_code=303)


def _frame(step: service.Step) -> dict[str, Any]:
    return {"n": step.n, "id": step.row["id"], "lane": step.lane, "who": step.who, "stamp": step.stamp,
            "text": step.row["text"], "t": step.row["t"], "control": step.control}


@router.get("/incident/runs/{run}/live")
async def live(request: Request, run: str) -> Response:
    """A running incident's new lane messages as server-sent events, cut to the view first; `done`
    once the run is recorded (the page then reloads into the replay)."""
    user = signed_in(request)
    only_params(request, "as", "since")
    run_dir = service.find_run(runs_base(request), run)
    as_org = view_of(request, user, service.run_orgs(run_dir))
    keys = keys_of(request)
    try:
        seen_upto = int(one_param(request, "since") or "0")
    except ValueError as exc:
        raise UsageError("since must be a time in milliseconds", "reload the run page") from exc

    allowed = still_signed_in(request, user)

    async def events() -> AsyncIterator[bytes]:
        yield b"retry: 2000\n\n"
        sent: set[str] = set()
        read_at: object = object()  # no token equals it: the first turn reads the view
        while await allowed():  # signed out or revoked: the stream ends before the next batch
            # Taken before the view is read: a change made meanwhile moves it again for the next turn.
            token = await run_in_threadpool(service.live_token, run_dir)
            if token is not None and token == read_at:
                await asyncio.sleep(LIVE_POLL_SECONDS)
                continue
            read_at = token
            view = await run_in_threadpool(service.console_view, run_dir, keys, as_org)
            if not await allowed():  # asked again after the read: a sign-out meanwhile sends nothing it read
                return
            for step in view.steps:
                if step.kind == "message" and step.row["t"] >= seen_upto and step.row["id"] not in sent:
                    sent.add(step.row["id"])
                    yield f"event: message\ndata: {json.dumps(_frame(step), ensure_ascii=False)}\n\n".encode()
            if view.recorded:
                yield b"event: done\ndata: {}\n\n"
                return
            await asyncio.sleep(LIVE_POLL_SECONDS)

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/incident/runs/{run}/postmortem")
def postmortem_page(request: Request, run: str) -> Response:
    """Built from what both sides approved: the same page for both companies, so it takes no view."""
    signed_in(request)
    only_params(request)
    run_dir = service.find_run(runs_base(request), run)
    report = service.postmortem(run_dir)
    return page(request, "incident_postmortem.html", run=run, pm=report, org_names=service.run_orgs(run_dir))


@router.get("/incident/runs/{run}/postmortem.md")
def postmortem_markdown(request: Request, run: str) -> Response:
    """The postmortem as Markdown, to keep or paste where the organisations write their reports."""
    signed_in(request)
    only_params(request)
    text = service.postmortem_markdown(service.find_run(runs_base(request), run))
    return Response(text, media_type="text/markdown; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{run}-postmortem.md"'})


_PREFLIGHT = threading.Lock()  # one preflight at a time: each starts a whole incident's services


@router.get("/incident/start")
def start_page(request: Request) -> Response:
    """"Start an incident": the incident set up on this machine, and the button that runs the
    checklist and, when every item passes, starts a run that waits for people."""
    signed_in(request)
    only_params(request)
    settings = incident_settings(request)
    return page(request, "incident_start.html", parties=service.set_up_here(settings.home, keys_of(request)),
                checks=None, run=None)


@router.post("/incident/start")
async def start_run(request: Request) -> Response:
    await checked_form(request)
    signed_in(request)
    only_params(request)
    settings = incident_settings(request)
    keys = keys_of(request)
    if not _PREFLIGHT.acquire(blocking=False):
        raise ConflictError("a preflight is running already", "wait for it to finish, then start again")
    try:
        checks, run = await run_in_threadpool(service.start_live, settings.home, keys, settings,
                                              demo_scenario(request))
    finally:
        _PREFLIGHT.release()
    return page(request, "incident_start.html", parties=service.set_up_here(settings.home, keys), checks=checks,
                run=run, ok=all(c.ok for c in checks))


@router.get("/incident/preflight")
def preflight_page(request: Request) -> Response:
    signed_in(request)
    return page(request, "incident_preflight.html", checks=None)


@router.post("/incident/preflight")
async def preflight_run(request: Request) -> Response:
    await checked_form(request)
    signed_in(request)
    settings = incident_settings(request)
    if not _PREFLIGHT.acquire(blocking=False):
        raise ConflictError("a preflight is running already", "wait for it to finish, then run it again")
    try:
        checks = await run_in_threadpool(service.preflight, settings.home, keys_of(request), settings,
                                         demo_scenario(request))
    finally:
        _PREFLIGHT.release()
    return page(request, "incident_preflight.html", checks=checks, ok=all(c.ok for c in checks))
