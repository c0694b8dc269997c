"""Ask a person to approve exact content, and wait for the answer, through a rooms server.

Everything that decides is the rooms server's: the card, who may answer (people only, and only the
named responders), the first allowed answer, expiry. The card's binding to content and the reading
of its decision are `signoff.rooms.domain.bound`'s (the one content-bound approval, `signoff.ledger.approval`);
this module asks and waits, and reads the outcome back from the server, never from anything the agent
supplies: a decision is `approved` only when the server's card binds the expected content and records
an accepted answer from a listed responder, made into an `Approval` by `approve`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.rooms.client import RoomsClient, Transport
from signoff.rooms.domain.bound import (
    CardDecision,
    card_title,
    check_content,
    content_digest,
    labelled,
    new_request_id,
    read_decision,
)

DEFAULT_OPTIONS = ({"id": "yes", "label": "Approve", "decision": "accept"},
                   {"id": "no", "label": "Refuse", "decision": "decline"})
MAX_WAIT = 24 * 3600.0


class Approvals:
    """One agent's content-bound approvals. `transport` is a fresh rooms transport per call."""

    def __init__(self, transport: Callable[[], Transport]) -> None:
        self._transport = transport

    async def _op(self, op: str, **args: Any) -> Any:
        transport = self._transport()
        try:
            return await transport.call(op, args, None)
        finally:
            await transport.aclose()

    @contextlib.asynccontextmanager
    async def connected(self, room_id: str) -> AsyncIterator[RoomsClient]:
        transport = self._transport()
        try:
            async with RoomsClient(transport) as client:
                await client.connect_to_room(room_id)
                yield client
        finally:
            await transport.aclose()

    async def room_id(self, room: str) -> str:
        """A room id from a room id or name among this agent's rooms."""
        rooms = await self._op("list_rooms")
        for r in rooms:
            if room in (r["room_id"], r["name"]):
                return str(r["room_id"])
        raise NotFoundError(f"this agent is not a member of a room {room!r}",
                            "add the agent to the room (signoff rooms room create ... --agent NAME)")

    async def request(self, room: str, question: str, content: str, responders: list[str],
                      expires_in: float, options: list[dict[str, str]] | None = None) -> dict[str, Any]:
        """Post a bound card; returns the server's card with `content_digest`."""
        check_content(content)
        title = card_title(question, content)
        shown = labelled(list(options or DEFAULT_OPTIONS))
        if not isinstance(expires_in, int | float) or not 0 < expires_in <= MAX_WAIT:
            raise UsageError(f"expires_in must be between 0 and {int(MAX_WAIT)} seconds", "pass e.g. 600")
        room_id = await self.room_id(room)
        digest = content_digest(content)
        async with self.connected(room_id) as client:
            card = await client.request_approval(new_request_id(digest), title, shown, time.time() + expires_in,
                                                 list(responders))
        return {**card, "content_digest": digest}

    async def card(self, request_id: str) -> dict[str, Any]:
        card: dict[str, Any] = await self._op("get_approval", request_id=request_id)
        return card

    async def decision(self, request_id: str, content: str | None = None) -> CardDecision:
        return read_decision(await self.card(request_id), content)

    async def wait(self, request_id: str, timeout: float, content: str | None = None) -> CardDecision:
        """The decision once a listed person answered (or the card expired), else `pending` after
        `timeout` seconds. Answers arrive as events on the agent's stream; the card is re-read from
        the server after each one, so the event itself is never trusted."""
        if not isinstance(timeout, int | float) or not 0 <= timeout <= MAX_WAIT:
            raise UsageError(f"timeout must be between 0 and {int(MAX_WAIT)} seconds", "pass e.g. 60")
        first = await self.decision(request_id, content)
        if first.state != "pending" or timeout == 0:
            return first
        deadline = time.monotonic() + timeout
        async with self.connected(first.room_id) as client:
            while True:
                now = await self.decision(request_id, content)  # read after connecting: no answer slips by
                left = deadline - time.monotonic()
                if now.state != "pending" or left <= 0:
                    return now
                try:
                    await client.next_event(lambda e: _about(e, request_id), timeout=left)
                except TimeoutError:
                    return await self.decision(request_id, content)


def _about(event: dict[str, Any], request_id: str) -> bool:
    return event.get("type") in ("approval_outcome", "approval_response_discarded") and \
        (event.get("payload") or {}).get("request_id") == request_id


def run_sync(coro: Any) -> Any:
    """Run a coroutine from sync code, also when the calling thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
