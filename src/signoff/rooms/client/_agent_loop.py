"""AgentLoop: one agent's durable event loop over the async `RoomsClient`, in one or more rooms.

The contract:
- One connection per room (a `RoomsClient` each, all as the same agent over one transport); each
  beats on its own, reopens after a drop or an eviction, and `status()` tells how each one is doing.
- Durable state is one ledger case per agent (`agent_case`), written only by this loop: the
  inbox (every event received, with the room's stream position), which of them were handled,
  and the receipt of every keyed send. A second loop for the same agent fails with ConflictError
  on its first write instead of interleaving.
- An event is written to the inbox before its handler runs, and recorded as handled after the
  handler returned; the stream resumes after the last position in the inbox. A process killed at
  any point therefore loses nothing: on restart, every event received but not handled is handed
  over again, oldest first, then the stream resumes where the inbox ends. Each event is handed
  over once per key (a message's server-assigned id) across reconnects, gaps and restarts, except
  one killed mid-handler, which is handed over again: handlers must be idempotent.
- Missed events come back as messages (see `_missed`). A `context_recovered` event (the client's
  re-read of the room after a `gap`: a Switch core restarted, or a cursor expired) is not handed
  to the handler: each message inside it that this agent may have missed (not its own, not from
  before the agent first opened the room) is taken as an ordinary `message` event flagged
  `recovered`, keyed by its message id, so one already received on the stream (or in an earlier
  re-read) is not handed over again, and one taken is not taken again after a restart. `recover`
  re-reads a room on demand (at start-up). A re-read cannot say whether a message was addressed
  to this agent: by default a leading `@name` mention says so; `recovered` lets an agent decide
  with what it knows better (the sender's receipt), or drop an entry.
- Automated notices (an addressing refusal, Switch's "I'm currently offline" reply) are recorded
  as handled without reaching the handler: an agent never answers the server's own notices.
- A handler that fails transiently (`is_transient`: the server's "reconnect" 409, "not connected
  to a room", a 5xx, an unreachable server, a timeout) leaves its event pending: it is handed over
  again after a backoff (`retry_initial`, doubling to `retry_max`), up to `retry_attempts` times in
  all, then recorded as handled with its error. A handler that cannot decide its event yet
  because it waits on something another party will do (e.g. the receipt its sender's loop has not
  written down) raises `Undecided` (an UnavailableError): the event stays pending and is handed
  over again with the same backoff (capped at `retry_max`), with no bound on attempts while it
  says so, and those hand-overs do not count against `retry_attempts`. Any other SignoffError (a
  refusal by policy, a bad request) has handled its event at once (the error is recorded with it);
  any other exception stops the loop with the event still pending. A retry repeats the handler
  from the start, so what it did before failing must be keyed (keyed sends, idempotent effects).
- Sends are serialised per agent. A send with a `key` happens once: its receipt is recorded under
  the key, and a send interrupted between the server's answer and that record is found again in
  the room by the key's tag (`ref_tag`) instead of being posted twice: at the next start (so that
  receivers checking the hand-off find its receipt without waiting for the send to be repeated),
  else when the key is sent again.
- Hand-offs are checked against the sender's receipt with `handoff_matches`: message id,
  addressed flag, room, authenticated sender and exact text must all match.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import ConflictError, SignoffError, UnavailableError, UsageError
from signoff.ledger import NewEvent, SqlLedger
from signoff.rooms.client._client import RoomsClient
from signoff.rooms.client._context import read_room
from signoff.rooms.client._missed import RECOVERED, context_messages, is_automated_notice, missed
from signoff.rooms.client._transport import Transport
from signoff.rooms.domain.receipts import Receipt, handoff_matches
from signoff.rooms.protocol.wire import NotConnected

RECEIVED = "rooms.agent.received"
HANDLED = "rooms.agent.handled"
SENDING = "rooms.agent.sending"
SENT = "rooms.agent.sent"
OPENED = "rooms.agent.opened"

T = TypeVar("T")
Handler = Callable[["AgentLoop", dict[str, Any]], Awaitable[None]]
# Decides what a message found by a re-read stands for: the event to take, or None to leave it.
Recovered = Callable[[str, dict[str, Any]], dict[str, Any] | None]
# A message from up to this long before the agent first opened a room may still be its work (the
# server's clock and ours differ a little); anything older is history, never taken from a re-read.
SINCE_MARGIN_MS = 60_000
NOTICE = "an automated notice of the server: not answered"


def agent_case(agent_id: str) -> str:
    """The ledger case that holds one agent's cursor, inbox and sends."""
    return f"rooms.agent.{agent_id}"


