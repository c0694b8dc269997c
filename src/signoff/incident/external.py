"""The incident's rooms on an external server (`[rooms] url`, e.g. `signoff serve` elsewhere)
instead of a room server of the run's own.

Everything goes through the server's public faces: people through the operator adapter
(`operator_for`: `create_user`), agents registered with a registration key the operator mints
(`register_agent`), rooms made by one of the run's agents (`create_room`, owned by the operator,
with its members and roles), each private room linked to the shared one where the server has
room links (`link_rooms`, by the same agent), policies set by the operator (`set_policy`). The run
never opens the server's database; its own ledger (cursors, the notary's salts, the outbox) stays in
the run folder.
The people post through the user endpoints, so the server must have them: a Switch core has no user
API (its people arrive through bridges) and is refused.

Every name it makes carries the run's suffix (`.r<6 hex>`), so that one server hosts any number of
runs: the run keeps its own names (priya, mediator, ...) and addresses through `RunInfo.server_name`.
"""

from __future__ import annotations

import uuid
from typing import Any

from signoff.incident.stack import Provisioner
from signoff.kernel.errors import UsageError
from signoff.rooms.client import ServerSetup


class ServerProvisioner(Provisioner):
    def __init__(self, url: str, operator_credential: str, secrets: dict[str, str]) -> None:
        self.server = ServerSetup(url, operator_credential, label="signoff incident",
                                  client_name="signoff-incident-provision")
        self.url = self.server.base
        if self.server.kind != "signoff":
            self.server.close()
            raise UsageError("the incident's people post through the rooms user API, which a Switch core "
                             "does not have (its people arrive through bridges)",
                             "run the incident on signoff's own server (`signoff serve`)")
        self.secrets = secrets
        # After a dot: the egress guard reads 20 or more characters of [A-Za-z0-9_-] with digits
        # as a token, and a dot ends such a word (a fix card id with a dashed suffix tripped it).
        self.suffix = f".r{uuid.uuid4().hex[:6]}"

    def catalogue(self) -> dict[str, Any]:
        if self.server.maker is None:
            raise UsageError("no agent registered yet", "create the agents before the rooms")
        return self.server.maker.operations()

    def create_user(self, name: str, display_name: str) -> tuple[str, str]:
        created = self.server.operator.create_user(name + self.suffix)
        return str(created["id"]), str(created["token"])

    def create_agent(self, name: str, description: str) -> tuple[str, str]:
        registered = self.server.register(name + self.suffix, description)
        return registered.agent_id, registered.api_key

    def create_room(self, name: str, agent_names: list[str], user_names: list[str],
                    roles: list[dict[str, Any]]) -> str:
        room = self.server.call("create_room", {
            "name": name + self.suffix, "description": f"incident room {name}",
            "agent_names": [a + self.suffix for a in agent_names],
            "user_names": [u + self.suffix for u in user_names], "roles": roles})
        return str(room["id"])

    def set_policy(self, agent_id: str, rules: list[dict[str, Any]]) -> None:
        self.server.operator.set_policy(agent_id, {"rules": rules})

    def link_rooms(self, source_room_id: str, target_room_id: str, label: str) -> None:
        self.server.call("link_rooms", {"source_room_id": source_room_id, "target_room_id": target_room_id,
                                        "label": label})

    def close(self) -> None:
        self.server.close()
