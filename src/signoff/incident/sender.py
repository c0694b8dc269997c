"""Posting on behalf of an organisation: every post passes its guard in the sender, before it leaves.

The post itself goes to a real room through the rooms client (`WorkspaceRooms.post`), as the
organisation's agent; what comes back is the message as the server stored it.
"""

from __future__ import annotations

from dataclasses import dataclass

from signoff.incident.disclosure import Disclosure
from signoff.incident.guard import Guard, GuardVerdict, Post
from signoff.incident.workspace_rooms import WorkspaceRooms
from signoff.kernel.errors import RefusedError
from signoff.rooms.domain.decisions import Message


@dataclass
class GuardedSender:
    """An organisation's agent's only way out: guard first, then the room."""

    org: str
    agent: str
    guard: Guard
    rooms: WorkspaceRooms

    def post(self, room: str, text: str, disclosure: Disclosure | None = None) -> Message:
        verdict: GuardVerdict = self.guard.check(Post(room, text, disclosure))
        if not verdict.allowed:
            raise RefusedError(f"{self.org}'s guard blocked the post to {room}: {', '.join(verdict.rules)}",
                               "remove what the rules name, or get the disclosure approved and post it unchanged")
        return self.rooms.post(self.agent, room, text)
