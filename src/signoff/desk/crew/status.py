"""Crew status, as the rooms server sees it: a role is `connected` only while one of its
connections has a stream open and its last heartbeat is under the threshold (90 s); `stale` when a
connection is left but its stream dropped or its beats stopped (a killed process); `not running`
when the registered identity has nothing behind it. The threshold and the clock are parameters, so
staleness is tested by moving a clock, never by waiting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signoff.desk.crew import Crew, drift, key_role, recorded
from signoff.desk.crew.agents import ignored
from signoff.desk.crew.commands import refusals
from signoff.kernel.clock import Clock
from signoff.kernel.errors import UsageError
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpSyncTransport, RoomsConfig, embedded_rooms
from signoff.rooms.storage.connections import ConnectionRegistry

THRESHOLD = 90.0
STATES = ("connected", "stale", "not running")


@dataclass(frozen=True)
class RoleStatus:
    role: str
    agent: str
    agent_id: str
    state: str  # one of STATES
    last_beat_seconds: float | None  # age of the newest heartbeat; None when not running
    stream_open: bool

    def as_json(self) -> dict[str, Any]:
        return {"role": self.role, "agent": self.agent, "agent_id": self.agent_id, "state": self.state,
                "last_beat_seconds": self.last_beat_seconds, "stream_open": self.stream_open}


def crew_status(crew: Crew, connections: ConnectionRegistry, clock: Clock,
                threshold: float = THRESHOLD) -> list[RoleStatus]:
    now = clock.now()
    out = []
    for role, agent_id in crew.agents.items():
        live = connections.connections(agent_id)
        if not live:
            out.append(RoleStatus(role, crew.agent_name(role), agent_id, "not running", None, False))
            continue
        age = round(max(0.0, now - max(c.last_beat for c in live)), 1)
        stream_open = any(c.attached for c in live)
        state = "connected" if stream_open and age < threshold else "stale"
        out.append(RoleStatus(role, crew.agent_name(role), agent_id, state, age, stream_open))
    return out


def crew_view(ledger: SqlLedger, rooms: RoomService, threshold: float = THRESHOLD,
              keys: RoomsConfig | None = None) -> dict[str, Any]:
    """What `signoff desk crew`, `GET /desk/crew` and the crew page show: each role's status from
    this server's connections (`rooms`: the server's; a desk kept on a database of its own, as the
    demo's, is read on that database's embedded server), the policy drift, the refused and the ignored
    commands. A crew on an
    external server is asked there (with the crew's keys from `keys`); its policies are read at
    setup only (reading them needs the operator credential), so `drift` is None."""
    if rooms.ledger.engine.url != ledger.engine.url:
        # The crew's agents are registered where the desk's ledger is, not on the server's.
        rooms = embedded_rooms(ledger)
    crew = recorded(ledger)
    if crew is None:
        return {"set_up": False, "threshold_seconds": threshold, "roles": [], "drift": [], "refusals": [],
                "ignored": []}
    view: dict[str, Any] = {"set_up": True, "threshold_seconds": threshold, "owner": crew.owner_name,
                            "rooms": {"intake": crew.intake_room, "engineering": crew.engineering_room},
                            "refusals": refusals(ledger), "ignored": ignored(ledger)}
    if crew.server is None:
        return view | {"roles": [s.as_json() for s in crew_status(crew, rooms.connections, rooms.clock, threshold)],
                       "drift": drift(rooms.policy, crew)}
    if keys is None:
        raise UsageError(f"the crew is on {crew.server}: its status is asked there with the crew's keys",
                         "pass the rooms keys (RoomsConfig.from_settings)")
    return view | {"server": crew.server, "roles": [s.as_json() for s in remote_status(crew, keys)], "drift": None}



def remote_status(crew: Crew, keys: RoomsConfig) -> list[RoleStatus]:
    """Each role as the external server reports it (`live`: a connection whose beats arrive within
    the server's own limit); anything else is `not running` (the server does not say why)."""
    seen: dict[str, Any] = {}
    for asker, room in (("manager", crew.engineering_room), ("concierge", crew.intake_room)):
        key = keys.key(key_role(asker))
        transport = HttpSyncTransport(crew.server or "", key["agent_id"], key["api_key"],
                                      client_name="signoff-desk-crew-status")
        try:
            detail = transport.call("get_room_detail", {"room_id": room}, "")
        finally:
            transport.close()
        seen |= {str(p["id"]): p.get("status") for p in detail.get("participants", [])}
        # A Switch core names its rooms' agents only by name (`agent_statuses`); the names are the
        # server's record of who is in the room, and the crew's names are its own (`agent_name`).
        seen |= {f"name:{n}": s for n, s in (detail.get("agent_statuses") or {}).items()}
    out = []
    for role, agent_id in crew.agents.items():
        live = "live" in (seen.get(agent_id), seen.get(f"name:{crew.agent_name(role)}"))
        state = "connected" if live else "not running"
        out.append(RoleStatus(role, crew.agent_name(role), agent_id, state, None, live))
    return out
