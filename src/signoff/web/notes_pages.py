"""Release notes review: the runs under `<home>/notes`, and a run's page. For each sentence
(S1..Sn) the page shows its cited facts (expanding to the commit hash, path or count), the
verifier's codes on its current text, the editor's OVERCLAIM marks; approve, reject, edit, approve
all and ship; the notes as they would render now, with their [F#] tags, graded beside the one-shot
baseline (`baseline.md` in the run folder, when there is one).

Every decision goes through the notes service (`signoff.notes.NotesService`), as on the command
line and in rooms: last decision wins, an edit is verified again, a sentence that does not verify
cannot be approved, ship is refused until every kept sentence is approved and verifies. Who may
decide is the service's rule (`[notes] deciders`, room user names), the same for every face; the
person recorded is the one signed in.

Every form carries `shown`, the digest of exactly what the page rendered for it (the sentence's
text and citations; every sentence for "approve all"; every sentence and its status for "ship"),
and `decide` refuses a decision whose digest is not that of the run as it is when it is written:
a page loaded before someone else's edit cannot approve that edit.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse
from markupsafe import Markup

from signoff.kernel.errors import NotFoundError, RefusedError, SignoffError, UsageError
from signoff.kernel.wire import status_of
from signoff.notes import (
    FACTS_FILE,
    MAX_TEXT,
    REVIEW_FILE,
    SNAPSHOT_FILE,
    FactsFile,
    NotesService,
    SentenceState,
    Status,
    case_of,
    grade,
    grade_run_text,
    load_review,
    preview,
    run_repository,
)
from signoff.rooms import Principal
from signoff.web.evidence_pages import home_settings
from signoff.web.listing import Lister, Sort, listed
from signoff.web.live_case import case_stream
from signoff.web.markdown import markdown
from signoff.web.render import PageRoute, page
from signoff.web.state import checked_form, signed_in, web_state

router = APIRouter(route_class=PageRoute)
BASELINE_FILE = "baseline.md"
MAX_RUNS = 200
ACTIONS = ("approve", "reject", "edit", "approve_all", "ship")


def notes_service(request: Request) -> NotesService:
    """The notes service on the server's ledger, deciders as configured for every face."""
    return NotesService.of(web_state(request).rooms.ledger, home_settings(request))


def _root(request: Request) -> Path:
    return home_settings(request).home / "notes"


def _run(request: Request, name: str) -> Path:
    """The run folder `name` names under `<home>/notes`, never outside it (404 otherwise)."""
    root = _root(request).resolve()
    found = (root / name).resolve() if name and "\\" not in name else root
    if found == root or not found.is_relative_to(root) or not (found / REVIEW_FILE).is_file():
        raise NotFoundError(f"no notes run {name!r}", "pick a run from the notes page")
    return found


def runs_listed(request: Request) -> list[dict[str, Any]]:
    root = _root(request)
    if not root.is_dir():
        return []
    found = sorted((p for p in root.glob("**/" + REVIEW_FILE) if len(p.relative_to(root).parts) <= 4),
                   key=lambda p: p.stat().st_mtime, reverse=True)[:MAX_RUNS]
    out, notes = [], notes_service(request)
    for review in found:
        state = notes.state(review.parent)
        out.append({"name": review.parent.relative_to(root).as_posix(), "shipped": state.shipped,
                    "sentences": len(state.sentences), "decisions": state.count,
                    "approved": sum(s.status == "approved" for s in state.sentences),
                    "modified": datetime.fromtimestamp(review.stat().st_mtime, UTC).isoformat()})
    return out


def _run_state(run: dict[str, Any]) -> str:
    return "shipped" if run["shipped"] else "in review"


RUNS = Lister[dict[str, Any]](
    text=lambda r: f"{r['name']} {_run_state(r)}",
    sorts={"newest": Sort("newest first", lambda r: r["modified"], reverse=True),
           "oldest": Sort("oldest first", lambda r: r["modified"]),
           "name": Sort("name", lambda r: r["name"])},
    state=_run_state, states=("in review", "shipped"))


