"""How an incident identity reaches the room server: over HTTP (the default, as any outside agent
or person would) or in process (same operation code, no sockets; used where a test wants it).

An agent link speaks the agent protocol: it opens one connection per room with the event
endpoint's long poll (`GET /agents/{id}/events?connection_id=…&rooms=…&start_from=N`, which also
refreshes the connection's liveness and so its role lease), calls operations with
`X-Switch-Connection-Id`, and reads a room's history. A user link uses the user endpoints.
"""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from signoff.kernel.errors import ConflictError, NotFoundError
from signoff.kernel.wire import error_of
from signoff.rooms import RoomService
from signoff.rooms.model import Principal
from signoff.rooms.operations import call_operation


class AgentLink(Protocol):
    agent_id: str
    sender: str

    def open(self, conn_id: str, room_id: str) -> None: ...
    def events(self, conn_id: str, room_id: str, after: int) -> list[dict[str, Any]]: ...
    def op(self, conn_id: str, name: str, args: dict[str, Any]) -> Any: ...
    def history(self, room_id: str) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...


class UserLink(Protocol):
    def post(self, room_id: str, body: str, targets: list[str]) -> dict[str, Any]: ...
    def messages(self, room_id: str) -> list[dict[str, Any]]: ...
    def pending(self) -> list[dict[str, Any]]: ...
    def answer(self, request_id: str, option_id: str) -> dict[str, Any]: ...
    def close(self) -> None: ...


# -- in process -------------------------------------------------------------------------------


class LocalAgent:
    def __init__(self, rooms: RoomService, key: str) -> None:
        self.rooms = rooms
        self.principal: Principal = rooms.authenticate(key)
        self.agent_id = self.principal.id
        self.sender = self.principal.sender
        self.name = self.principal.name

    def open(self, conn_id: str, room_id: str) -> None:
        self.rooms.connections.open(self.agent_id, conn_id, scope="single", filter_="all")
        self.op(conn_id, "connect_to_room", {"room_id": room_id})

    def events(self, conn_id: str, room_id: str, after: int) -> list[dict[str, Any]]:
        try:
            self.rooms.connections.beat(self.agent_id, conn_id, after)
        except (NotFoundError, ConflictError):
            self.open(conn_id, room_id)
        return [e for e in self.rooms.agent_events(self.agent_id, after, limit=1000) if e.get("room_id") == room_id]

    def op(self, conn_id: str, name: str, args: dict[str, Any]) -> Any:
        return call_operation(self.rooms, self.principal, name, dict(args), conn_id)

    def history(self, room_id: str) -> list[dict[str, Any]]:
        return _all_pages(lambda after: self.rooms.read_messages(self.principal, room_id, after=after, limit=1000))

    def close(self) -> None:
        """Nothing to release in process."""


class LocalUser:
    def __init__(self, rooms: RoomService, token: str) -> None:
        self.rooms = rooms
        self.principal = rooms.authenticate(token)

    def post(self, room_id: str, body: str, targets: list[str]) -> dict[str, Any]:
        r = self.rooms.post_message(self.principal, room_id, body, target_names=targets)
        return {"event_id": r.message_id, "sequence": r.sequence, "target_statuses": dict(r.target_statuses)}

    def messages(self, room_id: str) -> list[dict[str, Any]]:
        return _all_pages(lambda after: self.rooms.read_messages(self.principal, room_id, after=after, limit=1000))

    def pending(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.rooms.pending_approvals(self.principal)]

    def answer(self, request_id: str, option_id: str) -> dict[str, Any]:
        return self.rooms.answer_approval(self.principal, request_id, option_id)

    def close(self) -> None:
        """Nothing to release in process."""


# -- over HTTP -------------------------------------------------------------------------------


def _check(response: httpx.Response) -> Any:
    if response.status_code == 204:
        return None
    if response.status_code >= 400:
        raise error_of(response, "room server", "see the room server's docs")
    return response.json()


class HttpAgent:
    def __init__(self, base_url: str, agent_id: str, key: str) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
        self.agent_id = agent_id
        self.sender = f"agent:{agent_id}"

    def _poll(self, conn_id: str, room_id: str, start_from: str) -> list[dict[str, Any]]:
        params = {"connection_id": conn_id, "scope": "single", "filter": "all", "rooms": room_id,
                  "start_from": start_from, "protocol": "1", "protocol_accepts": "1", "client": "signoff-incident"}
        data = _check(self.http.get(f"/agents/{self.agent_id}/events", params=params))
        return list(data["events"]) if data else []

    def open(self, conn_id: str, room_id: str) -> None:
        self._poll(conn_id, room_id, "head")
        self.op(conn_id, "connect_to_room", {"room_id": room_id})

    def events(self, conn_id: str, room_id: str, after: int) -> list[dict[str, Any]]:
        return self._poll(conn_id, room_id, str(after))

    def op(self, conn_id: str, name: str, args: dict[str, Any]) -> Any:
        data = _check(self.http.post(f"/agents/{self.agent_id}/ops/{name}", json=args,
                                     headers={"X-Switch-Connection-Id": conn_id}))
        return data["result"]

    def history(self, room_id: str) -> list[dict[str, Any]]:
        def page(after: int) -> list[dict[str, Any]]:
            data = _check(self.http.get(f"/agents/{self.agent_id}/rooms/{room_id}/history",
                                        params={"after": after, "limit": 1000}))
            return list(data["messages"])

        return _all_pages(page)

    def close(self) -> None:
        self.http.close()


class HttpUser:
    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def post(self, room_id: str, body: str, targets: list[str]) -> dict[str, Any]:
        return dict(_check(self.http.post(f"/users/me/rooms/{room_id}/messages",
                                          json={"body": body, "target_names": targets})))

    def messages(self, room_id: str) -> list[dict[str, Any]]:
        def page(after: int) -> list[dict[str, Any]]:
            data = _check(self.http.get(f"/users/me/rooms/{room_id}/messages", params={"after": after, "limit": 1000}))
            return list(data["messages"])

        return _all_pages(page)

    def pending(self) -> list[dict[str, Any]]:
        return list(_check(self.http.get("/users/me/approvals"))["approvals"])

    def answer(self, request_id: str, option_id: str) -> dict[str, Any]:
        return dict(_check(self.http.post(f"/users/me/approvals/{request_id}", json={"option_id": option_id})))

    def close(self) -> None:
        self.http.close()


def _all_pages(page: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        batch = page(after)
        out += batch
        if len(batch) < 1000:
            return out
        after = batch[-1]["sequence"]
