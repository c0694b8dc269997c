"""The Matrix bridge in plain bot-account mode: one Matrix account and one signoff user relay a
signoff room and a Matrix room both ways.

Matrix -> signoff: each text message is handed to the rooms server with the Matrix id of who typed
it (`relay`). The server decides who that is: a person who claimed the Matrix account (see
signoff.rooms.domain.claims) speaks as their own signoff user; anyone else is an outsider, posted as the
bridge's user as `<matrix id without @>: <text>`. Mentions are resolved by the server under the
agent's addressing policy (the bridge never decides who may address whom), and a refusal the
server writes comes back to Matrix like any other message. signoff -> Matrix: each message is sent
with its server-assigned id in the event (`org.signoff.message_id`) and that id as the Matrix
transaction id, so a resend after a crash is the same Matrix event, not a second one.

Approval cards of the signoff room are shown in Matrix; a reply (`yes` / `no <reason>`) or a
reaction to one is passed to the server as that Matrix account's answer, bound to the Matrix event
that gave it. Claim codes arrive in direct messages to the bot.

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
from mautrix.types import (
    EventID,
    EventType,
    Filter,
    FilterID,
    PaginationDirection,
    RoomEventFilter,
    RoomFilter,
    RoomID,
    SyncToken,
)

from signoff.bridges.matrix.cards import (
    CARD_KEY,
    Choice,
    card_text,
    closed_text,
    outcome_text,
    reaction_choice,
    reply_choice,
)
from signoff.bridges.matrix.inbound import Edit, Reaction, Redaction, Relay, Skip, classify
from signoff.bridges.matrix.puppets import Puppets
from signoff.bridges.matrix.pushes import NotReady
from signoff.bridges.matrix.state import BridgeState, BridgeStore
from signoff.kernel.errors import RefusedError, SignoffError, Unauthenticated, UnavailableError, UsageError
from signoff.kernel.ids import is_id
from signoff.ledger import NewEvent
from signoff.rooms.client import RoomsUserClient
from signoff.rooms.domain.claims import outsider_text

log = logging.getLogger("signoff.bridge.matrix")
PAGE = 1000
DIRECT_PAGE = 50  # a new direct-message room's history read when the bot joins it
MESSAGE_ID_KEY = "org.signoff.message_id"
SENDER_KEY = "org.signoff.sender"
_TXN_UNSAFE = re.compile(r"[^A-Za-z0-9._~-]")


def _txn(kind: str, key: str) -> str:
    return f"signoff-{kind}-{_TXN_UNSAFE.sub('_', key)}"


def _card_id(card: dict[str, Any]) -> str:
    """The id a card is answered by: its server-wide card id (servers without one: its request id).
    The bridge's records name cards by it (their `request_id` field, as before ids were scoped)."""
    return str(card.get("card_id") or card["request_id"])


def _refusal(exc: SignoffError) -> bool:
    """A refusal of one relay (not a member, not claimed, a bad code), as opposed to a bridge
    whose own credential no longer works (that stops it)."""
    return isinstance(exc, RefusedError | UsageError) and not isinstance(exc, Unauthenticated)