def ref_tag(key: str) -> str:
    """The tag a keyed message carries, by which an interrupted send is found again."""
    return f"[ref {canonical_digest(key)[:10]}]"


class Undecided(UnavailableError):
    """A handler cannot decide its event yet: what it waits on (another party's record, e.g. the
    receipt of a send still in flight) is not there. The loop leaves the event pending and hands it
    over again after a backoff, for as long as the handler says so (`retry_attempts` does not
    bound these hand-overs)."""


def is_transient(exc: BaseException) -> bool:
    """Whether a handler's failure may pass by itself: over the agent protocol a 409 means
    "reconnect" (and a ledger conflict "re-read"), 5xx and transport errors are UnavailableError,
    and a timeout is one; so is Switch's NotConnected (a 400 for an operation on a connection that
    holds no room, after a core restart: it means "connect again"). Any other refusal (401/403) or
    bad request (400) is permanent."""
    return isinstance(exc, ConflictError | UnavailableError | TimeoutError | NotConnected)


def event_key(env: Mapping[str, Any]) -> str:
    """What makes an event the same event across redeliveries: a message's server-assigned id;
    for anything else, its type and payload (without the per-recipient `addressed` flag)."""
    raw = env.get("payload")
    payload: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if env.get("type") == "message" and payload.get("message_id"):
        return f"message:{payload['message_id']}"
    rest = {k: v for k, v in payload.items() if k != "addressed"}
    return f"{env.get('type')}:{env.get('room_id')}:{canonical_digest(rest)[:32]}"


@dataclass
class AgentState:
    """What the ledger case says, folded: positions per room, pending inbox, handled, sends."""

    version: int = 0
    cursors: dict[str, int] = field(default_factory=dict)
    since: dict[str, int] = field(default_factory=dict)  # room -> when (epoch ms) the agent first opened it
    received: set[str] = field(default_factory=set)
    pending: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # key -> (room, event), in order
    handled: dict[str, str | None] = field(default_factory=dict)  # key -> error text, if any
    sending: set[str] = field(default_factory=set)
    sending_to: dict[str, tuple[str, bool, str | None]] = field(default_factory=dict)  # key -> room, addressed, thread
    sent: dict[str, Receipt] = field(default_factory=dict)
    sender: str | None = None  # our own sender id, as the server writes it (from a receipt)


