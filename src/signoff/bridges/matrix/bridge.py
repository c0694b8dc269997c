"""The Matrix bridge in plain bot-account mode: one Matrix account and one signoff user relay a
signoff room and a Matrix room both ways.

Matrix -> signoff: each text message is posted by the bridge's signoff user as
`<matrix id without @>: <text>`, so an `@agent` the person typed is a mention the rooms server
resolves under the agent's addressing policy (the bridge never decides who may address whom), and a
refusal the server writes comes back to Matrix like any other message. signoff -> Matrix: each
message is sent with its server-assigned id in the event (`org.signoff.message_id`) and that id as
the Matrix transaction id, so a resend after a crash is the same Matrix event, not a second one.

Both positions and every relay are recorded in the ledger before they count (see state.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from mautrix.client import ClientAPI
from mautrix.errors import MatrixConnectionError, MatrixRequestError
from mautrix.types import EventType, Filter, FilterID, RoomEventFilter, RoomFilter, RoomID, SyncToken

from signoff.bridges.matrix.inbound import Edit, Relay, Skip, classify
from signoff.bridges.matrix.state import BridgeState, BridgeStore
from signoff.kernel.errors import UnavailableError
from signoff.ledger import NewEvent
from signoff.rooms.client import RoomsUserClient

log = logging.getLogger("signoff.bridge.matrix")
PAGE = 1000
MESSAGE_ID_KEY = "org.signoff.message_id"
SENDER_KEY = "org.signoff.sender"
_TXN_UNSAFE = re.compile(r"[^A-Za-z0-9._~-]")


class MatrixBridge:
    def __init__(self, rooms: RoomsUserClient, store: BridgeStore, matrix: ClientAPI, signoff_room: str,
                 matrix_room: str) -> None:
        self.rooms = rooms
        self.store = store
        self.matrix = matrix
        self.signoff_room = signoff_room
        self.matrix_room = RoomID(matrix_room)
        self.skipped: Counter[str] = Counter()
        self.state = BridgeState()
        self._filter: FilterID | None = None
        self.started = False
        self.failures = 0

    # -- start ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Join the Matrix room, load the positions; on a first start, begin where the bot joined
        the Matrix room and at the signoff room's present (older history is not replayed); settle
        relays a crash interrupted."""
        await self.matrix.join_room(self.matrix_room, max_retries=0)  # a refusal is final; outages retry in run()
        self._filter = await self.matrix.create_filter(Filter(room=RoomFilter(
            rooms=[self.matrix_room], timeline=RoomEventFilter(limit=PAGE))))
        self.state = self.store.load()
        if self.state.after is None:
            history = self.rooms.messages(self.signoff_room)
            self._record(NewEvent("signoff.position", {"after": int(history[-1]["sequence"]) if history else 0}))
        if self.state.since is None:
            first = await self.matrix.sync(timeout=0, filter_id=self._filter)
            for event in self._since_own_join(self._timeline(first).get("events", [])):
                self._handle(event)
            self._record(NewEvent("matrix.position", {"since": str(first["next_batch"])}))
        for event_id, (body, head) in list(self.state.pending.items()):
            self._settle(event_id, body, head)
        self.started = True

    def _settle(self, event_id: str, body: str, head: int) -> None:
        """A relay recorded as pending: adopt the message if the post reached the server before the
        crash, else post it now (so it is neither lost nor doubled)."""
        known = set(self.state.to_signoff.values())
        for message in self._messages_after(head):
            # Only the bridge's own post is adopted: anyone in the room can post the same text.
            ours = message["sender"] == self.state.own_sender if self.state.own_sender else \
                message["sender_kind"] == "user"
            if message["body"] == body and ours and message["message_id"] not in known:
                self._record(NewEvent("relay.done", {"matrix_event_id": event_id, "message_id": message["message_id"],
                                                     "sender": message["sender"]}))
                return
        self._post(event_id, body)

    async def run(self, stop: asyncio.Event, retry_s: float = 2.0) -> None:
        """Start, then step until `stop` is set; an unreachable homeserver or rooms server is
        logged and retried (the positions in the ledger make the retry lose and double nothing)."""
        while not stop.is_set():
            round_ = asyncio.ensure_future(self.attempt(self.start if not self.started else self.step))
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait({round_, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if stopped.done():
                # A stop never waits out a long poll. Cancelling mid-round is safe: a relay to signoff
                # is recorded as pending before it is posted, one to Matrix is resent under the
                # same transaction id.
                round_.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await round_
                return
            stopped.cancel()
            if not round_.result():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), retry_s)

    async def attempt(self, action: Callable[[], Awaitable[None]]) -> bool:
        """Run `start` or `step`; False (logged and counted) when a server could not be reached."""
        try:
            await action()
            return True
        except (MatrixConnectionError, MatrixRequestError, UnavailableError) as exc:
            if isinstance(exc, MatrixRequestError) and exc.http_status < 500 and exc.http_status != 429:
                raise  # a refusal (bad token, not invited) is not an outage: retrying changes nothing
            self.failures += 1
            log.warning("bridge round failed (%s): %s; will retry", type(exc).__name__, exc)
            return False

    # -- one round -----------------------------------------------------------------------------

    async def step(self, timeout_ms: int = 30_000) -> None:
        """Relay what signoff has for Matrix, then wait up to `timeout_ms` for Matrix and relay that."""
        await self.outbound()
        await self.inbound(timeout_ms)
        await self.outbound()

    async def outbound(self) -> None:
        relayed_here = set(self.state.to_signoff.values())
        while True:
            assert self.state.after is not None, "start() first"
            page = self._messages_after(self.state.after)
            for message in page:
                if message["message_id"] not in relayed_here:
                    await self._send_to_matrix(message)
                self._record(NewEvent("signoff.position", {"after": int(message["sequence"])}))
            if len(page) < PAGE:
                return

    async def _send_to_matrix(self, message: dict[str, Any]) -> None:
        content = {"msgtype": "m.text", "body": f"{message['sender_name']}: {message['body']}",
                   MESSAGE_ID_KEY: message["message_id"], SENDER_KEY: message["sender"]}
        txn = "signoff-" + _TXN_UNSAFE.sub("_", str(message["message_id"]))
        await self.matrix.send_message_event(self.matrix_room, EventType.ROOM_MESSAGE, content,  # type: ignore[arg-type]
                                             txn_id=txn)

    async def inbound(self, timeout_ms: int) -> None:
        since = self.state.since
        body = await self.matrix.sync(since=SyncToken(since) if since else None, timeout=timeout_ms,
                                      filter_id=self._filter)
        timeline = self._timeline(body)
        if timeline.get("limited"):
            self.skipped["gap"] += 1
            log.warning("matrix sync returned a limited timeline: older events of the gap are not relayed")
        for event in timeline.get("events", []):
            self._handle(event)
        self._record(NewEvent("matrix.position", {"since": str(body["next_batch"])}))

    def _handle(self, event: Any) -> None:
        seen = classify(event, str(self.matrix.mxid))
        if isinstance(seen, Skip):
            if seen.reason not in ("own", "state"):
                self.skipped[seen.reason] += 1
                log.info("skipped a Matrix event (%s); skipped so far: %s", seen.reason, dict(self.skipped))
            return
        if isinstance(seen, Edit):
            # An edit never rewrites what was relayed (nor anything approved): it is kept as an observation.
            if seen.event_id not in self.state.edits:
                self._record(NewEvent("edit.observed", {
                    "matrix_event_id": seen.event_id, "replaces": seen.replaces, "sender": seen.sender,
                    "message_id": self.state.to_signoff.get(seen.replaces), "new_body": seen.new_body}))
            return
        assert isinstance(seen, Relay)
        if seen.event_id in self.state.to_signoff or seen.event_id in self.state.pending:
            return  # a sync replayed after a restart
        assert self.state.after is not None
        self._record(NewEvent("relay.pending", {"matrix_event_id": seen.event_id, "body": seen.body,
                                                "signoff_head": self.state.after}))
        self._post(seen.event_id, seen.body)

    def _post(self, event_id: str, body: str) -> None:
        receipt = self.rooms.post(self.signoff_room, body)
        done: dict[str, Any] = {"matrix_event_id": event_id, "message_id": receipt["event_id"]}
        if self.state.own_sender is None:  # learnt once, from the first post read back
            [posted] = self._messages_after(int(receipt["sequence"]) - 1)[:1]
            done["sender"] = posted["sender"]
        self._record(NewEvent("relay.done", done))

    def _since_own_join(self, events: list[Any]) -> list[Any]:
        """The events after the bot's own (latest) join: what was said once the bridge was there."""
        me = str(self.matrix.mxid)
        for index in range(len(events) - 1, -1, -1):
            e = events[index]
            if (isinstance(e, dict) and e.get("type") == "m.room.member" and e.get("state_key") == me
                    and isinstance(e.get("content"), dict) and e["content"].get("membership") == "join"):
                return events[index + 1:]
        return []

    def _timeline(self, body: dict[str, Any]) -> dict[str, Any]:
        room = body.get("rooms", {}).get("join", {}).get(self.matrix_room, {})
        timeline = room.get("timeline", {}) if isinstance(room, dict) else {}
        return timeline if isinstance(timeline, dict) else {}

    async def close(self) -> None:
        await self.matrix.api.session.close()

    # -- helpers ---------------------------------------------------------------------------------

    def _messages_after(self, after: int) -> list[dict[str, Any]]:
        return self.rooms.transport.messages_page(self.signoff_room, after, PAGE)

    def _record(self, event: NewEvent) -> None:
        self.store.record(self.state, event)
