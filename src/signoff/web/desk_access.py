"""The desk as the pages reach it: the one `Desk` of the app, and who among the signed-in people
is a desk owner.

A person signed in to the pages acts as a desk owner only when a human (not shared) owner
credential was issued under their room user name (`signoff desk credential owner <name>`) and is
not revoked (`signoff desk revoke owner <name>`): the admin who creates room users and desk
credentials binds the two, never a name typed in a page.
"""

from __future__ import annotations

from fastapi import Request

from signoff.desk.service import Desk, DeskCaller, open_desk
from signoff.rooms import Principal
from signoff.web.state import web_state


def desk_of(request: Request) -> Desk | None:
    """The app's desk (shared with the desk's API routes), or None when the app has no settings."""
    desk: Desk | None = getattr(request.app.state, "desk", None)
    if desk is None:
        web = web_state(request)
        if web.settings is None:
            return None
        desk = open_desk(web.settings, web.rooms.ledger)
        request.app.state.desk = desk
    return desk


def desk_owner(desk: Desk, user: Principal) -> DeskCaller | None:
    """The owner `user` is at the desk, if a live human owner credential carries their name (read
    on every request: a revoked credential stops the pages at the next click)."""
    return desk.credentials.human_owner(user.name)
