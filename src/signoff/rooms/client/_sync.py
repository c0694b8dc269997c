"""The synchronous face of the rooms client: an agent or a person acting step by step, without a
background stream.

A workflow that must be deterministic (the incident's pump handles every waiting event, service by
service, in a fixed order) cannot consume a live stream. It polls instead: `SyncRoomsClient.events`
returns a room's durable events after a cursor the caller keeps, and every poll also refreshes the
connection's liveness (and so its role lease). One connection per room, named by the caller.
`RoomsUserClient` is a person's face (the user endpoints): post, read, answer approval cards.

Each face runs over a transport: over HTTP (`signoff serve`, or a Switch server) or in process
(straight into a `RoomService`, the same operation code the server runs). The HTTP transports map
errors exactly as the async client does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import httpx

from signoff.kernel.errors import ConflictError, NotFoundError, UnavailableError
from signoff.kernel.ids import check_id, id_path
from signoff.kernel.tls import tls_context
from signoff.rooms.client._capabilities import Capabilities
from signoff.rooms.client._context import page_back_sync
from signoff.rooms.client._http import connection_header, error_from_response
from signoff.rooms.client._inprocess import acting_agent
from signoff.rooms.domain.model import Principal
from signoff.rooms.domain.receipts import Receipt
from signoff.rooms.domain.service import RoomService
from signoff.rooms.protocol.operations import call_operation, catalogue

PAGE = 1000  # messages per page when reading a whole room


class SyncTransport(ABC):
    """Acts as one agent, synchronously."""

    agent_id: str
    sender: str  # the sender id the server writes on this agent's messages

    @abstractmethod
    def open(self, connection_id: str, room_id: str) -> None:
        """Open (or reopen) the connection `connection_id` and connect it to `room_id`."""

    @abstractmethod
    def poll(self, connection_id: str, room_id: str, after: int) -> list[dict[str, Any]]:
        """The room's events after sequence `after` (at most one page), keeping the connection alive."""

    @abstractmethod
    def call(self, op: str, args: dict[str, Any], connection_id: str) -> Any:
        """Run an operation on the connection; returns the unwrapped `result`."""

    @abstractmethod
    def history_page(self, room_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        """Up to `limit` messages of the room after sequence `after`, oldest first."""

    def history(self, room_id: str) -> list[dict[str, Any]]:
        """Every message of the room, oldest first (by sequence; a server that pages by time
        overrides this)."""
        return all_pages(lambda after: self.history_page(room_id, after, PAGE))

    @abstractmethod
    def operations(self) -> dict[str, Any]:
        """The server's operation catalogue (what it offers)."""

    def close(self) -> None:
        return None


class UserTransport(ABC):
    """Acts as one person, synchronously (the user endpoints)."""

    @abstractmethod
    def post(self, room_id: str, body: str, targets: list[str]) -> dict[str, Any]:
        """Post a message; returns `{event_id, sequence, target_statuses}` as the server assigned them."""

    @abstractmethod
    def messages_page(self, room_id: str, after: int, limit: int) -> list[dict[str, Any]]: ...

    @abstractmethod
    def pending(self) -> list[dict[str, Any]]:
        """The approval cards waiting for this person."""

    @abstractmethod
    def answer(self, request_id: str, option_id: str, digest: str) -> dict[str, Any]:
        """Answer the card whose `digest` this person was shown (any other card refuses it)."""

    @abstractmethod
    def room_approvals(self, room_id: str, after: int) -> list[dict[str, Any]]:
        """A page of the room's approval cards requested after sequence `after`, oldest first."""

    @abstractmethod
    def approval(self, request_id: str) -> dict[str, Any]:
        """One approval card of a room this person reads (or that names them), with its state."""

    # Identity claims (rooms.claims): a person mints a code; a bridge redeems it and relays.

    @abstractmethod
    def claim_code(self, bridge: str, external_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def redeem_claim(self, code: str, external_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def claims(self) -> list[dict[str, Any]]: ...

    @abstractmethod
    def revoke_claim(self, claim_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def relay(self, room_id: str, external_id: str, body: str) -> dict[str, Any]:
        """Post what a chat account typed (as its claimed person, else as an outsider):
        `{event_id, sequence, sender, claim}`."""

    @abstractmethod
    def relay_answer(self, request_id: str, external_id: str, option_id: str, digest: str,
                     evidence: dict[str, str]) -> dict[str, Any]: ...

    def close(self) -> None:
        return None


class SyncRoomsClient:
    """One agent's synchronous connection(s) to a rooms server."""

    def __init__(self, transport: SyncTransport) -> None:
        self.transport = transport
        self.agent_id = transport.agent_id

    @property
    def sender(self) -> str:
        """Our sender id as the server writes it (a stream transport learns it at its first open)."""
        return self.transport.sender

    def open(self, connection_id: str, room_id: str) -> None:
        self.transport.open(connection_id, room_id)

    def events(self, connection_id: str, room_id: str, after: int) -> list[dict[str, Any]]:
        return self.transport.poll(connection_id, room_id, after)

    def call(self, connection_id: str, op: str, args: dict[str, Any]) -> Any:
        return self.transport.call(op, args, connection_id)

    def history(self, room_id: str) -> list[dict[str, Any]]:
        """Every message of the room, oldest first."""
        return self.transport.history(room_id)

    def receipt(self, connection_id: str, room_id: str, result: dict[str, Any], body: str, addressed: bool,
                thread_id: str | None = None) -> Receipt:
        """The receipt of a send that answered `result`. A Switch core answers only the event id
        (and target statuses), and stores an addressed text with the @-prefix it added: the exact
        text and our sender id are then read back from the room, as the async client does."""
        message_id = str(result["event_id"])
        sender, stored = result.get("sender"), result.get("body")
        if sender is None or stored is None:
            found = page_back_sync(lambda op, **args: self.call(connection_id, op, args), message_id) or {}
            sender, stored = sender or found.get("sender") or self.sender, stored or found.get("body") or body
        return Receipt(message_id, room_id, str(sender), str(stored), bool(result.get("addressed", addressed)),
                       thread_id, target_statuses=dict(result.get("target_statuses") or {}),
                       sequence=result.get("sequence"))

    def capabilities(self) -> Capabilities:
        """What this server offers (approval cards, room links), from its operation catalogue."""
        return Capabilities.from_catalogue(self.transport.operations())

    def close(self) -> None:
        self.transport.close()


class RoomsUserClient:
    """One person's synchronous face to a rooms server."""

    def __init__(self, transport: UserTransport) -> None:
        self.transport = transport

    def post(self, room_id: str, body: str, targets: list[str] | None = None) -> dict[str, Any]:
        return self.transport.post(room_id, body, targets or [])

    def messages(self, room_id: str) -> list[dict[str, Any]]:
        """Every message of the room this person may read, oldest first."""
        return all_pages(lambda after: self.transport.messages_page(room_id, after, PAGE))

    def pending(self) -> list[dict[str, Any]]:
        return self.transport.pending()

    def answer(self, request_id: str, option_id: str, digest: str) -> dict[str, Any]:
        """Answer the card this person was shown: `digest` is the card's `digest` as shown."""
        return self.transport.answer(request_id, option_id, digest)

    def approval(self, request_id: str) -> dict[str, Any]:
        return self.transport.approval(request_id)

    def room_approvals(self, room_id: str, after: int = 0) -> list[dict[str, Any]]:
        return self.transport.room_approvals(room_id, after)

    def claim_code(self, bridge: str, external_id: str) -> dict[str, Any]:
        """A one-time code (shown once) with which the chat account `external_id` claims to be
        this person, through the bridge user `bridge`."""
        return self.transport.claim_code(bridge, external_id)

    def redeem_claim(self, code: str, external_id: str) -> dict[str, Any]:
        return self.transport.redeem_claim(code, external_id)

    def claims(self) -> list[dict[str, Any]]:
        return self.transport.claims()

    def revoke_claim(self, claim_id: str) -> dict[str, Any]:
        return self.transport.revoke_claim(claim_id)

    def relay(self, room_id: str, external_id: str, body: str) -> dict[str, Any]:
        return self.transport.relay(room_id, external_id, body)

    def relay_answer(self, request_id: str, external_id: str, option_id: str, digest: str,
                     evidence: dict[str, str]) -> dict[str, Any]:
        return self.transport.relay_answer(request_id, external_id, option_id, digest, evidence)

    def close(self) -> None:
        self.transport.close()


def all_pages(page: Callable[[int], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Read page after page (by sequence) until a short one: no room is cut off at one page."""
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        batch = page(after)
        out += batch
        if len(batch) < PAGE:
            return out
        after = int(batch[-1]["sequence"])


# -- in process -------------------------------------------------------------------------------


class InProcessSyncTransport(SyncTransport):
    def __init__(self, service: RoomService, api_key: str | None = None, agent: Principal | None = None) -> None:
        self.service = service
        self.principal: Principal = acting_agent(service, api_key, agent)
        self.agent_id = self.principal.id
        self.sender = self.principal.sender

    def open(self, connection_id: str, room_id: str) -> None:
        self.service.connections.open(self.agent_id, connection_id, scope="single", filter_="all")
        self.call("connect_to_room", {"room_id": room_id}, connection_id)

    def poll(self, connection_id: str, room_id: str, after: int) -> list[dict[str, Any]]:
        try:
            self.service.connections.beat(self.agent_id, connection_id, after)
        except (NotFoundError, ConflictError):
            self.open(connection_id, room_id)  # the connection lapsed: a poll over HTTP reopens it too
        return [e for e in self.service.agent_events(self.agent_id, after, limit=PAGE) if e.get("room_id") == room_id]

    def call(self, op: str, args: dict[str, Any], connection_id: str) -> Any:
        return call_operation(self.service, self.principal, op, dict(args), connection_id)

    def history_page(self, room_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        return self.service.read_messages(self.principal, room_id, after=after, limit=limit)

    def operations(self) -> dict[str, Any]:
        return catalogue()


class InProcessUserTransport(UserTransport):
    def __init__(self, service: RoomService, token: str) -> None:
        self.service = service
        self.principal = service.authenticate(token)

    def post(self, room_id: str, body: str, targets: list[str]) -> dict[str, Any]:
        r = self.service.post_message(self.principal, room_id, body, target_names=targets)
        return {"event_id": r.message_id, "sequence": r.sequence, "target_statuses": dict(r.target_statuses)}

    def messages_page(self, room_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        return self.service.read_messages(self.principal, room_id, after=after, limit=limit)

    def pending(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.service.pending_approvals(self.principal)]

    def answer(self, request_id: str, option_id: str, digest: str) -> dict[str, Any]:
        return self.service.answer_approval(self.principal, request_id, option_id, digest)

    def approval(self, request_id: str) -> dict[str, Any]:
        return self.service.approval(self.principal, request_id).to_dict()

    def room_approvals(self, room_id: str, after: int) -> list[dict[str, Any]]:
        return self.service.room_approvals(self.principal, room_id, after)

    def claim_code(self, bridge: str, external_id: str) -> dict[str, Any]:
        return self.service.claims.issue_code(self.principal, bridge, external_id)

    def redeem_claim(self, code: str, external_id: str) -> dict[str, Any]:
        return self.service.claims.redeem(self.principal, code, external_id)

    def claims(self) -> list[dict[str, Any]]:
        return self.service.claims.claims(self.principal)

    def revoke_claim(self, claim_id: str) -> dict[str, Any]:
        return self.service.claims.revoke(self.principal, claim_id)

    def relay(self, room_id: str, external_id: str, body: str) -> dict[str, Any]:
        receipt, claim = self.service.claims.relay_message(self.principal, room_id, external_id, body)
        return {"event_id": receipt.message_id, "sequence": receipt.sequence, "sender": receipt.sender,
                "claim": claim}

    def relay_answer(self, request_id: str, external_id: str, option_id: str, digest: str,
                     evidence: dict[str, str]) -> dict[str, Any]:
        return self.service.claims.relay_answer(self.principal, request_id, external_id, option_id, digest,
                                                evidence)


# -- over HTTP --------------------------------------------------------------------------------


class _HttpBase:
    def __init__(self, base_url: str, token: str, timeout: float) -> None:
        self._base = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self._base, headers={"Authorization": f"Bearer {token}"},
                                  timeout=timeout, verify=tls_context())

    def _send(self, method: str, template: str, ids: dict[str, str] | None = None, **kwargs: Any) -> Any:
        """`template`'s `{name}` fields filled by `ids` through `id_path` (checked and quoted), sent."""
        path = id_path(template, **(ids or {}))
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise UnavailableError(f"cannot reach {self._base}: {exc!r}", "is the server running?") from exc
        if response.status_code >= 400:
            raise error_from_response(response)
        return None if response.status_code == 204 else response.json()

    def close(self) -> None:
        self._http.close()


class HttpSyncTransport(_HttpBase, SyncTransport):
    """The agent protocol's long-poll form: `GET /agents/{id}/events` answers JSON, opens the
    connection when it is new and refreshes its liveness. signoff's server only: a Switch core
    answers the long poll but opens no connection for it (use `StreamSyncTransport` there)."""

    def __init__(self, base_url: str, agent_id: str, api_key: str, *, timeout: float = 60.0,
                 client_name: str = "signoff-rooms-client", poll_wait: float | None = None) -> None:
        super().__init__(base_url, api_key, timeout)
        self.agent_id = agent_id
        self.sender = f"agent:{agent_id}"
        self._client_name = client_name
        self._poll_wait = poll_wait  # seconds an idle poll waits (None: the server's keepalive)

    def _events(self, connection_id: str, room_id: str, start_from: str) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"connection_id": check_id("connection id", connection_id), "scope": "single",
                                  "filter": "all", "rooms": check_id("room id", room_id), "start_from": start_from,
                                  "protocol": "1", "protocol_accepts": "1", "client": self._client_name}
        if self._poll_wait is not None:
            params["wait"] = self._poll_wait
        data = self._send("GET", "/agents/{agent_id}/events", {"agent_id": self.agent_id}, params=params)
        return list(data["events"]) if data else []

    def open(self, connection_id: str, room_id: str) -> None:
        self._events(connection_id, room_id, "head")
        self.call("connect_to_room", {"room_id": room_id}, connection_id)

    def poll(self, connection_id: str, room_id: str, after: int) -> list[dict[str, Any]]:
        return self._events(connection_id, room_id, str(after))

    def call(self, op: str, args: dict[str, Any], connection_id: str) -> Any:
        data = self._send("POST", "/agents/{agent_id}/ops/{op}", {"agent_id": self.agent_id, "op": op}, json=args,
                          headers=connection_header(connection_id))
        return data["result"]

    def history_page(self, room_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        data = self._send("GET", "/agents/{agent_id}/rooms/{room_id}/history",
                          {"agent_id": self.agent_id, "room_id": room_id}, params={"after": after, "limit": limit})
        return list(data["messages"])

    def operations(self) -> dict[str, Any]:
        return dict(self._send("GET", "/agents/{agent_id}/ops", {"agent_id": self.agent_id}))


class HttpUserTransport(_HttpBase, UserTransport):
    def __init__(self, base_url: str, token: str, *, timeout: float = 60.0) -> None:
        super().__init__(base_url, token, timeout)

    def post(self, room_id: str, body: str, targets: list[str]) -> dict[str, Any]:
        return dict(self._send("POST", "/users/me/rooms/{room_id}/messages", {"room_id": room_id},
                               json={"body": body, "target_names": targets}))

    def messages_page(self, room_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        data = self._send("GET", "/users/me/rooms/{room_id}/messages", {"room_id": room_id},
                          params={"after": after, "limit": limit})
        return list(data["messages"])

    def pending(self) -> list[dict[str, Any]]:
        return list(self._send("GET", "/users/me/approvals")["approvals"])

    def answer(self, request_id: str, option_id: str, digest: str) -> dict[str, Any]:
        return dict(self._send("POST", "/users/me/approvals/{request_id}", {"request_id": request_id},
                               json={"option_id": option_id, "digest": digest}))

    def approval(self, request_id: str) -> dict[str, Any]:
        return dict(self._send("GET", "/users/me/approvals/{request_id}", {"request_id": request_id}))

    def room_approvals(self, room_id: str, after: int) -> list[dict[str, Any]]:
        return list(self._send("GET", "/users/me/rooms/{room_id}/approvals", {"room_id": room_id},
                               params={"after": after})["approvals"])

    def claim_code(self, bridge: str, external_id: str) -> dict[str, Any]:
        return dict(self._send("POST", "/users/me/claims/codes", json={"bridge": bridge, "external_id": external_id}))

    def redeem_claim(self, code: str, external_id: str) -> dict[str, Any]:
        return dict(self._send("POST", "/users/me/claims/redeem", json={"code": code, "external_id": external_id}))

    def claims(self) -> list[dict[str, Any]]:
        return list(self._send("GET", "/users/me/claims")["claims"])

    def revoke_claim(self, claim_id: str) -> dict[str, Any]:
        return dict(self._send("POST", "/users/me/claims/{claim_id}/revoke", {"claim_id": claim_id}))

    def relay(self, room_id: str, external_id: str, body: str) -> dict[str, Any]:
        return dict(self._send("POST", "/users/me/relayed/rooms/{room_id}/messages", {"room_id": room_id},
                               json={"external_id": external_id, "body": body}))

    def relay_answer(self, request_id: str, external_id: str, option_id: str, digest: str,
                     evidence: dict[str, str]) -> dict[str, Any]:
        return dict(self._send("POST", "/users/me/relayed/approvals/{request_id}", {"request_id": request_id}, json={
            "external_id": external_id, "option_id": option_id, "digest": digest, "evidence": evidence}))
