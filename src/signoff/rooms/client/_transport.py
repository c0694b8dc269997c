"""The two-method-family interface every rooms transport implements (HTTP, in-process)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any

from signoff.kernel.errors import SignoffError
from signoff.rooms.protocol.streams import Frame, StreamParams


class IncompatibleServer(SignoffError):
    """The server refused our protocol revisions (HTTP 409 at stream open); `body` explains."""

    exit_code = 3

    def __init__(self, body: dict[str, Any]) -> None:
        message = str(body.get("message") or body)
        super().__init__(f"incompatible rooms server: {message}", str(body.get("remedy") or "") or None)
        self.body = body


class Transport(ABC):
    """Acts as one agent against a rooms server (signoff's own or a Switch 0.19 core)."""

    agent_id: str

    @abstractmethod
    async def call(self, op: str, args: dict[str, Any], connection_id: str | None) -> Any:
        """Run an operation; returns the unwrapped `result`. Errors: UsageError (400),
        RefusedError (401/403), NotFoundError (404), ConflictError (409: reconnect)."""

    @abstractmethod
    def events(self, params: StreamParams) -> AsyncIterator[Frame]:
        """Open the event stream; yields frames until the server ends it. Raises
        IncompatibleServer when the protocol ranges do not overlap."""

    @abstractmethod
    async def beat(self, connection_id: str, cursor: int) -> dict[str, Any]:
        """Heartbeat. NotFoundError: the connection died; ConflictError: reopen the stream."""

    @abstractmethod
    async def subscribe(self, connection_id: str, room_id: str, takeover: bool = False) -> dict[str, Any]: ...

    @abstractmethod
    async def unsubscribe(self, connection_id: str, room_id: str) -> dict[str, Any]: ...

    @abstractmethod
    async def operations(self) -> dict[str, Any]:
        """The server's operation catalogue (`GET /agents/{id}/ops`)."""

    async def aclose(self) -> None:
        return None
