"""The embedded rooms server of a process: the room service on the workflow's own ledger.

One per ledger and process (two services on one ledger work, but each treats the other's writes
as another process's and drops its caches), so the faces a command builds on it share it. Only
the last ledger's service is kept: a process works on one ledger, and a service holds its ledger.
"""

from __future__ import annotations

from signoff.ledger import SqlLedger
from signoff.rooms.domain.service import RoomService

_last: list[RoomService] = []


def embedded_rooms(ledger: SqlLedger) -> RoomService:
    if _last and _last[0].ledger is ledger:
        return _last[0]
    _last[:] = [RoomService(ledger)]
    return _last[0]
