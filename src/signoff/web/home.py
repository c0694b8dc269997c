"""The home page: what is waiting for me (approval cards, reviews, bugs that need a person)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from signoff.web.desk_access import desk_of, desk_owner
from signoff.web.render import PageRoute, page
from signoff.web.state import signed_in, web_state

router = APIRouter(route_class=PageRoute)


@router.get("/")
def home(request: Request) -> Response:
    user = signed_in(request)
    web = web_state(request)
    cards = web.rooms.pending_approvals(user)
    rooms = {r["room_id"]: r["name"] for r in web.rooms.list_rooms(user)}
    reviews: list[dict[str, object]] = []
    needs_human: list[dict[str, object]] = []
    desk = desk_of(request)
    owner = desk_owner(desk, user) if desk is not None else None
    if desk is not None and owner is not None:
        for bug in desk.bugs():
            if bug.state == "in_review":
                reviews.append(bug.summary())
            elif bug.state == "needs_human":
                needs_human.append(bug.summary())
    return page(request, "home.html", cards=cards, room_names=rooms, reviews=reviews, needs_human=needs_human,
                desk_owner=owner is not None)
