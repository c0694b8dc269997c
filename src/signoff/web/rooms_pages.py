"""Rooms in the browser: my rooms, a room's messages (live over SSE), posting and addressing an
agent, the room's members, roles, policies and documents (read-only), and approval cards answered
in place with a reason. Every rule is the room service's: a page only calls it."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import AsyncIterator
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse, StreamingResponse
from markupsafe import Markup, escape

from signoff.desk.service import room_name
from signoff.kernel.errors import ConflictError, RefusedError, SignoffError, UsageError
from signoff.rooms import Approval, Principal, RoomService
from signoff.rooms.domain.approvals import answer_note
from signoff.web.listing import search_text
from signoff.web.message_body import body_html, read_body
from signoff.web.render import PageRoute, page, templates, when
from signoff.web.repair_pages import cases_in_room
from signoff.web.state import checked_form, kept_notice, signed_in, still_signed_in, web_state, with_notice

router = APIRouter(route_class=PageRoute)
HISTORY = 200  # messages a room page shows; "Older messages" pages back (?before=<sequence>)
KINDS = {"user": "person", "agent": "agent"}
SEARCH_PAGE = 50  # matches a room search page shows; "Older matches" pages back (?before=<sequence>)
BUG_ROOM = room_name("")  # the desk names each bug's room after the bug


def sender_kind(sender: str) -> str:
    """person, agent or system, from the server-assigned sender id (never from a name)."""
    return KINDS.get(sender.split(":", 1)[0], "system")


class Shown(NamedTuple):
    """A message as the room page and its live stream show it (the sender's kind from the
    server-assigned sender id)."""

    id: str
    sender: str
    sender_name: str
    kind: str
    body: str
    timestamp: int


class Thread(NamedTuple):
    root_id: str
    html: Markup  # the thread's item up to its reply form (thread_html)


_RENDERED: dict[tuple[Any, ...], Markup] = {}  # threads as shown (thread_html)
_RENDERED_MAX = 4096


def message_html(message: dict[str, Any]) -> Markup:
    """A message's list item, every field escaped: the sender by name (the server id, which the
    members list shows, as its tooltip), the time, and the body as body_html reads it."""
    m = _shown(message)
    return Markup("").join([
        Markup('<li class="message kind-'), m.kind, Markup('" id="m-'), m.id,
        Markup('">\n<p class="from"><span class="badge kind">'), m.kind, Markup('</span> <strong title="'),
        m.sender, Markup('">'), m.sender_name, Markup('</strong> · '),
        when(m.timestamp / 1000, seconds=True),  # the rooms keep milliseconds
        Markup("</p>\n"), body_html(m.body), Markup("</li>\n")])


_OLDER = '<li class="meta">(the start of this thread is older)</li>\n'


def thread_html(thread: dict[str, Any], replying: bool) -> Markup:
    """A thread of read_context as the room page shows it, up to where its reply form goes (the
    page puts the one reply form in the thread it was asked for, and a link to it in the others).
    Built as a string, not in the template (a template loop over 200 threads and their messages
    was most of the page), and kept: messages never change once posted, and the key holds every
    field shown of every message, so a thread is rendered again only when it has grown."""
    root = thread["root"]
    shown = [root] if "sender" in root else []
    messages = shown + thread["replies"]
    key = (root["id"], replying, bool(shown),
           *[(m["id"], m["sender"], m["sender_name"], m["body"], m["timestamp"]) for m in messages])
    html = _RENDERED.get(key)
    if html is None:
        rid = escape(root["id"])
        items = "".join([message_html(m) for m in messages])
        link = "" if replying else (f'<p class="reply"><a href="?reply={escape(quote(root["id"], safe=""))}#reply">'
                                    "Reply in thread</a></p>\n")
        html = Markup(  # noqa: S704 -- every value in it is escaped: rid, the link's id, message_html's fields
            f'<li class="thread" id="t-{rid}" data-root="{rid}">\n<ol class="messages">\n'
            f'{"" if shown else _OLDER}{items}</ol>\n{link}')
        if len(_RENDERED) >= _RENDERED_MAX:
            _RENDERED.clear()
        _RENDERED[key] = html
    return html


def _shown(message: dict[str, Any]) -> Shown:
    return Shown(message["id"], message["sender"], message["sender_name"], sender_kind(message["sender"]),
                 message["body"], message["timestamp"])


def _sequence(raw: str | None) -> int | None:
    """`?before=` of an older page: a room sequence number (not echoed when it is not one)."""
    if raw is None:
        return None
    if not raw.isdigit() or len(raw) > 18:
        raise UsageError("the page asked for is not a position in the room", "use the room's \"Older messages\" link")
    return int(raw)


def _cards_in(rooms: RoomService, user: Principal, room_id: str | None) -> list[Approval]:
    return [c for c in rooms.pending_approvals(user) if room_id is None or c.room_id == room_id]


@router.get("/rooms")
def my_rooms(request: Request) -> Response:
    user = signed_in(request)
    return page(request, "rooms.html", rooms=web_state(request).rooms.list_rooms(user))


@router.get("/rooms/{room_id}")
def room_page(request: Request, room_id: str) -> Response:
    user = signed_in(request)
    rooms = web_state(request).rooms
    before = _sequence(request.query_params.get("before"))
    with rooms.store.one_freshness_check():  # the page's reads are one request's: one check for all of them
        cursor = rooms.head()  # read before the messages: the live stream resumes from here, missing none
        detail = rooms.room_detail(user, room_id)
        context = rooms.read_context(user, room_id, limit=HISTORY, before_sequence=before)
        agents = [p for p in detail["participants"] if p["type"] == "agent"]
        policies = rooms.policies(a["id"] for a in agents)  # from the rooms cache: no query
        cards = _cards_in(rooms, user, room_id)
    reply = request.query_params.get("reply")
    name = str(detail["name"])
    bug = name.removeprefix(BUG_ROOM) if name.startswith(BUG_ROOM) else None  # a desk bug's room links its bug
    threads = [Thread(t["root"]["id"], thread_html(t, replying=t["root"]["id"] == reply)) for t in context["threads"]]
    notice = {"sent": None, "statuses": [], **(kept_notice(request) or {})}  # a post's notice, or an answer's
    return page(request, "room.html", room=detail, threads=threads, truncated=context["truncated"], agents=agents,
                older=context["oldest_sequence"] if context["truncated"] else None, before=before,
                policies={k: json.dumps(v, indent=2, sort_keys=True) if v else None for k, v in policies.items()},
                documents=detail["documents"], cards=cards, cursor=cursor,
                notice=notice, reply=reply, cases=cases_in_room(request, room_id), bug=bug)


class Found(NamedTuple):
    """A message a room search matched, and the room page (and anchor) that shows it."""

    html: Markup
    place: str


def _words(request: Request) -> list[str]:
    """`?q=` as the words a search needs every one of (listing's search text: refused, not
    echoed, when too long; control characters, which no message holds, refused too)."""
    text = search_text(request)
    if any(unicodedata.category(c) == "Cc" for c in text):
        raise UsageError("a search cannot contain control characters", "search for words of the messages")
    return text.split()


@router.get("/rooms/{room_id}/search")
def search(request: Request, room_id: str) -> Response:
    """The room's messages holding every word of `?q=` in their text or sender's name, newest
    first, a page at a time; each links to the room page whose history shows it (the page that
    ends with it, `?before=<its sequence + 1>`, at its anchor)."""
    user = signed_in(request)
    rooms = web_state(request).rooms
    room = rooms.require_read(user, room_id)
    words = _words(request)
    before = _sequence(request.query_params.get("before"))
    result = rooms.search_messages(user, room_id, words, limit=SEARCH_PAGE, before_sequence=before) \
        if words else {"messages": [], "oldest_sequence": None}
    found = [Found(message_html({**m, "id": m["message_id"]}),
                   f"/rooms/{quote(room_id, safe='')}?before={m['sequence'] + 1}#m-{quote(m['message_id'], safe='$')}")
             for m in result["messages"]]
    older = result["oldest_sequence"]
    q = " ".join(words)
    return page(request, "room_search.html", room=room, q=q, found=found, before=before,
                older=f"?{urlencode({'q': q, 'before': older})}" if older is not None else None,
                newest=f"?{urlencode({'q': q})}")


@router.post("/rooms/{room_id}/messages")
async def post(request: Request, room_id: str) -> Response:
    form = await checked_form(request)
    user = signed_in(request)
    target = form.get("target", "")
    receipt = web_state(request).rooms.post_message(user, room_id, form.get("body", ""),
                                                     form.get("thread_id") or None, [target] if target else [])
    notice = {"sent": receipt.message_id, "statuses": [list(s) for s in sorted(receipt.target_statuses.items())]}
    return RedirectResponse(with_notice(request, f"/rooms/{room_id}", notice, "messages"), status_code=303)


@router.get("/rooms/{room_id}/documents/{document_id}")
def document(request: Request, room_id: str, document_id: str) -> Response:
    user = signed_in(request)
    rooms = web_state(request).rooms
    room = rooms.require_read(user, room_id)
    found = [d for d in rooms.documents(user, room_id) if d["id"] == document_id]
    if not found:
        raise UsageError(f"room {room.name} has no document {document_id!r}", "open it from the room page")
    return page(request, "document.html", room=room, doc=rooms.load_documents(user, [document_id])[0])


@router.get("/rooms/{room_id}/live")
async def live(request: Request, room_id: str) -> Response:
    """The room's new messages as server-sent events (JSON; the page's script renders them as text)."""
    user = signed_in(request)
    rooms = web_state(request).rooms
    rooms.require_read(user, room_id)
    try:
        after = int(request.headers.get("last-event-id") or request.query_params.get("after", "0"))
    except ValueError as exc:
        raise UsageError("after must be a sequence number", "reload the room page") from exc

    allowed = still_signed_in(request, user)

    async def events() -> AsyncIterator[bytes]:
        yield b"retry: 2000\n\n"
        try:
            # The session is checked again before every batch: signed out, or the person revoked,
            # the stream ends (and the browser's reconnect meets the sign-in check).
            async for message in rooms.watch_room(user, room_id, after=after, allowed=allowed):
                shown = _shown({**message, "id": message["message_id"]})
                body = read_body(shown.body)  # the same summary the page shows; room.js adds it as text
                data = {**shown._asdict(), "thread_id": message["thread_id"], "summary": body.summary,
                        "raw": body.raw}
                yield f"id: {message['sequence']}\nevent: message\ndata: {json.dumps(data)}\n\n".encode()
        except SignoffError:  # removed from the room meanwhile: the stream ends, as for a session
            return

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post("/approvals/answer")
async def answer(request: Request) -> Response:
    """Answer a card with a reason. The service decides: a wrong responder's answer is discarded
    (and refused here), a decided card keeps its first answer."""
    form = await checked_form(request)
    user = signed_in(request)
    rooms = web_state(request).rooms
    request_id, option_id, reason = form.get("request_id", ""), form.get("option_id", ""), form.get("reason", "")
    if not reason.strip():
        raise UsageError("an answer needs a reason", "say in a sentence why you decide so")
    card = rooms.approval(user, request_id)
    outcome = rooms.answer_approval(user, request_id, option_id, form.get("digest", ""))
    if outcome["outcome"] == "discarded":
        raise RefusedError(f"{user.name} is not a responder of this card: the answer was recorded and discarded",
                           "only the people the card names may answer it")
    if outcome["outcome"] == "expired":
        raise ConflictError("this card expired before it was answered", "ask the agent for a new card")
    if outcome.get("responder") != user.sender or outcome.get("option_id") != option_id:
        raise ConflictError(f"this card was already answered ({outcome['outcome']} by {outcome['responder_name']})",
                            "the first answer decides; nothing was changed")
    label = next(o.label for o in card.options if o.id == option_id)
    try:
        rooms.post_message(user, card.room_id, answer_note(card.title, label, reason))
    except RefusedError as exc:
        raise ConflictError(f"your answer ({label}) was recorded, but the reason could not be posted: {exc.message}",
                            "ask the room's owner to add you, then post the reason in the room") from exc
    back = form.get("back", "")
    back = back if back in ("/", f"/rooms/{card.room_id}") else "/"
    answered = {"answered": {"title": card.title, "label": label, "room_id": card.room_id}}
    return RedirectResponse(with_notice(request, back, answered, "answered"), status_code=303)


def answered_card(request: Request) -> dict[str, Any] | None:
    """The card the person just answered, for the page the answer sent them back to (answered.html)."""
    found = (kept_notice(request) or {}).get("answered")
    return found if isinstance(found, dict) else None


templates.globals["answered_card"] = answered_card
