"""The synchronous face over the event stream, for any server (a Switch core included).

A Switch core answers the protocol's long poll but opens no connection for it, so a synchronous
client that polls has nothing to act on: every room-implicit operation gets 409. This transport
holds each connection's SSE stream open instead, with the async `RoomsClient` (its SSE parser,
heartbeat, resume with Last-Event-ID and gap handling) on an event loop in a background thread,
and `poll` hands over what that stream delivered after the caller's cursor.

History is read with `read_context`, paged by time, which both servers answer (signoff's own
server also pages by sequence, but a Switch core does not).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from signoff.kernel.errors import UnavailableError, UsageError
from signoff.rooms.client._client import CLIENT_NAME, RoomsClient
from signoff.rooms.client._context import read_room
from signoff.rooms.client._http import HttpTransport
from signoff.rooms.client._missed import RECOVERED, context_messages, missed
from signoff.rooms.client._sync import SyncTransport

T = TypeVar("T")


@dataclass
class _Stream:
    client: RoomsClient
    room_id: str
    start: int  # every event after this position is (or will be) in `events`
    epoch: int = 0  # gaps seen: after one, the server numbers events afresh
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (epoch, envelope)
    seen_epoch: int = 0  # the epoch of the caller's last poll
    task: asyncio.Task[None] | None = None
    joined: dict[str, Any] = field(default_factory=dict)  # what connect_to_room answered
    seen: set[str] = field(default_factory=set)  # message ids handed to `events` (streamed or recovered)


def history_message(entry: dict[str, Any], room_id: str) -> dict[str, Any]:
    """A `read_context` entry in the shape of a history message (as `read_messages` gives it)."""
    return {"message_id": entry.get("id"), "room_id": room_id, "sender": entry.get("sender", ""),
            "sender_name": entry.get("sender_name", ""), "body": entry.get("body", ""),
            "thread_id": entry.get("thread_id"), "timestamp": entry.get("timestamp"),
            "attachments": list(entry.get("attachments") or [])}


def joined_as(entries: list[dict[str, Any]], name: str) -> set[str]:
    """The sender ids of the room joins made under `name` (as `read_context` gives them). A join is
    the joining member's own, authenticated event: the one place a Switch core writes a member's
    sender id beside its name. Messages are never read for this (their text is anyone's)."""
    return {str(e["sender"]) for e in entries if e.get("kind") == "room_join"
            and e.get("sender_name") == name and e.get("sender")}


class StreamSyncTransport(SyncTransport):
    """Acts as one agent synchronously, each connection backed by a live SSE stream."""

    def __init__(self, base_url: str, agent_id: str, api_key: str, *, timeout: float = 60.0,
                 client_name: str = CLIENT_NAME, poll_wait: float = 0.5, sender: str | None = None,
                 read_timeout: float = 60.0, http: httpx.AsyncClient | None = None) -> None:
        self.agent_id = agent_id
        self._client_name = client_name
        self._poll_wait = poll_wait  # how long an idle poll waits for an event already on its way
        self._sender = sender
        self._streams: dict[str, _Stream] = {}
        self._changed = threading.Condition()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"rooms-stream-{agent_id[:8]}",
                                        daemon=True)
        self._thread.start()
        # A stream silent for `read_timeout` is dropped and reopened (servers send keep-alives
        # every 15 s; a stream left on a server that went away would otherwise hang).
        self._http = HttpTransport(base_url, agent_id, api_key, timeout=timeout, read_timeout=read_timeout,
                                   client=http)

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        if self._loop.is_closed():
            coro.close()
            raise UsageError("this transport is closed", "make a new one")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # -- the sender id ---------------------------------------------------------------------------

    @property
    def sender(self) -> str:  # type: ignore[override]
        if self._sender is None:
            self._sender = self._learn_sender()
        return self._sender

    def _learn_sender(self, timeout: float = 30.0) -> str:
        """Our own sender id as the server writes it. signoff's server lists it with the room's
        participants; a Switch core does not, but writes it on the room_join the server recorded
        when this agent was added to the room (a join is the joining member's own event, so
        nobody else can write one as us; a display name alone could be anyone's). Right after a
        room is made, a Switch core may not have joined us to its Matrix room yet (read_context
        then answers 400): it is asked again until `timeout`."""
        if not self._streams:
            raise UsageError("this agent's sender id is not known before a connection is open",
                             "open a connection to one of its rooms first")
        deadline = time.monotonic() + timeout
        while True:
            for conn, stream in list(self._streams.items()):
                found = self._senders_in(conn, stream)
                if len(found) == 1:
                    return found.pop()
                if len(found) > 1:
                    raise UnavailableError(f"cannot tell this agent's sender id in room {stream.room_id} "
                                           f"({len(found)} joins under its name)",
                                           "pass sender= (the id the server writes on this agent's messages)")
            if time.monotonic() > deadline:
                raise UnavailableError("this agent's own join is in none of its rooms' context",
                                       "pass sender= (the id the server writes on this agent's messages)")
            time.sleep(0.5)

    def _senders_in(self, connection_id: str, stream: _Stream) -> set[str]:
        own: dict[str, Any] = next((p for p in stream.joined.get("participants") or []
                                    if p.get("id") == self.agent_id), {})
        if own.get("sender"):
            return {str(own["sender"])}
        try:
            entries = self.context(connection_id)
        except UsageError:
            return set()  # not (yet) a member of the room's Matrix room
        return joined_as(entries, str(own.get("name")))

    def context(self, connection_id: str) -> list[dict[str, Any]]:
        """The connection's room as `read_context` gives it (every page), joins included."""
        return list(self._run(read_room(self._stream_call(connection_id))))

    # -- connections -----------------------------------------------------------------------------

    def _stream_call(self, connection_id: str) -> Any:
        async def call(op: str, **args: Any) -> Any:
            return await self._http.call(op, args, connection_id)
        return call

    async def _start(self, connection_id: str, room_id: str, start_from: str) -> _Stream:
        client = RoomsClient(self._http, connection_id=connection_id, start_from=start_from,
                             client_name=self._client_name)
        client.rooms = [room_id]  # claimed at stream open (with takeover), re-claimed after an eviction
        await client.start()
        # From "head": where the server put the connection (its connection_state), not the client's
        # cursor, which the first events may already have moved.
        head = int((client.server or {}).get("cursor") or 0)
        stream = _Stream(client, room_id, int(start_from) if start_from.isdigit() else head)
        stream.task = asyncio.create_task(self._pump(stream))
        return stream

    async def _pump(self, stream: _Stream) -> None:
        async for env in stream.client.events():  # raises what ended the stream for good
            with self._changed:
                if env.get("type") == RECOVERED:
                    stream.epoch += 1  # the server restarted: what follows is numbered afresh
                    stream.start = int((env.get("payload") or {}).get("gap", {}).get("resumed_at") or 0)
                    # What the restart lost comes back as messages, as `AgentLoop` takes them
                    # (`_missed`): handed over by the first poll after the gap (they carry no
                    # stream position), each message once, however it arrived.
                    me = next((str(p.get("name")) for p in stream.joined.get("participants") or []
                               if p.get("id") == self.agent_id), None)
                    for found in missed(stream.room_id, context_messages(env), me, self._sender, None):
                        self._once(stream, found)
                else:
                    self._once(stream, env)
                self._changed.notify_all()

    @staticmethod
    def _once(stream: _Stream, env: dict[str, Any]) -> None:
        message_id = (env.get("payload") or {}).get("message_id") if env.get("type") == "message" else None
        if message_id is not None:
            if message_id in stream.seen:
                return
            stream.seen.add(str(message_id))
        stream.events.append((stream.epoch, env))

    async def _stop(self, stream: _Stream) -> None:
        if stream.task is not None:
            stream.task.cancel()
        await stream.client.close()

    def _open_stream(self, connection_id: str, room_id: str, start_from: str) -> _Stream:
        old = self._streams.pop(connection_id, None)
        if old is not None:
            self._run(self._stop(old))
        stream = self._run(self._start(connection_id, room_id, start_from))
        if old is not None and old.room_id == room_id:
            stream.joined = old.joined
        self._streams[connection_id] = stream
        return stream

    def open(self, connection_id: str, room_id: str) -> None:
        stream = self._streams.get(connection_id)
        if stream is None or stream.room_id != room_id or not stream.client.connected:
            stream = self._open_stream(connection_id, room_id, "head")
        stream.joined = self._run(stream.client.connect_to_room(room_id))

    def poll(self, connection_id: str, room_id: str, after: int) -> list[dict[str, Any]]:
        stream = self._streams.get(connection_id)
        if stream is None or stream.room_id != room_id:
            stream = self._open_stream(connection_id, room_id, str(after))
        elif stream.epoch == stream.seen_epoch and after < stream.start:
            # The caller resumes from before where this stream began: read from there.
            stream = self._open_stream(connection_id, room_id, str(after))
        if stream.task is not None and stream.task.done() and not stream.task.cancelled():
            failed = stream.task.exception()
            if failed is not None:
                raise failed  # the stream ended for good (an incompatible server, a refused key)
        deadline = time.monotonic() + self._poll_wait
        with self._changed:
            while True:
                out = [env for epoch, env in stream.events
                       if epoch > stream.seen_epoch or int(env.get("sequence") or 0) > after]
                left = deadline - time.monotonic()
                if out or left <= 0:
                    break
                self._changed.wait(left)
            # Kept until the caller's cursor passes them (a handler that failed gets them again);
            # what came before the last gap, or is at or before the cursor, is done with.
            stream.events = [(e, env) for e, env in stream.events
                             if e == stream.epoch and int(env.get("sequence") or 0) > after]
            stream.seen_epoch = stream.epoch
        return [env for env in out if env.get("room_id") in (None, room_id)]

    def status(self) -> dict[str, dict[str, Any]]:
        """Per connection: its room, whether its stream is open, how often the server opened it,
        the gaps it reported (a restart), and the stream position."""
        return {conn: {"room_id": s.room_id, "connected": s.client.connected, "opened": s.client.opened,
                       "gaps": list(s.client.gaps), "cursor": s.client.cursor, "reconnects": s.client.reconnects}
                for conn, s in self._streams.items()}

    def call(self, op: str, args: dict[str, Any], connection_id: str) -> Any:
        return self._run(self._http.call(op, args, connection_id or None))

    def history(self, room_id: str) -> list[dict[str, Any]]:
        conn = next((c for c, s in self._streams.items() if s.room_id == room_id), None)
        if conn is None:
            raise UsageError(f"no connection of this agent is open in room {room_id}",
                             "open one first: history is read on the room's connection")
        return [history_message(e, room_id) for e in self._run(read_room(self._stream_call(conn)))
                if e.get("kind", "message") == "message"]

    def history_page(self, room_id: str, after: int, limit: int) -> list[dict[str, Any]]:
        raise UsageError("a stream transport reads history by time, not by sequence", "use history(room_id)")

    def operations(self) -> dict[str, Any]:
        return self._run(self._http.operations())

    def close(self) -> None:
        if self._loop.is_closed():
            return
        for stream in list(self._streams.values()):
            self._run(self._stop(stream), timeout=30.0)
        self._streams = {}
        self._run(self._http.aclose(), timeout=30.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30.0)
        self._loop.close()