@router.get("/notes")
def runs(request: Request) -> Response:
    signed_in(request)
    return page(request, "notes_runs.html", l=listed(request, runs_listed(request), RUNS))


ANCHOR = re.compile(r'<a id="[^"<>]*"></a>')  # the facts appendix's anchors (notes.render): not shown as text


def preview_html(notes: str) -> Markup:
    """The notes' Markdown as a page shows it (signoff.web.markdown: no raw HTML, links checked)."""
    return markdown(ANCHOR.sub("", notes), under=2)  # the preview sits under its h2


def fact_detail(f: dict[str, Any]) -> str:
    """What a fact says, in words: what its tag expands to."""
    kind = f["kind"]
    if kind == "commit":
        return f"commit {f['hash']}: {f['subject']} ({f['author']}, {f['date']})"
    if kind == "file":
        return f"file {f['path']}: +{f['added']} -{f['deleted']} lines over {f['commits']} commit(s)"
    if kind == "count":
        return f"count {f['metric']} ({f['scope']}): {f['value']}"
    return f"{f['op']} of {f['of'][0]} and {f['of'][1]}: {f['value']}"


def _overclaims(reviewed: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [j for j in (reviewed or {}).get("judgments", []) if j.get("code") == "OVERCLAIM"]


def _sentences(notes: NotesService, folder: Path, status: Status) -> list[dict[str, Any]]:
    state = status.state
    review = load_review(folder)
    reviewed = {r["id"]: r for r in review["sentences"]}
    first_round = {r["id"]: r for r in review["rounds"][0]["sentences"]}
    # The editor's marks are a model's opinion (advisory), or a scripted editor's (simulated).
    editor = review["rounds"][-1].get("editor") or {}
    marks_kind = "simulated" if editor.get("kind") == "simulated" else "advisory"
    facts = FactsFile(folder / FACTS_FILE, wanted={f for s in state.sentences for f in s.facts}).by_id
    errors = notes.errors(folder, state.sentences)
    out = []
    for s in state.sentences:
        first = first_round.get(s.id) or {}
        # A sentence the editor sent back once: what it said then and the marks that sent it back.
        earlier = ({"text": first["text"], "marks": [*first.get("errors", []), *first.get("judgments", [])]}
                   if len(review["rounds"]) > 1 and first.get("status") == "rejected" else None)
        out.append({"id": s.id, "text": s.text, "status": s.status, "edited": s.edited, "by": s.by, "notes": s.notes,
                    "shown": status.shown[s.id],
                    "facts": [{"id": fid, "detail": fact_detail(facts[fid]) if fid in facts else "not in the facts"}
                              for fid in s.facts],
                    "errors": errors[s.id], "overclaims": _overclaims(reviewed.get(s.id)), "earlier": earlier,
                    "marks_kind": marks_kind})
    return out


def _grades(folder: Path, notes: str) -> dict[str, Any]:
    # with the run's repository where it has one, as `notes grade --repo` grades
    ours = grade_run_text(folder, notes, "the notes as they stand")
    baseline_file = folder / BASELINE_FILE
    baseline = grade(baseline_file, folder / SNAPSHOT_FILE, run_repository(folder)) if baseline_file.is_file() else None
    return {"ours": ours, "baseline": baseline}


def _run_page(request: Request, user: Principal, name: str, folder: Path, status: int = 200,
              refusal: SignoffError | None = None) -> Response:
    service = notes_service(request)
    now = service.status(folder)
    state = now.state
    notes = preview(folder, state)
    return page(request, "notes_run.html", status, run=name, state=state, sentences=_sentences(service, folder, now),
                preview=notes, preview_html=preview_html(notes), grades=_grades(folder, notes), blockers=now.blockers,
                may_decide=service.may_decide(user.name), deciders=service.deciders, refusal=refusal,
                max_text=MAX_TEXT, version=service.version(folder),
                shown_all=now.shown["all"], shown_ship=now.shown["ship"])


def grade_line(result: dict[str, Any]) -> str:
    c = result["claims"]
    return f"{c['supported']}/{c['total']} ({c['pct']}%)"


@router.get("/notes/live/{name:path}")
def run_live(request: Request, name: str) -> Response:
    """The preview and its grade as decisions are made (server-sent events), for the open run page."""
    signed_in(request)
    folder = _run(request, name)
    ledger = web_state(request).rooms.ledger
    service = notes_service(request)

    def update() -> dict[str, Any]:
        state = service.state(folder)
        notes = preview(folder, state)
        return {"fields": {"preview-text": notes, "decision-count": str(state.count),
                           "grade-ours": grade_line(_grades(folder, notes)["ours"])},
                "notice": f"Decisions changed ({state.count} so far; the Markdown under the preview below is "
                          "current): reload to decide on the sentences as they are now."}

    return case_stream(request, ledger, case_of(folder), update)


@router.get("/notes/runs/{name:path}")
def run_page(request: Request, name: str) -> Response:
    user = signed_in(request)
    return _run_page(request, user, name, _run(request, name))


def _command(form: dict[str, str]) -> str:
    """The decision the form asks for, naming the digest of what the page showed (`shown`)."""
    action, sid, text = form.get("action", ""), form.get("sentence", ""), form.get("text", "")
    if action not in ACTIONS:
        raise UsageError(f"not a decision: {action!r}", "use the buttons on the run page")
    shown = form.get("shown", "").strip()
    if not shown or any(c.isspace() or c == "#" for c in shown):
        raise UsageError("the form does not say which text it was shown", "reload the run page and decide there")
    if action == "approve_all":
        return f"approve all #{shown}"
    if action == "ship":
        return f"ship #{shown}"
    return f"edit {sid} #{shown} {text.strip()}" if action == "edit" else f"{action} {sid} #{shown}"


@router.post("/notes/decide/{name:path}")
async def decide_page(request: Request, name: str) -> Response:
    form = await checked_form(request)
    user = signed_in(request)
    folder = _run(request, name)
    service = notes_service(request)
    if not service.may_decide(user.name):  # the service refuses them too; refused before the form is read
        raise RefusedError(f"{user.name} may not decide on release notes",
                           f"an admin adds them to [notes] deciders: \"{user.name}\"")
    try:
        service.decide(folder, _command(form), user.name, "web")
    except SignoffError as exc:
        # The refusal is shown on the run page itself, beside the sentences it is about.
        return _run_page(request, user, name, folder, status_of(exc), exc)
    anchor = form.get("sentence", "") if form.get("action") in ("approve", "reject", "edit") else "preview"
    return RedirectResponse(f"/notes/runs/{name}#{anchor or 'preview'}", status_code=303)


@router.get("/notes/check/{name:path}")
def check_edit(request: Request, name: str, sentence: str = "", text: str = "") -> Response:
    """The verifier on text being typed, before it is saved: its codes and the line it would render
    as. Reads only; the saved edit is verified again by `decide`."""
    signed_in(request)
    folder = _run(request, name)
    service = notes_service(request)
    state = service.state(folder)
    current = next((s for s in state.sentences if s.id == sentence), None)
    if current is None:
        raise NotFoundError(f"no sentence {sentence!r} in this run", "check the ids on the run page")
    text = text.strip()
    if not text or len(text) > MAX_TEXT or "\n" in text or "\r" in text:
        raise UsageError(f"a sentence is one line of 1 to {MAX_TEXT} characters", "shorten the text")
    errors = service.errors(folder, [SentenceState(current.id, text, current.facts)])[current.id]
    line = f"- {text} " + "".join(f"[{f}]" for f in current.facts)
    return JSONResponse({"sentence": current.id, "ok": not errors, "line": line,
                         "errors": [{"code": e["code"], "token": e["token"]} for e in errors]})
