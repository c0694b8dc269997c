"""Setting a workflow up on an external rooms server (`signoff serve` elsewhere, or a Switch core)
through its public faces only: policies and a registration key through the operator adapter
(`operator_for`), agents registered with that key (`register_agent`), and rooms and room groups
created by one of those agents over the agent protocol (they belong to the key's owner). Nothing
here opens the server's database. Used by the incident (`signoff.incident.external`) and by the
desk crew (`signoff.desk.crew.remote`).
"""

from __future__ import annotations

from typing import Any

from signoff.kernel.errors import UsageError
from signoff.rooms.client._operator import Operator, operator_for
from signoff.rooms.client._register import Registered, register_agent
from signoff.rooms.client._sync import HttpSyncTransport


class ServerSetup:
    def __init__(self, url: str, operator_credential: str, *, label: str = "signoff",
                 owner_name: str | None = None, client_name: str = "signoff-provision") -> None:
        self.base = url.rstrip("/")
        self.operator: Operator = operator_for(self.base, operator_credential)
        self.label = label
        self.owner_name = owner_name
        self.client_name = client_name
        self._key: str | None = None
        self.maker: HttpSyncTransport | None = None  # the agent that creates rooms and groups

    @property
    def kind(self) -> str:
        return self.operator.kind

    def register(self, name: str, description: str) -> Registered:
        """A new agent, owned by the registration key's owner; the first one becomes the maker."""
        if self._key is None:  # minted once, only when an agent is needed
            self._key = self.operator.registration_key(self.label, self.owner_name)
        registered = register_agent(self.base, self._key, name, description)
        if self.maker is None:
            self.act_as(registered.agent_id, registered.api_key)
        return registered

    def act_as(self, agent_id: str, api_key: str) -> None:
        """Make rooms and groups as this (already registered) agent."""
        if self.maker is not None:
            self.maker.close()
        self.maker = HttpSyncTransport(self.base, agent_id, api_key, client_name=self.client_name)

    def call(self, op: str, args: dict[str, Any]) -> Any:
        """One agent-protocol operation as the maker (room-independent: no connection needed)."""
        if self.maker is None:
            raise UsageError("no agent registered yet", "create the agents before the rooms")
        return self.maker.call(op, args, "")

    def close(self) -> None:
        if self.maker is not None:
            self.maker.close()
        self.operator.close()
