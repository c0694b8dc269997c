"""RoomsClient: one agent's connection to a rooms server, over any transport.

It keeps the event stream open (resuming with Last-Event-ID after a drop, with backoff), beats
every 2 s, re-claims its rooms after an eviction, calls operations, and keeps a receipt for
every message it sends so a receiver's claim of a hand-off can be checked (`handoff_matches`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from signoff import __version__
from signoff.kernel.errors import (
    ConflictError,
    NotFoundError,
    RefusedError,
    SignoffError,
    UnavailableError,
    UsageError,
)
from signoff.rooms.client._capabilities import Capabilities
from signoff.rooms.client._context import page_back
from signoff.rooms.client._refusal import refuses
from signoff.rooms.client._transport import IncompatibleServer, Transport
from signoff.rooms.domain.receipts import Receipt
from signoff.rooms.protocol.streams import StreamParams
from signoff.rooms.protocol.wire import NotConnected

CLIENT_NAME = "signoff-rooms-client"


class RoomsClient:
    def __init__(self, transport: Transport, *, scope: str = "single", filter: str = "all",
                 connection_id: str | None = None, start_from: str = "head",
                 heartbeat_interval: float = 2.0, backoff_initial: float = 1.0, backoff_max: float = 30.0,
                 client_name: str = CLIENT_NAME) -> None:
        self.transport = transport
        self.agent_id = transport.agent_id
        self.scope = scope
        self.filter = filter
        self.connection_id = connection_id or str(uuid.uuid4())
        self.start_from = start_from
        self.heartbeat_interval = heartbeat_interval
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.client_name = client_name
        self.cursor: int | None = None  # highest sequence seen
        self.server: dict[str, Any] | None = None  # the last connection_state
        self.rooms: list[str] = []  # rooms this client wants (re-claimed after an eviction)
        self.subscribed: list[str] = []  # rooms the server says this connection holds
        self.receipts: dict[str, Receipt] = {}
        self.stale = False  # a gap was reported: re-read context
        self.gaps: list[dict[str, Any]] = []
        self.evictions: list[str] = []
        self.reconnects = 0
        self.opened = 0  # connection_state frames seen: one per stream the server opened
        self.streaming = False  # a stream is open right now
        self.beats = 0  # heartbeats the server answered
        self.last_beat: float | None = None  # when it last did (time.time())
        self._open_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._queue: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        self._connected = asyncio.Event()
        self._reopen = asyncio.Event()
        self._closed = False
        self._tasks: list[asyncio.Task[None]] = []
        self._fatal: BaseException | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> RoomsClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self, timeout: float = 30.0) -> None:
        """Open the stream and start the heartbeat; returns once connection_state arrived."""
        self._tasks = [asyncio.create_task(self._read_loop()), asyncio.create_task(self._beat_loop())]
        waiter = asyncio.create_task(self._connected.wait())
        done, _ = await asyncio.wait([waiter, self._tasks[0]], timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            await self.close()
            if self._fatal is not None:
                raise self._fatal
            raise UnavailableError("the rooms server did not open the event stream in time",
                                   "check the URL, the agent id and the api key")

    async def close(self) -> None:
        self._closed = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    async def wait_opened(self, count: int, timeout: float = 30.0) -> None:
        """Until the server has opened `count` streams for this client (e.g. after a restart)."""
        if self.opened >= count:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._open_waiters.append((count, waiter))
        try:
            await asyncio.wait_for(waiter, timeout)
        finally:
            self._open_waiters.remove((count, waiter))

    @property
    def connected(self) -> bool:
        """True while a stream is open (between its connection_state and its end)."""
        return self.streaming

    def reconnect(self) -> None:
        """Drop the current stream and reopen it (resuming from the cursor)."""
        self._reopen.set()

    # -- the stream -----------------------------------------------------------------------------

    def _params(self) -> StreamParams:
        resume = self.cursor is not None
        return StreamParams(
            connection_id=self.connection_id, scope=self.scope, filter=self.filter,
            start_from=str(self.cursor) if resume else self.start_from,
            last_event_id=str(self.cursor) if resume else None,
            protocol="1", protocol_accepts="1", client=self.client_name, client_version=__version__,
            rooms=list(self.rooms),
        )

    async def _consume(self) -> None:
        async for frame in self.transport.events(self._params()):
            if frame.event is None:
                continue
            if frame.event == "connection_state":
                self.server = frame.data
                if isinstance(frame.data, dict):
                    self.subscribed = list(frame.data.get("rooms") or [])
                    if self.cursor is None:
                        self.cursor = int(frame.data.get("cursor") or 0)
                self._connected.set()
                self.streaming = True
                self.opened += 1
                for count, waiter in self._open_waiters:
                    if count <= self.opened and not waiter.done():
                        waiter.set_result(None)
                continue
            if frame.event == "gap":
                await self._on_gap(frame.data if isinstance(frame.data, dict) else {})
                continue
            if frame.event == "subscription_changed":
                self.subscribed = list((frame.data or {}).get("rooms") or [])
                continue
            if frame.event == "evicted":
                reason = str((frame.data or {}).get("reason", ""))
                self.evictions.append(reason)
                return
            if frame.id is not None:
                if self.cursor is not None and frame.id <= self.cursor:
                    continue  # already delivered before a reconnect
                self.cursor = frame.id
            if isinstance(frame.data, dict):
                # The stream position travels with the event (a Switch core's envelope lacks it),
                # so a consumer can keep a durable cursor per event.
                data = frame.data if frame.id is None or "sequence" in frame.data else {**frame.data,
                                                                                       "sequence": frame.id}
                await self._queue.put(data)

    async def _on_gap(self, gap: dict[str, Any]) -> None:
        """The server lost (or never had) what our cursor points at: a Switch core after a restart
        numbers events from 1 again. Keeping the old cursor would drop every new event as already
        seen, and the heartbeat would keep reporting it; so the cursor moves to where the server
        resumed, and what we missed is read back from the room's context and handed to the consumer
        as one `context_recovered` event per room."""
        self.gaps.append(gap)
        self.stale = True
        resumed = gap.get("resumed_at")
        self.cursor = int(resumed) if isinstance(resumed, int) and resumed >= 0 else 0
        if len(self.rooms) != 1:
            return  # read_context is room-implicit: with several rooms the consumer re-reads each
        try:
            context = await self.read_context()
        except SignoffError:
            return  # stays stale; the consumer can retry read_context
        await self._queue.put({"type": "context_recovered", "room_id": self.rooms[0],
                               "payload": {"gap": gap, "context": context}})

    async def _read_loop(self) -> None:
        delay = self.backoff_initial
        while not self._closed:
            self._reopen.clear()
            consume = asyncio.create_task(self._consume())
            reopen = asyncio.create_task(self._reopen.wait())
            try:
                done, _ = await asyncio.wait([consume, reopen], return_when=asyncio.FIRST_COMPLETED)
            finally:  # also when this loop itself is cancelled (close): never leave the stream running
                self.streaming = False
                for task in (consume, reopen):
                    if not task.done():
                        task.cancel()
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await task
            if consume in done and consume.exception() is not None:
                exc = consume.exception()
                if isinstance(exc, IncompatibleServer | UsageError | RefusedError):
                    self._fatal = exc
                    await self._queue.put(exc)
                    return
            elif consume in done:
                delay = self.backoff_initial  # a clean end (evicted): reopen at once
                self.reconnects += 1
                continue
            self.reconnects += 1
            if reopen in done:
                continue
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.backoff_max)

    async def _beat_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.heartbeat_interval)
            if not self._connected.is_set():
                continue
            try:
                await self.transport.beat(self.connection_id, self.cursor or 0)
                self.beats += 1
                self.last_beat = time.time()
            except (NotFoundError, ConflictError):
                self.reconnect()  # the connection died or lost its stream: reopen
            except SignoffError:
                continue

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """Every event envelope, in sequence order, without duplicates across reconnects."""
        while True:
            item = await self._queue.get()
            if isinstance(item, BaseException):
                raise item
            yield item

    async def next_event(self, predicate: Callable[[dict[str, Any]], bool] | None = None,
                         timeout: float | None = 30.0) -> dict[str, Any]:
        """The next event (matching `predicate`, others are dropped)."""

        async def find() -> dict[str, Any]:
            async for event in self.events():
                if predicate is None or predicate(event):
                    return event
            raise AssertionError("unreachable")

        return await asyncio.wait_for(find(), timeout)

    # -- operations -----------------------------------------------------------------------------

    async def call(self, op: str, **args: Any) -> Any:
        """Run an operation on this connection. A Switch core answers "Not connected to a room"
        when the connection no longer holds the room this client works in (another connection of
        the agent took it over, or the core restarted): the room is claimed again and the
        operation retried once."""
        try:
            return await self.transport.call(op, args, self.connection_id)
        except NotConnected:
            if op == "connect_to_room" or self.scope != "single" or len(self.rooms) != 1:
                raise
            await self.transport.call("connect_to_room", {"room_id": self.rooms[0]}, self.connection_id)
            return await self.transport.call(op, args, self.connection_id)

    async def connect_to_room(self, room_id: str, **args: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("connect_to_room", room_id=room_id, **args)
        if self.scope == "single":
            self.rooms = [room_id]
        elif room_id not in self.rooms:
            self.rooms.append(room_id)
        return result

    def _room(self) -> str:
        if len(self.rooms) != 1:
            raise UsageError("connect to exactly one room first", "call connect_to_room(room_id)")
        return self.rooms[0]

    async def _receipt(self, result: dict[str, Any], fallback_body: str, addressed: bool,
                       thread_id: str | None) -> Receipt:
        message_id = str(result["event_id"])
        sender, body = result.get("sender"), result.get("body")
        if sender is None or body is None:
            # A Switch core returns only the event id: read the stored message back to learn the
            # exact text and our own sender id as the server writes them.
            found = await self.find_message(message_id)
            sender = sender or (found or {}).get("sender") or ""
            body = body or (found or {}).get("body") or fallback_body
        receipt = Receipt(message_id=message_id, room_id=self._room(), sender=str(sender), body=str(body),
                          addressed=bool(result.get("addressed", addressed)), thread_id=thread_id,
                          target_statuses=dict(result.get("target_statuses") or {}),
                          sequence=result.get("sequence"))
        self.receipts[message_id] = receipt
        return receipt

    async def find_message(self, message_id: str, page: int = 50, max_pages: int = 40) -> dict[str, Any] | None:
        """The connected room's entry for `message_id`, paging back through `read_context` (newest
        first) until it is found or the room's start is reached. In a busy room the message we just
        sent may already be further back than one page."""
        return await page_back(self.call, message_id, page, max_pages)

    async def post_message(self, body: str, thread_id: str | None = None) -> Receipt:
        args: dict[str, Any] = {"body": body}
        if thread_id is not None:
            args["thread_id"] = thread_id
        result = await self.call("post_message", **args)
        return await self._receipt(result, body, False, thread_id)

    async def send_targeted_message(self, body: str, target_names: list[str] | None = None,
                                    target_roles: list[str] | None = None,
                                    thread_id: str | None = None) -> Receipt:
        args: dict[str, Any] = {"body": body, "target_names": target_names or [],
                                "target_roles": target_roles or []}
        if thread_id is not None:
            args["thread_id"] = thread_id
        result = await self.call("send_targeted_message", **args)
        statuses = result.get("target_statuses") or {}
        addressed = any(s != "not_permitted" for s in statuses.values()) if statuses else True
        return await self._receipt(result, body, addressed, thread_id)

    async def read_context(self, limit: int = 50) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("read_context", limit=limit)
        self.stale = False
        return result

    async def refusals(self, receipt: Receipt, limit: int = 50) -> list[dict[str, Any]]:
        """The refusals posted in reply to `receipt`, read back from the room: on Switch they reach
        the sender only through its own policy, so an addressed-only stream may never show them."""
        context = await self.call("read_context", limit=limit)
        roots = {receipt.message_id, receipt.thread_id}
        return [reply for thread in context.get("threads") or [] if (thread.get("root") or {}).get("id") in roots
                for reply in thread.get("replies") or [] if refuses(reply, receipt, thread["root"]["id"])]

    async def capabilities(self) -> Capabilities:
        """What this server offers (approval cards, room links), from its operation catalogue."""
        return Capabilities.from_catalogue(await self.transport.operations())

    async def request_approval(self, request_id: str, title: str, options: list[dict[str, str]],
                               expires_at: float, responders: list[str]) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("request_approval", request_id=request_id, title=title,
                                                 options=options, expires_at=expires_at, responders=responders)
        return result
