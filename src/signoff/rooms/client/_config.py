"""Where the workflows' rooms are: the embedded server (default) or a server at `[rooms] url`
(`signoff serve`, or a Switch core), with one agent key per workflow role.

    [rooms]
    url = "https://switch.example.org"       # absent: the embedded server, in process
    keys = ".signoff/rooms/agents.json"      # optional; written by `signoff rooms connect`, mode 0600

    [rooms.roles.verifier]                    # one table per workflow role that acts as an agent
    name = "repair-verifier"                  # the agent's name on that server
    description = "checks candidate fixes"

    [rooms.people]                            # people bound to workflow roles by their sender id,
    operator = "@switch-slack-alice:example.org"   # as the server writes it (opaque; never a name)

`signoff rooms connect` registers every role (with the body each server needs) and stores the
returned agent ids and keys in the keys file. `agent_transport(role)` then reaches the server as
that agent. A workflow that runs on either asks `stream_transport` / `sync_agent` (the embedded
server in process, else HTTP) and `person` (configured, else the embedded server's directory); an
agent process on the embedded server runs `housekeeping` beside its loop, the one way it sees
what other processes write.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.kernel.replace import replace_text
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.rooms.client._embedded import embedded_rooms
from signoff.rooms.client._http import HttpTransport
from signoff.rooms.client._identity import Person
from signoff.rooms.client._inprocess import InProcessTransport
from signoff.rooms.client._register import Registered, register_agent
from signoff.rooms.client._stream_sync import StreamSyncTransport
from signoff.rooms.client._sync import InProcessSyncTransport, SyncRoomsClient
from signoff.rooms.client._transport import Transport

EMBEDDED_FOLLOW_SECONDS = 0.25  # how soon a process on the embedded server sees another process's writes
NAME_RULE = "lower-case letters, digits, '.', '_' or '-', starting with a letter or digit"


@dataclass(frozen=True)
class Role:
    role: str
    name: str
    description: str


@dataclass(frozen=True)
class RoomsConfig:
    url: str | None
    keys_path: Path
    roles: dict[str, Role] = field(default_factory=dict)
    people: dict[str, str] = field(default_factory=dict)

    @property
    def embedded(self) -> bool:
        return self.url is None

    def server_line(self) -> str:
        """Which server a command acts on, as it says on standard error."""
        return f"server: {self.url} ([rooms] url)" if self.url else "server: this home's embedded rooms server"

    @classmethod
    def from_settings(cls, settings: Settings) -> RoomsConfig:
        raw = settings.section("rooms")
        url = raw.get("url")
        if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
            raise UsageError(f"[rooms] url must be an http(s) URL, not {url!r}",
                             "set url = \"https://host:port\" or remove it for the embedded server")
        keys = raw.get("keys")
        keys_path = Path(keys) if isinstance(keys, str) and keys else settings.home / "rooms" / "agents.json"
        if not keys_path.is_absolute():
            keys_path = (settings.config_path.parent if settings.config_path else Path.cwd()) / keys_path
        roles: dict[str, Role] = {}
        for role, table in (raw.get("roles") or {}).items():
            if not isinstance(table, dict):
                raise UsageError(f"[rooms.roles.{role}] must be a table", "give it name = \"...\"")
            name = table.get("name", role)
            if not isinstance(name, str) or not _valid_name(name):
                raise UsageError(f"[rooms.roles.{role}] name {name!r} is not a valid agent name", f"use {NAME_RULE}")
            roles[str(role)] = Role(str(role), name, str(table.get("description") or f"signoff {role}"))
        people = raw.get("people") or {}
        if not isinstance(people, dict) or not all(isinstance(v, str) and v for v in people.values()):
            raise UsageError("[rooms.people] maps a role to a sender id (a non-empty string)",
                             "e.g. operator = \"@switch-slack-alice:example.org\"")
        return cls(url.rstrip("/") if url else None, keys_path, roles, {str(k): str(v) for k, v in people.items()})

    # -- agent keys -------------------------------------------------------------------------------

    def keys(self) -> dict[str, dict[str, str]]:
        """The stored keys by role; {} before `signoff rooms connect`."""
        try:
            data = json.loads(self.keys_path.read_text())
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise UsageError(f"{self.keys_path} is not valid JSON", "run `signoff rooms connect` again") from exc
        if not isinstance(data, dict) or not isinstance(data.get("agents"), dict):
            raise UsageError(f"{self.keys_path} is not a rooms keys file", "run `signoff rooms connect` again")
        if data.get("url") != self.url:
            raise UsageError(f"{self.keys_path} holds keys for {data.get('url')}, not {self.url}",
                             "set [rooms] keys to another file for this server (or move that one aside)")
        return {str(k): dict(v) for k, v in data["agents"].items()}

    def key(self, role: str) -> dict[str, str]:
        found = self.keys().get(role)
        if found is None:
            raise NotFoundError(f"no agent key for role {role!r} on {self.url}",
                                "run `signoff rooms connect` (and list the role under [rooms.roles])")
        return found

    def connect(self, registration_key: str, overwrite: bool = False) -> dict[str, Registered]:
        """Register every configured role (already stored ones are kept unless `overwrite`)."""
        if self.url is None:
            raise UsageError("[rooms] url is not set: the embedded server needs no agent keys",
                             "set [rooms] url to the server to connect to")
        if not self.roles:
            raise UsageError("no roles under [rooms.roles]", "add [rooms.roles.<role>] name = \"...\"")
        stored = self.keys()
        done: dict[str, Registered] = {}
        for role in self.roles.values():
            if role.role in stored and not overwrite:
                continue
            done[role.role] = register_agent(self.url, registration_key, role.name, role.description,
                                             overwrite=overwrite)
            stored[role.role] = {"name": role.name, "agent_id": done[role.role].agent_id,
                                 "api_key": done[role.role].api_key}
            self.store_keys(stored)  # each key as soon as it exists
        return done

    def store_keys(self, agents: dict[str, dict[str, str]]) -> None:
        """Replace the keys file's agents (role -> {name, agent_id, api_key}) for this server."""
        write_private_json(self.keys_path, {"url": self.url, "agents": agents})

    def agent_transport(self, role: str) -> HttpTransport:
        found = self.key(role)
        assert self.url is not None
        return HttpTransport(self.url, found["agent_id"], found["api_key"])

    def agent_sync_transport(self, role: str) -> StreamSyncTransport:
        """The synchronous face over HTTP: each connection holds its SSE stream (any server; a
        Switch core opens no connection for the long poll that `HttpSyncTransport` uses)."""
        found = self.key(role)
        assert self.url is not None
        return StreamSyncTransport(self.url, found["agent_id"], found["api_key"])

    # -- a workflow's agents and people, on whichever server is configured ----------------------

    def agent_name(self, role: str) -> str:
        """The agent's name for `role`: its [rooms.roles] name, or the role itself (on the
        embedded server a role is named by its agent)."""
        found = self.roles.get(role)
        return found.name if found is not None else role

    def stream_transport(self, role: str, ledger: SqlLedger) -> Transport:
        """The async client's transport as `role`'s agent: in process on the embedded server (the
        agent called `agent_name(role)`), over HTTP with the stored key otherwise. A process that
        streams from the embedded server while others write its database runs `housekeeping` too."""
        if self.url is None:
            rooms = embedded_rooms(ledger)
            return InProcessTransport(rooms, agent=rooms.agent_by_name(self.agent_name(role)))
        return self.agent_transport(role)

    def housekeeping(self, ledger: SqlLedger) -> list[Callable[[], Coroutine[Any, Any, None]]]:
        """What a process on the embedded server runs beside its agents, as `signoff serve` does:
        the server's housekeeping (lapsed connections, expired cards, and other processes' writes,
        picked up every `EMBEDDED_FOLLOW_SECONDS`). Nothing over HTTP: that server runs its own."""
        if self.url is not None:
            return []
        return [lambda: embedded_housekeeping(ledger)]

    def sync_agent(self, role: str, ledger: SqlLedger) -> SyncRoomsClient:
        """The synchronous client as `role`'s agent: in process on the embedded server, over the
        event stream at [rooms] url (any server)."""
        if self.url is None:
            rooms = embedded_rooms(ledger)
            return SyncRoomsClient(InProcessSyncTransport(rooms, agent=rooms.agent_by_name(self.agent_name(role))))
        return SyncRoomsClient(self.agent_sync_transport(role))

    def person(self, name: str, ledger: SqlLedger) -> Person:
        """The person called `name`, bound by sender id: [rooms.people] first; on the embedded
        server, its directory. Never from a name in a message."""
        sender = self.people.get(name)
        if sender is not None:
            return Person(name, "user", sender)
        if self.url is None:
            user = embedded_rooms(ledger).user_by_name(name)
            return Person(user.name, "user", user.sender)
        raise NotFoundError(f"{name!r} is not bound to a sender id on {self.url}",
                            f"add [rooms.people] {name} = \"<sender id as the server writes it>\"")


async def embedded_housekeeping(ledger: SqlLedger, interval: float = EMBEDDED_FOLLOW_SECONDS) -> None:
    """The embedded server's housekeeping in this process, until cancelled (see `RoomsConfig.housekeeping`)."""
    from signoff.rooms.http.app import housekeeping  # the server's own loop (FastAPI-side module)

    await housekeeping(embedded_rooms(ledger), interval)


def _valid_name(name: str) -> bool:
    return bool(name) and (name[0].islower() or name[0].isdigit()) and all(
        c.islower() or c.isdigit() or c in "._-" for c in name) and name.isascii()


def write_private_json(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` with `data`, readable by its owner only (mode 0600) from the first byte."""
    replace_text(path, json.dumps(data, indent=1, sort_keys=True), private=True)