class AgentStore:
    """The agent's ledger case. Single writer: every append expects the version it last saw."""

    def __init__(self, ledger: SqlLedger, case: str) -> None:
        self.ledger, self.case = ledger, case
        # The loop's records come from worker threads (a handler's, a send's): one at a time, so
        # each append expects the version the previous one left.
        self._lock = threading.Lock()
        self.state = self.load()

    def load(self) -> AgentState:
        st = AgentState()
        for ev in self.ledger.read(self.case):
            st.version = ev.version
            p = ev.payload
            if ev.type == RECEIVED:
                st.received.add(p["key"])
                st.pending[p["key"]] = (p["room_id"], p["event"])
                if p.get("position") is not None:
                    st.cursors[p["room_id"]] = int(p["position"])
            elif ev.type == HANDLED:
                st.pending.pop(p["key"], None)
                st.handled[p["key"]] = p.get("error")
            elif ev.type == OPENED:
                st.cursors.setdefault(p["room_id"], int(p["position"]))
                if isinstance(p.get("at"), int):
                    st.since.setdefault(p["room_id"], p["at"])
            elif ev.type == SENDING:
                st.sending.add(p["key"])
                if "room_id" in p:  # records written before sends said where they went have no room
                    st.sending_to[p["key"]] = (p["room_id"], bool(p["addressed"]), p.get("thread_id"))
            elif ev.type == SENT:
                receipt = Receipt.from_dict(p["receipt"])
                st.sent[p["key"]] = receipt
                st.sender = receipt.sender or st.sender
        return st

    @contextlib.contextmanager
    def _append(self, type_: str, payload: dict[str, Any]) -> Iterator[AgentState]:
        """Append one record, then (still holding the lock) let the caller fold it into the state."""
        with self._lock:
            result = self.ledger.append(self.case, self.state.version, [NewEvent(type_, payload)])
            self.state.version = result.version
            yield self.state

    def receive(self, room_id: str, key: str, env: dict[str, Any], position: int | None) -> None:
        with self._append(RECEIVED, {"room_id": room_id, "key": key, "event": env, "position": position}) as st:
            st.received.add(key)
            st.pending[key] = (room_id, env)
            if position is not None:
                st.cursors[room_id] = position

    def opened(self, room_id: str, position: int) -> None:
        """Where a room's first stream started: a restart before any event resumes here, not at the head."""
        at = int(time.time() * 1000)
        with self._append(OPENED, {"room_id": room_id, "position": position, "at": at}) as st:
            st.cursors[room_id] = position
            st.since.setdefault(room_id, at)

    def handle(self, key: str, error: str | None) -> None:
        with self._append(HANDLED, {"key": key, "error": error}) as st:
            st.pending.pop(key, None)
            st.handled[key] = error

    def begin_send(self, key: str, room_id: str | None = None, addressed: bool = False,
                   thread_id: str | None = None) -> None:
        """A keyed send is about to be posted (in `room_id`, when known: a restart then finds it)."""
        where = {} if room_id is None else {"room_id": room_id, "addressed": addressed, "thread_id": thread_id}
        with self._append(SENDING, {"key": key, **where}) as st:
            st.sending.add(key)
            if room_id is not None:
                st.sending_to[key] = (room_id, addressed, thread_id)

    def end_send(self, key: str, receipt: Receipt) -> None:
        with self._append(SENT, {"key": key, "receipt": receipt.to_dict()}) as st:
            st.sent[key] = receipt
            st.sender = receipt.sender or st.sender


