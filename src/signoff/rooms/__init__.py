"""Rooms: the coordination layer for agents and people, wire-compatible with the Switch agent
protocol (revision 1). Identities and tokens, rooms, membership, addressing policies enforced on
the server, messages with server-assigned ids (receipts), single-writer documents, roles,
approval cards and a durable event stream that resumes from a cursor.

In-process: `RoomService(ledger)`. Over HTTP: `create_app(ledger, settings, routers=[...])`.
Client: `signoff.rooms.client.RoomsClient` with an HTTP or in-process transport.
"""

from signoff.rooms.domain.model import Approval, ApprovalOption, Principal, Room
from signoff.rooms.domain.policy import OPEN, OWNER_AND_OWNER_AGENTS, OWNER_ONLY
from signoff.rooms.domain.receipts import Receipt, handoff_matches
from signoff.rooms.domain.service import RoomService

__all__ = [
    "OPEN",
    "OWNER_AND_OWNER_AGENTS",
    "OWNER_ONLY",
    "Approval",
    "ApprovalOption",
    "Principal",
    "Receipt",
    "Room",
    "RoomService",
    "handoff_matches",
]
