"""A room for notes' agents: alice (who owns them and decides), mallory (a member bound to nobody
who may decide), the scout, writer and editor with policies that admit only the step before them
(and their owner), and the notes listener."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signoff.rooms import OPEN, Principal, RoomService

AGENTS = ("notes-scout", "notes-writer", "notes-editor")


@dataclass
class CrewWorld:
    service: RoomService
    alice: Principal
    alice_token: str
    mallory: Principal
    mallory_token: str
    agents: dict[str, tuple[Principal, str]]  # name -> (principal, api key)
    room_id: str


def _admits(room_id: str, users: list[str], agents: list[str]) -> dict[str, Any]:
    return {"rules": [{"rooms": [room_id], "room_groups": "*", "users": users, "agents": agents,
                       "owner": True, "owner_agents": False}]}


def make_crew(service: RoomService) -> CrewWorld:
    service.init()
    alice, alice_token = service.create_user("alice", "Alice")
    mallory, mallory_token = service.create_user("mallory", "Mallory")
    agents = {name: service.create_agent(alice, name, f"release notes: {name}") for name in AGENTS}
    agents["notes"] = service.create_agent(alice, "notes", "takes release-note decisions", policy=OPEN)
    room = service.create_room(alice, "release-0.2", agent_names=[*AGENTS, "notes"], user_names=["alice", "mallory"])
    ids = {name: p.id for name, (p, _) in agents.items()}
    service.set_policy(alice, ids["notes-scout"], _admits(room.id, [alice.id, mallory.id], []))
    service.set_policy(alice, ids["notes-writer"], _admits(room.id, [], [ids["notes-scout"], ids["notes-editor"]]))
    service.set_policy(alice, ids["notes-editor"], _admits(room.id, [], [ids["notes-writer"]]))
    return CrewWorld(service, alice, alice_token, mallory, mallory_token, agents, room.id)