class AgentLoop:
    """One agent in `rooms`, handing each event to `handler` once (see the module's contract)."""

    def __init__(self, transport: Transport, ledger: SqlLedger, rooms: Iterable[str], handler: Handler, *,
                 agent_name: str | None = None, case: str | None = None, heartbeat_interval: float = 2.0,
                 backoff_initial: float = 1.0, backoff_max: float = 30.0, retry_initial: float = 1.0,
                 retry_max: float = 30.0, retry_attempts: int = 8, recovered: Recovered | None = None) -> None:
        self.rooms = list(dict.fromkeys(rooms))
        if not self.rooms:
            raise UsageError("an agent loop needs at least one room", "pass the room ids it works in")
        self.transport = transport
        self.agent_id = transport.agent_id
        self.agent_name = agent_name
        self.handler = handler
        self.recovered = recovered
        self.store = AgentStore(ledger, case or agent_case(self.agent_id))
        self.clients = {room: RoomsClient(transport, heartbeat_interval=heartbeat_interval,
                                          backoff_initial=backoff_initial, backoff_max=backoff_max)
                        for room in self.rooms}
        self._send_lock = asyncio.Lock()
        self._arrived: asyncio.Queue[tuple[str, dict[str, Any]] | BaseException] = asyncio.Queue()
        self._pumps: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self.handled_now = 0  # events handed to the handler by this process
        self.retry_initial, self.retry_max, self.retry_attempts = retry_initial, retry_max, retry_attempts
        self.failures: dict[str, int] = {}  # key -> transient failures so far, in this process
        self.deferrals: dict[str, int] = {}  # key -> hand-overs its handler left undecided, in this process
        self._retry_at: dict[str, float] = {}  # key -> when (time.monotonic()) to hand it over again

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> AgentLoop:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self, timeout: float = 30.0) -> None:
        """Open one stream per room, resuming after the inbox's last position in that room."""
        self._loop = asyncio.get_running_loop()
        for room in self.rooms:
            # A room we may not read would only show as a stream that never opens: say so now.
            await self.transport.call("get_room_detail", {"room_id": room}, None)
        try:
            for room, client in self.clients.items():
                client.rooms = [room]
                client.cursor = self.store.state.cursors.get(room)
                await client.start(timeout)
                await client.connect_to_room(room)
                if room not in self.store.state.cursors and client.cursor is not None:
                    await asyncio.to_thread(self.store.opened, room, client.cursor)
            await self._settle_interrupted_sends()
        except BaseException:
            await self.close()
            raise
        self._pumps = [asyncio.create_task(self._pump(room, client)) for room, client in self.clients.items()]

    async def _settle_interrupted_sends(self) -> None:
        """Record the receipt of every keyed send an earlier process posted but was killed before
        writing down. Receivers check hand-offs against these receipts and wait only so long for
        one in flight; the repeat that would find it (the caller sending the key again) may come
        much later, e.g. when a job's lease lapses."""
        for key in sorted(self.store.state.sending - set(self.store.state.sent)):
            where = self.store.state.sending_to.get(key)
            if where is None or where[0] not in self.clients:
                continue
            room_id, addressed, thread_id = where
            found = await self._find_own(self.clients[room_id], room_id, ref_tag(key), addressed, thread_id)
            if found is not None:
                await asyncio.to_thread(self.store.end_send, key, found)

    async def close(self) -> None:
        for task in self._pumps:
            task.cancel()
        for task in self._pumps:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._pumps = []
        for client in self.clients.values():
            await client.close()

    async def _pump(self, room: str, client: RoomsClient) -> None:
        try:
            async for env in client.events():
                await self._arrived.put((room, env))
        except BaseException as exc:  # a fatal stream error reaches whoever runs the loop
            if not isinstance(exc, asyncio.CancelledError):
                await self._arrived.put(exc)
            raise

    # -- handling -------------------------------------------------------------------------------

    async def _handle(self, key: str, room: str, env: dict[str, Any]) -> None:
        self._retry_at.pop(key, None)
        if is_automated_notice(env):
            await asyncio.to_thread(self.store.handle, key, NOTICE)
            return
        try:
            if env.get("type") == RECOVERED:
                # The client's re-read is one page; a longer gap is read back whole.
                context = (env.get("payload") or {}).get("context") or {}
                found = await read_room(self._client(room).call) if context.get("truncated") \
                    else context_messages(env)
                await self._take_missed(room, found)
            else:
                await self.handler(self, env)
        except SignoffError as exc:
            if self._retry_later(key, exc):
                return
            await asyncio.to_thread(self.store.handle, key, exc.message)
        except TimeoutError as exc:
            if self._retry_later(key, exc):
                return
            await asyncio.to_thread(self.store.handle, key, f"timed out: {exc!r}")
        else:
            await asyncio.to_thread(self.store.handle, key, None)
        self.failures.pop(key, None)
        self.deferrals.pop(key, None)
        self.handled_now += 1

    def _retry_later(self, key: str, exc: BaseException) -> bool:
        """Schedule another hand-over of a transiently failed (or undecided) event; False when it
        may not retry. Only transient failures count against `retry_attempts`."""
        if not is_transient(exc):
            return False
        if isinstance(exc, Undecided):
            self.deferrals[key] = self.deferrals.get(key, 0) + 1
        else:
            self.failures[key] = self.failures.get(key, 0) + 1
            if self.failures[key] >= self.retry_attempts:
                return False
        tries = self.failures.get(key, 0) + self.deferrals.get(key, 0)
        delay = min(self.retry_initial * 2 ** min(tries - 1, 32), self.retry_max)  # no overflow, however long
        self._retry_at[key] = time.monotonic() + delay
        return True

    def _next_retry(self) -> tuple[str, float] | None:
        """The pending event whose retry comes first, and in how many seconds (<= 0: due)."""
        if not self._retry_at:
            return None
        key = min(self._retry_at, key=self._retry_at.__getitem__)
        return key, self._retry_at[key] - time.monotonic()

    async def _retry_due(self) -> bool:
        """Hand over the first retry that is due; False when none is."""
        nxt = self._next_retry()
        if nxt is None or nxt[1] > 0:
            return False
        key = nxt[0]
        if key not in self.store.state.pending:  # handled meanwhile (e.g. taken again by a re-read)
            self._retry_at.pop(key, None)
            return await self._retry_due()
        room, env = self.store.state.pending[key]
        await self._handle(key, room, env)
        return True

    @property
    def retrying(self) -> list[str]:
        """Keys of events waiting for a retry after a transient failure."""
        return sorted(self._retry_at)

    async def drain_pending(self) -> int:
        """Hand over what an earlier process received but did not finish (except events waiting
        for their retry's backoff); returns how many."""
        pending = [(k, v) for k, v in self.store.state.pending.items() if k not in self._retry_at]
        for key, (room, env) in pending:
            await self._handle(key, room, env)
        return len(pending)

    async def catch_up(self, since_ms: Mapping[str, int | None] | None = None) -> int:
        """What a (re)started agent owes, before it takes new events: what an earlier process
        received but did not finish, then, in each room, every message it may have missed while no
        process of it ran (`recover`; a Switch core that restarted meanwhile never streams them).
        `since_ms` moves a room's start back (see `recover`). Returns how many were handed over."""
        done = await self.drain_pending()
        for room in self.rooms:
            done += await self.recover(room, (since_ms or {}).get(room))
        return done

    async def recover(self, room: str, since_ms: int | None = None) -> int:
        """Re-read `room` and take every message this agent may have missed (see the module's
        contract); returns how many were handed over. `since_ms` (epoch ms) moves the start of
        the agent's work in the room back (e.g. to when a workflow was set up there, before the
        agent first ran); it never moves it forward."""
        return await self._take_missed(room, await read_room(self._client(room).call), since_ms)

    async def _take_missed(self, room: str, found: list[dict[str, Any]], since_ms: int | None = None) -> int:
        since = self.store.state.since.get(room)
        if since_ms is not None:
            since = since_ms if since is None else min(since, since_ms)
        taken = 0
        for env in missed(room, found, self.agent_name, self.store.state.sender,
                          None if since is None else since - SINCE_MARGIN_MS):
            if event_key(env) in self.store.state.received:
                continue
            chosen = env if self.recovered is None else await asyncio.to_thread(self.recovered, room, env)
            if chosen is not None and await self.take(room, chosen):
                taken += 1
        return taken

    async def take(self, room: str, env: dict[str, Any]) -> bool:
        """Hand over an event found outside the stream (a member's re-read of the room after a
        gap or at start-up), once per key like a streamed one; False when it was received already."""
        key = event_key(env)
        if key in self.store.state.received:
            return False
        await asyncio.to_thread(self.store.receive, room, key, env, None)
        await self._handle(key, room, env)
        return True

    async def step(self, timeout: float | None = None) -> bool:
        """Take the next arriving event: record it, hand it over unless already seen. False when
        nothing arrived within `timeout`. A retry that falls due meanwhile is taken first."""
        if await self._retry_due():
            return True
        nxt = self._next_retry()
        wait = timeout if nxt is None else max(nxt[1], 0.0) if timeout is None else min(timeout, max(nxt[1], 0.0))
        try:
            item = await asyncio.wait_for(self._arrived.get(), wait)
        except TimeoutError:
            return await self._retry_due()
        if isinstance(item, BaseException):
            raise item
        room, env = item
        key = event_key(env)
        if key in self.store.state.received:
            return True  # a redelivery (a reconnect, a gap's re-read, a restart)
        position = env.get("sequence")
        await asyncio.to_thread(self.store.receive, room, key, env,
                                int(position) if isinstance(position, int) else None)
        await self._handle(key, room, env)
        return True

    async def run(self, until: Callable[[], bool] | None = None, idle: float | None = None) -> None:
        """Drain the pending inbox, then handle events until `until()` holds (checked after each
        event) or, with `idle`, until nothing arrived for that long."""
        await self.drain_pending()
        while until is None or not until():
            if not await self.step(idle) and idle is not None:
                return

    # -- sending --------------------------------------------------------------------------------

    async def send(self, room_id: str, body: str, *, key: str | None = None, targets: Iterable[str] = (),
                   roles: Iterable[str] = (), thread_id: str | None = None) -> Receipt:
        """Post `body` in `room_id` (addressed to `targets`/`roles` when given). With `key`, at
        most once: the text gets the key's tag, and a repeat returns the first receipt."""
        client = self._client(room_id)
        names, role_names = list(targets), list(roles)
        async with self._send_lock:
            text = body
            if key is not None:
                known = self.store.state.sent.get(key)
                if known is not None:
                    return known
                text = f"{body} {ref_tag(key)}"
                if key in self.store.state.sending:
                    found = await self._find_own(client, room_id, ref_tag(key), bool(names or role_names), thread_id)
                    if found is not None:
                        await asyncio.to_thread(self.store.end_send, key, found)
                        return found
                else:
                    await asyncio.to_thread(self.store.begin_send, key, room_id, bool(names or role_names), thread_id)
            if names or role_names:
                receipt = await client.send_targeted_message(text, names, role_names, thread_id)
            else:
                receipt = await client.post_message(text, thread_id)
            if key is not None:
                await asyncio.to_thread(self.store.end_send, key, receipt)
            return receipt

    async def _find_own(self, client: RoomsClient, room_id: str, tag: str, addressed: bool,
                        thread_id: str | None) -> Receipt | None:
        """Our message carrying `tag`, if an interrupted send reached the server. Ours means our
        sender id once a receipt taught it; before that, our display name (a message someone else
        posts under our name with our tag can at worst suppress our own repeat)."""
        own = self.store.state.sender
        for entry in reversed(await read_room(client.call)):
            if tag not in str(entry.get("body", "")):
                continue
            mine = entry.get("sender") == own if own else (
                self.agent_name is not None and entry.get("sender_name") == self.agent_name)
            if mine:
                return Receipt(str(entry["id"]), room_id, str(entry.get("sender", "")), str(entry["body"]),
                               addressed, thread_id)
        return None

    def _client(self, room_id: str) -> RoomsClient:
        client = self.clients.get(room_id)
        if client is None:
            raise UsageError(f"this agent does not work in room {room_id}", "pass it in the loop's rooms")
        return client

    async def call(self, room_id: str, op: str, /, **args: Any) -> Any:
        """Any other operation, on the connection that holds `room_id`."""
        return await self._client(room_id).call(op, **args)

    # -- hand-offs and state --------------------------------------------------------------------

    @staticmethod
    def is_handoff(env: Mapping[str, Any], receipt: Receipt | Mapping[str, Any]) -> bool:
        """True only for the exact message the sender's receipt records (`handoff_matches`)."""
        return handoff_matches(env, receipt)

    def handled(self, key: str) -> bool:
        return key in self.store.state.handled

    def status(self) -> dict[str, dict[str, Any]]:
        """Per room: whether the stream is open, the cursor, the last heartbeat, reconnects, gaps."""
        return {room: {"connected": c.connected, "cursor": c.cursor, "saved_cursor": self.store.state.cursors.get(room),
                       "last_beat": c.last_beat, "beats": c.beats, "reconnects": c.reconnects, "opened": c.opened,
                       "gaps": len(c.gaps), "evictions": list(c.evictions)} for room, c in self.clients.items()}

    # -- for synchronous code (outbox jobs) in a worker thread ----------------------------------

    def blocking(self, coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        """Run `coro` on the loop's event loop from another thread and wait for it (a job handler
        run with `asyncio.to_thread` posting through this agent)."""
        if self._loop is None:
            coro.close()
            raise UsageError("the agent loop has not started", "start it before calling from a thread")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)
