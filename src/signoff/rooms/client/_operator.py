"""Operator calls (an agent's owner or an admin): addressing policies, registration keys, users.

The two servers put them in different places with different credentials:
- signoff: `/admin/...` with a user's bearer token;
- a Switch core: `/gateway/...` with the `switch_auth` cookie from `POST /gateway/auth/login`.
No agent key can change a policy on either. `operator_for` picks the adapter from the credential.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import httpx

from signoff.kernel.errors import RefusedError, UnavailableError, UsageError
from signoff.kernel.ids import id_path
from signoff.kernel.tls import tls_context
from signoff.kernel.wire import error_of

SWITCH_COOKIE = "switch_auth"


class Operator(ABC):
    """What an owner or admin does on a rooms server, whichever API it speaks."""

    kind: str

    @abstractmethod
    def set_policy(self, agent_id: str, policy: dict[str, Any] | None) -> dict[str, Any]:
        """Set (or with None clear: open to anyone) an agent's addressing policy."""

    @abstractmethod
    def policy(self, agent_id: str) -> dict[str, Any] | None:
        """The addressing policy the server holds for an agent (None: open to anyone)."""

    @abstractmethod
    def registration_key(self, label: str = "signoff", owner_name: str | None = None) -> str:
        """A new registration key (to register agents with), owned by this operator or, where the
        server allows an admin to name one, by the user `owner_name`."""

    @abstractmethod
    def create_user(self, name: str, *, email: str | None = None, password: str | None = None,
                    admin: bool = False) -> dict[str, Any]:
        """A new person (admins only); returns at least `{id, name}`."""

    @abstractmethod
    def add_user_to_room(self, room_id: str, user_name: str) -> dict[str, Any]:
        """Add an existing person to a room the operator may manage (its owner's, or as an admin)."""

    def close(self) -> None:
        self._http.close()

    _http: httpx.Client


class _Http:
    def __init__(self, base_url: str, timeout: float, transport: httpx.BaseTransport | None) -> None:
        self.base = base_url.rstrip("/")
        self.http = httpx.Client(base_url=self.base, timeout=timeout, transport=transport, verify=tls_context())

    def send(self, method: str, template: str, headers: dict[str, str], ids: dict[str, str] | None = None,
             **kwargs: Any) -> httpx.Response:
        """`template`'s `{name}` fields filled by `ids` through `id_path` (checked and quoted), sent."""
        path = id_path(template, **(ids or {}))
        try:
            response = self.http.request(method, path, headers=headers, **kwargs)
        except httpx.TransportError as exc:
            raise UnavailableError(f"cannot reach {self.base}: {exc!r}", "is the rooms server running?") from exc
        if response.status_code >= 400:
            raise error_of(response, f"{method} {self.base}{path}", "check the operator credential")
        return response


class SignoffOperator(Operator):
    kind = "signoff"

    def __init__(self, base_url: str, user_token: str, *, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._wire = _Http(base_url, timeout, transport)
        self._http = self._wire.http
        self._auth = {"Authorization": f"Bearer {user_token}"}

    def set_policy(self, agent_id: str, policy: dict[str, Any] | None) -> dict[str, Any]:
        return dict(self._wire.send("PUT", "/admin/agents/{agent_id}/addressing-policy", self._auth,
                                    {"agent_id": agent_id}, json={"policy": policy}).json())

    def policy(self, agent_id: str) -> dict[str, Any] | None:
        held = self._wire.send("GET", "/admin/agents/{agent_id}/addressing-policy", self._auth,
                               {"agent_id": agent_id}).json()["policy"]
        return None if held is None else dict(held)

    def registration_key(self, label: str = "signoff", owner_name: str | None = None) -> str:
        body = {"owner_name": owner_name} if owner_name else None
        return str(self._wire.send("POST", "/admin/registration-keys", self._auth,
                                   json=body).json()["registration_key"])

    def create_user(self, name: str, *, email: str | None = None, password: str | None = None,
                    admin: bool = False) -> dict[str, Any]:
        return dict(self._wire.send("POST", "/admin/users", self._auth,
                                    json={"name": name, "admin": admin}).json())

    def add_user_to_room(self, room_id: str, user_name: str) -> dict[str, Any]:
        return dict(self._wire.send("POST", "/users/me/rooms/{room_id}/members", self._auth, {"room_id": room_id},
                                    json={"user_name": user_name}).json())


class SwitchOperator(Operator):
    kind = "switch"

    def __init__(self, base_url: str, email: str, password: str, *, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._wire = _Http(base_url, timeout, transport)
        self._http = self._wire.http
        response = self._wire.send("POST", "/gateway/auth/login", {}, json={"email": email, "password": password})
        # The cookie may be marked Secure; over plain loopback HTTP a cookie jar would withhold it,
        # so it is sent explicitly.
        cookie = response.cookies.get(SWITCH_COOKIE)
        if not cookie:
            raise RefusedError(f"{self._wire.base} answered the login without a {SWITCH_COOKIE} cookie",
                               "is this a Switch core, and is password login enabled?")
        self._auth = {"Cookie": f"{SWITCH_COOKIE}={cookie}"}
        self.user: dict[str, Any] = dict(response.json())

    def set_policy(self, agent_id: str, policy: dict[str, Any] | None) -> dict[str, Any]:
        return dict(self._wire.send("PUT", "/gateway/agents/{agent_id}/addressing-policy", self._auth,
                                    {"agent_id": agent_id}, json={"policy": policy}).json())

    def policy(self, agent_id: str) -> dict[str, Any] | None:
        # The gateway has no GET on the policy path (405); the agent's record carries it.
        held = self._wire.send("GET", "/gateway/agents/{agent_id}", self._auth,
                               {"agent_id": agent_id}).json()["addressing_policy"]
        return None if held is None else dict(held)

    def registration_key(self, label: str = "signoff", owner_name: str | None = None) -> str:
        if owner_name is not None and owner_name != self.user.get("name"):
            raise UsageError("a Switch registration key belongs to the user who logs in",
                             f"log in as {owner_name} (--operator EMAIL:PASSWORD) to own the agents")
        return str(self._wire.send("POST", "/gateway/api-keys", self._auth, json={"label": label}).json()["key"])

    def create_user(self, name: str, *, email: str | None = None, password: str | None = None,
                    admin: bool = False) -> dict[str, Any]:
        if not email or not password:
            raise UsageError("a Switch user needs an email and a password", "pass email=... and password=...")
        return dict(self._wire.send("POST", "/gateway/users", self._auth, json={
            "name": name, "email": email, "password": password, "role": "admin" if admin else "user"}).json())

    def add_user_to_room(self, room_id: str, user_name: str) -> dict[str, Any]:
        # A Switch room names no user members: people reach it only through bridges.
        raise UsageError("a Switch core's rooms hold no user members (people come through bridges)",
                         "reach the reporter through a bridge; link reporters on signoff's server")


def operator_for(base_url: str, credential: str, transport: httpx.BaseTransport | None = None) -> Operator:
    """`email:password` logs in to a Switch gateway; anything else is a signoff user token."""
    email, sep, password = credential.partition(":")
    if sep and "@" in email:
        return SwitchOperator(base_url, email, password, transport=transport)
    return SignoffOperator(base_url, credential, transport=transport)
