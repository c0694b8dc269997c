"""The home page, "Waiting for me": everything waiting for the signed-in person, newest first, each
linking to where they decide (signoff.web.inbox), and their approval cards answered in place; and
the same list as JSON for the browser's own notifications (`static/notify.js`)."""

from __future__ import annotations

from collections import Counter

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from signoff.web.inbox import answerable_cards, waiting_for
from signoff.web.render import PageRoute, page
from signoff.web.state import signed_in, web_state

router = APIRouter(route_class=PageRoute)


@router.get("/")
def home(request: Request) -> Response:
    user = signed_in(request)
    web = web_state(request)
    cards = answerable_cards(request, user)  # the cards this person may answer, not all an admin may read
    rooms = {r["room_id"]: r["name"] for r in web.rooms.list_rooms(user)}
    waiting = waiting_for(request, user)
    kinds = Counter(w.kind for w in waiting)
    return page(request, "home.html", cards=cards, room_names=rooms, waiting=waiting, kinds=kinds)


@router.get("/inbox/waiting")
def waiting_json(request: Request) -> Response:
    """What the start page lists, for the signed-in person's own browser (its notifications): the
    kind, title, link and time of each item, newest first."""
    user = signed_in(request)
    items = waiting_for(request, user)
    return JSONResponse({"count": len(items), "items": [{"kind": w.kind, "title": w.title, "href": w.href,
                                                         "at": w.at} for w in items]})