class MatrixBridge:
    def __init__(self, rooms: RoomsUserClient, store: BridgeStore, matrix: ClientAPI, signoff_room: str,
                 matrix_room: str, puppets: Puppets | None = None) -> None:
        """`matrix` acts as the bot (in application-service mode, the registration's bot intent);
        with `puppets`, signoff's agents speak in Matrix as puppets of their own."""
        self.rooms = rooms
        self.puppets = puppets
        self.store = store
        self.matrix = matrix
        self.signoff_room = signoff_room
        self.matrix_room = RoomID(matrix_room)
        self.skipped: Counter[str] = Counter()
        self.state = BridgeState()
        self._filter: FilterID | None = None
        self.started = False
        self.failures = 0
        # In application-service mode the homeserver pushes events (receive) while the loop relays
        # signoff's side: one at a time, so that the state folds in order.
        self._turn = asyncio.Lock()
        self._arrived = asyncio.Event()

    # -- start ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Join the Matrix room, load the positions; on a first start, begin where the bot joined
        the Matrix room and at the signoff room's present (older history is not replayed); settle
        relays a crash interrupted."""
        await self.matrix.join_room(self.matrix_room, max_retries=0)  # a refusal is final; outages retry in run()
        if self.puppets is None:
            # Every joined room: the bridged one, and the direct messages that carry claim codes.
            self._filter = await self.matrix.create_filter(Filter(room=RoomFilter(
                timeline=RoomEventFilter(limit=PAGE))))
        self.state = self.store.load()
        if self.state.after is None:
            history = self.rooms.messages(self.signoff_room)
            self._record(NewEvent("signoff.position", {"after": int(history[-1]["sequence"]) if history else 0}))
        if self.state.since is None and self.puppets is None:
            first = await self.matrix.sync(timeout=0, filter_id=self._filter)
            for event in self._since_own_join(self._timeline(first).get("events", [])):
                await self._handle(event)
            await self._direct(first)
            self._record(NewEvent("matrix.position", {"since": str(first["next_batch"])}))
        for event_id, (text, head, sender) in list(self.state.pending.items()):
            await self._settle(event_id, text, head, sender)
        self.started = True

    async def _settle(self, event_id: str, text: str, head: int, sender: str | None) -> None:
        """A relay recorded as pending: adopt the message if the post reached the server before the
        crash, else post it now (so it is neither lost nor doubled)."""
        known = set(self.state.to_signoff.values())
        body = outsider_text(sender, text) if sender else text
        # The accounts a claimed post of this Matrix id could carry (active or since revoked).
        claimed = {str(c["sender"]): str(c["claim_id"]) for c in self.rooms.claims()
                   if c["external_id"] == sender} if sender else {}
        for message in self._messages_after(head):
            if message["message_id"] in known:
                continue
            # Only the bridge's own post (or the claimed person's) is adopted: anyone in the room
            # can post the same text.
            ours = message["sender"] == self.state.own_sender if self.state.own_sender else \
                message["sender_kind"] == "user"
            if (message["body"] == body and ours) or (message["body"] == text and message["sender"] in claimed):
                self._record(NewEvent("relay.done", {
                    "matrix_event_id": event_id, "message_id": message["message_id"], "sender": message["sender"],
                    **({"claim_id": claimed[message["sender"]]} if message["sender"] in claimed else {})}))
                return
        await self._post(event_id, text, sender)

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
        async with self._turn:
            await self.outbound()
        if self.puppets is None:
            async with self._turn:
                await self.inbound(timeout_ms)
        else:  # the homeserver pushes (receive); wait for a push or the time
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), timeout_ms / 1000)
            self._arrived.clear()
        async with self._turn:
            await self.outbound()

    async def receive(self, events: list[Any]) -> None:
        """A transaction the homeserver pushed (application-service mode), handled in order and
        recorded before this returns: only then may the homeserver count it delivered."""
        if not self.started:
            raise NotReady("the bridge has not started")
        async with self._turn:
            for event in events:
                room = event.get("room_id") if isinstance(event, dict) else None
                if room == self.matrix_room:
                    await self._handle(event)
                elif isinstance(room, str) and self._invites_me_to_direct(event):
                    await self._join_direct(room)
                elif isinstance(room, str):
                    await self._direct_message(RoomID(room), event)
                else:
                    self._skip("malformed")
        self._arrived.set()

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
                break
        await self._show_cards()

    async def _send_to_matrix(self, message: dict[str, Any]) -> None:
        # (the transaction id of a message keeps the form earlier versions sent it under)
        txn = "signoff-" + _TXN_UNSAFE.sub("_", str(message["message_id"]))
        ids = {MESSAGE_ID_KEY: message["message_id"], SENDER_KEY: message["sender"]}
        if self.puppets is not None and message["sender_kind"] == "agent":
            puppet = await self.puppets.intent(str(message["sender_name"]), self.matrix_room)
            body = {"msgtype": "m.text", "body": message["body"], **ids}
            await puppet.send_message_event(self.matrix_room, EventType.ROOM_MESSAGE, body,  # type: ignore[arg-type]
                                            txn_id=txn)
            return
        content = {"msgtype": "m.text", "body": f"{message['sender_name']}: {message['body']}", **ids}
        await self._send(self.matrix_room, content, txn)

    async def _show_cards(self) -> None:
        """Show the room's new approval cards in Matrix (a card decided before the bridge saw it
        is passed over: there is nothing left to answer), and say when a shown card was decided
        elsewhere (the web console, the API) or expired."""
        for request_id, card_event in list(self.state.open_cards.items()):
            if not is_id(request_id):  # shown by an earlier version: no client may address it now
                self._record(NewEvent("card.closed", {"request_id": request_id, "outcome": "unaddressable"}))
                continue
            card = self.rooms.approval(request_id)
            if card["state"] != "pending":
                await self._send(self.matrix_room, _reply_notice(card_event, closed_text(card)),
                                 _txn("closed", request_id))
                self._record(NewEvent("card.closed", {"request_id": request_id, "outcome": card["state"]}))
        while True:
            page = self.rooms.room_approvals(self.signoff_room, self.state.cards_after)
            for card in page:
                event_id = None
                # A card whose id is outside the id grammar (stored before the server refused such
                # ids) cannot be addressed safely: it is passed over, to be answered in signoff.
                card_id = _card_id(card)
                if card["state"] == "pending" and is_id(card_id):
                    event_id = await self._send(self.matrix_room, {
                        "msgtype": "m.notice", "body": card_text(card), CARD_KEY: card_id},
                        _txn("card", card_id))
                self._record(NewEvent("card.shown", {"request_id": card_id, "sequence": card["sequence"],
                                                     "matrix_event_id": str(event_id) if event_id else None,
                                                     "digest": card.get("digest")}))
            if len(page) < 100:
                return

    async def inbound(self, timeout_ms: int) -> None:
        since = self.state.since
        body = await self.matrix.sync(since=SyncToken(since) if since else None, timeout=timeout_ms,
                                      filter_id=self._filter)
        timeline = self._timeline(body)
        if timeline.get("limited"):
            self.skipped["gap"] += 1
            log.warning("matrix sync returned a limited timeline: older events of the gap are not relayed")
        for event in timeline.get("events", []):
            await self._handle(event)
        await self._direct(body)
        self._record(NewEvent("matrix.position", {"since": str(body["next_batch"])}))

    async def _handle(self, event: Any) -> None:
        if self.puppets is not None and isinstance(event, dict) and self.puppets.agent_of(event.get("sender")):
            return  # an agent's own message, sent by its puppet
        seen = classify(event, str(self.matrix.mxid))
        if isinstance(seen, Skip):
            self._skip(seen.reason)
        elif isinstance(seen, Edit):
            # An edit never rewrites what was relayed, nor an answer given: it is kept as an observation.
            if seen.event_id not in self.state.edits:
                self._record(NewEvent("edit.observed", {
                    "matrix_event_id": seen.event_id, "replaces": seen.replaces, "sender": seen.sender,
                    "message_id": self.state.to_signoff.get(seen.replaces), "new_body": seen.new_body,
                    "edits_an_answer": seen.replaces in self.state.answers}))
        elif isinstance(seen, Redaction):
            if seen.event_id not in self.state.redactions:
                self._record(NewEvent("redaction.observed", {
                    "matrix_event_id": seen.event_id, "redacts": seen.redacts, "sender": seen.sender,
                    "message_id": self.state.to_signoff.get(seen.redacts),
                    "redacts_an_answer": seen.redacts in self.state.answers}))
        elif isinstance(seen, Reaction):
            request_id = self.state.cards.get(seen.target)
            if request_id is None or not is_id(request_id):
                self._skip("reaction")  # reactions to anything but a card are not relayed
                return
            card = self.rooms.approval(request_id)
            await self._answer(seen.event_id, seen.sender, seen.target, card, reaction_choice(card, seen.key))
        else:
            assert isinstance(seen, Relay)
            request_id = self.state.cards.get(seen.reply_to) if seen.reply_to else None
            if request_id is not None and is_id(request_id):
                card = self.rooms.approval(request_id)
                choice = reply_choice(card, seen.body)
                if choice is not None:
                    await self._answer(seen.event_id, seen.sender, str(seen.reply_to), card, choice)
                    return
            await self._relay(seen)

    def _skip(self, reason: str) -> None:
        if reason not in ("own", "state"):
            self.skipped[reason] += 1
            log.info("skipped a Matrix event (%s); skipped so far: %s", reason, dict(self.skipped))

    async def _relay(self, seen: Relay) -> None:
        if seen.event_id in self.state.to_signoff or seen.event_id in self.state.refused:
            return  # a sync (or push) replayed after a restart
        if seen.event_id in self.state.pending:
            # a round cut by an outage after the relay was recorded: settle it now, not at a restart
            await self._settle(seen.event_id, *self.state.pending[seen.event_id])
            return
        assert self.state.after is not None
        text = self.puppets.addressing(seen.body, seen.mentions) if self.puppets else seen.body
        self._record(NewEvent("relay.pending", {"matrix_event_id": seen.event_id, "body": text,
                                                "sender": seen.sender, "signoff_head": self.state.after}))
        await self._post(seen.event_id, text, seen.sender)

    async def _post(self, event_id: str, text: str, sender: str | None) -> None:
        try:
            done = self._post_to_signoff(event_id, text, sender)
        except (RefusedError, UsageError) as exc:
            if not _refusal(exc):
                raise
            # e.g. a claimed person who is not a member of the signoff room: said in Matrix, kept.
            self._record(NewEvent("relay.refused", {"matrix_event_id": event_id, "detail": exc.message}))
            await self._send(self.matrix_room, _reply_notice(event_id, f"not relayed: {exc.message}"),
                             _txn("refused", event_id))
            return
        self._record(NewEvent("relay.done", done))

    def _post_to_signoff(self, event_id: str, text: str, sender: str | None) -> dict[str, Any]:
        if sender is None:  # a pending record written before identity claims: text is the whole body
            receipt = self.rooms.post(self.signoff_room, text)
            [posted] = self._messages_after(int(receipt["sequence"]) - 1)[:1]
            return {"matrix_event_id": event_id, "message_id": receipt["event_id"], "sender": posted["sender"]}
        relayed = self.rooms.relay(self.signoff_room, sender, text)
        claim = relayed.get("claim")
        return {"matrix_event_id": event_id, "message_id": relayed["event_id"], "sender": relayed["sender"],
                **({"claim_id": claim["claim_id"]} if claim else {})}

    async def _answer(self, event_id: str, sender: str, card_event: str, card: dict[str, Any],
                      choice: Choice | None) -> None:
        """Pass a reply or reaction to a card on as `sender`'s answer, bound to `event_id`, and say
        in Matrix what came of it (a wrong responder is ignored visibly)."""
        if event_id in self.state.answers:
            return  # a sync replayed after a restart
        if choice is None:
            self._skip("reaction")  # a reaction that is no answer
            return
        evidence = {"matrix_event_id": event_id, "matrix_room": str(self.matrix_room), "reason": choice.reason}
        # The digest of the card as it was shown in this Matrix event: the server refuses the
        # answer unless it is the card's own (so a "yes" can only answer what it replied to).
        shown = self.state.shown.get(card_event, "")
        try:
            outcome = self.rooms.relay_answer(_card_id(card), sender, choice.option_id, shown, evidence)
            said = outcome_text(outcome, sender, event_id)
        except (RefusedError, UsageError) as exc:
            if not _refusal(exc):
                raise
            outcome, said = {"outcome": "refused", "detail": exc.message}, f"ignored: {exc.message}"
        # Said before it is recorded: after a crash in between, the same transaction id makes the
        # notice one event, and the server decides the same answer once.
        await self._send(self.matrix_room, _reply_notice(card_event, said), _txn("answer", event_id))
        self._record(NewEvent("answer.relayed", {"matrix_event_id": event_id, "request_id": _card_id(card),
                                                 "sender": sender, "option_id": choice.option_id,
                                                 "outcome": outcome.get("outcome")}))

    # -- direct messages: claim codes --------------------------------------------------------------

    async def _direct(self, body: dict[str, Any]) -> None:
        rooms = body.get("rooms", {}) if isinstance(body.get("rooms"), dict) else {}
        for room_id, invited in (rooms.get("invite") or {}).items():
            events = invited.get("invite_state", {}).get("events", []) if isinstance(invited, dict) else []
            if room_id != self.matrix_room and isinstance(events, list) \
                    and any(self._invites_me_to_direct(e) for e in events):
                await self._join_direct(room_id)
        for room_id, room in (rooms.get("join") or {}).items():
            if room_id == self.matrix_room or not isinstance(room, dict):
                continue
            timeline: Any = room.get("timeline")
            events = timeline.get("events") if isinstance(timeline, dict) else None
            for event in events if isinstance(events, list) else []:
                await self._direct_message(RoomID(room_id), event)

    def _invites_me_to_direct(self, e: Any) -> bool:
        return (isinstance(e, dict) and e.get("type") == "m.room.member" and e.get("state_key") == str(self.matrix.mxid)
                and isinstance(e.get("content"), dict) and e["content"].get("membership") == "invite"
                and e["content"].get("is_direct") is True)

    async def _join_direct(self, room_id: str) -> None:
        try:
            await self.matrix.join_room(RoomID(room_id), max_retries=0)
        except MatrixRequestError as exc:
            if exc.http_status >= 500:
                raise
            self._skip("invite_refused")
            return
        if self.puppets is not None:
            # The homeserver pushed nothing said before the bot joined (people send the code right
            # after inviting): read what is there. Handling a message twice is harmless.
            said = await self.matrix.get_messages(RoomID(room_id), PaginationDirection.BACKWARD, limit=DIRECT_PAGE)
            for event in reversed(said.events):  # type: ignore[attr-defined]  # (a NamedTuple mypy cannot read)
                await self._direct_message(RoomID(room_id), event.serialize())

    async def _direct_message(self, room_id: RoomID, event: Any) -> None:
        """`claim <code>` in a direct message: the rooms server decides (the code is bound to the
        Matrix account that sends it); the answer goes back in the same room. The code is never
        logged."""
        seen = classify(event, str(self.matrix.mxid))
        if not isinstance(seen, Relay):
            return
        words = seen.body.split()
        if len(words) != 2 or words[0].lower() != "claim":
            self._skip("direct_other")
            return
        try:
            claim = self.rooms.redeem_claim(words[1], seen.sender)
            said = (f"claimed: {seen.sender} now speaks as {claim['user_name']} in signoff "
                    f"(claim {claim['claim_id']}; revoke it with `signoff bridge matrix revoke {claim['claim_id']}`)")
        except (RefusedError, UsageError) as exc:
            if not _refusal(exc):
                raise
            said = f"refused: {exc.message}" + (f"\nfix: {exc.fix}" if exc.fix else "")
        await self._send(room_id, {"msgtype": "m.notice", "body": said}, _txn("claim", seen.event_id))

    # -- helpers ---------------------------------------------------------------------------------

    async def _send(self, room: RoomID, content: dict[str, Any], txn: str) -> EventID | None:
        """Send with a transaction id of our own (a resend is the same event). Only the bridged
        room's refusals stop the bridge; a direct-message room the person left is skipped."""
        try:
            return await self.matrix.send_message_event(room, EventType.ROOM_MESSAGE, content,  # type: ignore[arg-type]
                                                        txn_id=txn)
        except MatrixRequestError as exc:
            if room == self.matrix_room or exc.http_status >= 500:
                raise
            self._skip("send_refused")
            return None

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

    def _messages_after(self, after: int) -> list[dict[str, Any]]:
        return self.rooms.transport.messages_page(self.signoff_room, after, PAGE)

    def _record(self, event: NewEvent) -> None:
        self.store.record(self.state, event)


def _reply_notice(to: str, text: str) -> dict[str, Any]:
    return {"msgtype": "m.notice", "body": text, "m.relates_to": {"m.in_reply_to": {"event_id": to}}}
