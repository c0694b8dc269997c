"""The agent runtime (`AgentLoop`) on the embedded server, in process: a durable inbox and cursor
across restarts, at-most-once keyed sends, serial sends, receipt-checked hand-offs, one writer
per agent, and its connection state."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UnavailableError, UsageError
from signoff.rooms.client import AgentLoop, AgentStore, InProcessTransport, Undecided, agent_case, event_key, ref_tag
from signoff.rooms.client._agent_loop import is_transient
from signoff.rooms.client._http import error_from_response
from signoff.rooms.protocol.wire import NotConnected
from tests.support.fixtures.rooms import World


class Crash(Exception):
    """Stands for the process dying inside a handler (not a SignoffError: the loop stops)."""


def _addressed(env: dict[str, Any]) -> bool:
    return env.get("type") == "message" and bool((env.get("payload") or {}).get("addressed"))


class Recorder:
    """A handler that notes every addressed message body it is handed, optionally failing."""

    def __init__(self, crash_on: str | None = None, refuse_on: str | None = None) -> None:
        self.bodies: list[str] = []
        self.crash_on, self.refuse_on = crash_on, refuse_on

    async def __call__(self, agent: AgentLoop, env: dict[str, Any]) -> None:
        if not _addressed(env):
            return
        body = str(env["payload"]["body"])
        self.bodies.append(body)
        if self.crash_on and self.crash_on in body:
            raise Crash(body)
        if self.refuse_on and self.refuse_on in body:
            raise RefusedError("not for me", "ask someone else")


def _loop(world: World, handler: Any, rooms: list[str] | None = None) -> AgentLoop:
    return AgentLoop(InProcessTransport(world.service, world.reviewer_key), world.service.ledger,
                     [world.room_id] if rooms is None else rooms, handler, agent_name="reviewer",
                     heartbeat_interval=0.05)


def _ask(world: World, text: str, room_id: str | None = None) -> str:
    return world.service.post_message(world.alice, room_id or world.room_id, text,
                                      target_names=["reviewer"]).message_id


async def _until(check: Any, timeout: float = 20.0) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


def test_a_restart_hands_over_what_arrived_meanwhile_once_and_nothing_twice(world: World) -> None:
    first, second = Recorder(), Recorder()

    async def scenario() -> None:
        async with _loop(world, first) as agent:
            for i in range(3):
                _ask(world, f"one {i}")
            await agent.run(until=lambda: len(first.bodies) == 3)
        for i in range(2):  # while no process runs
            _ask(world, f"two {i}")
        async with _loop(world, second) as agent:
            await agent.run(until=lambda: len(second.bodies) == 2)
            _ask(world, "three")
            await agent.run(until=lambda: len(second.bodies) == 3)

    asyncio.run(scenario())
    assert first.bodies == [f"@reviewer one {i}" for i in range(3)]
    assert second.bodies == ["@reviewer two 0", "@reviewer two 1", "@reviewer three"]


def test_a_restart_before_any_event_resumes_where_the_first_stream_started(world: World) -> None:
    later = Recorder()

    async def scenario() -> None:
        async with _loop(world, Recorder()):
            pass  # opened, then gone before anything arrived
        _ask(world, "while down")
        async with _loop(world, later) as agent:
            await agent.run(until=lambda: len(later.bodies) == 1)

    asyncio.run(scenario())
    assert later.bodies == ["@reviewer while down"]


def test_an_event_whose_handler_died_is_handed_over_again_and_then_never(world: World) -> None:
    dying, after = Recorder(crash_on="boom"), Recorder()

    async def scenario() -> None:
        async with _loop(world, dying) as agent:
            _ask(world, "fine")
            _ask(world, "boom")
            _ask(world, "queued")
            with pytest.raises(Crash):
                await agent.run()
        async with _loop(world, after) as agent:
            assert [env["payload"]["body"] for _, env in agent.store.state.pending.values()] == ["@reviewer boom"]
            await agent.run(until=lambda: len(after.bodies) == 2)

    asyncio.run(scenario())
    assert dying.bodies == ["@reviewer fine", "@reviewer boom"]
    assert after.bodies == ["@reviewer boom", "@reviewer queued"]


def test_a_refusing_handler_has_handled_its_event(world: World) -> None:
    refusing, after = Recorder(refuse_on="no"), Recorder()

    async def scenario() -> None:
        async with _loop(world, refusing) as agent:
            no = _ask(world, "no thanks")
            await agent.run(until=lambda: len(refusing.bodies) == 1)
            assert agent.store.state.handled[f"message:{no}"] == "not for me"
        _ask(world, "next")
        async with _loop(world, after) as agent:
            await agent.run(until=lambda: len(after.bodies) == 1)

    asyncio.run(scenario())
    assert after.bodies == ["@reviewer next"]


def test_a_keyed_send_posts_once_even_when_the_process_died_before_recording_it(world: World) -> None:
    s = world.service

    async def scenario() -> None:
        async with _loop(world, Recorder()) as agent:
            a = await agent.send(world.room_id, "hello", key="greet")
            again = await agent.send(world.room_id, "hello", key="greet")
            assert again == a and a.body.endswith(ref_tag("greet"))
            # The server took this one, but the process died before the receipt was recorded.
            agent.store.begin_send("reply")
            lost = await agent.clients[world.room_id].send_targeted_message(
                f"done {ref_tag('reply')}", ["fixer"])
        async with _loop(world, Recorder()) as agent:
            found = await agent.send(world.room_id, "done", key="reply", targets=["fixer"])
            assert (found.message_id, found.sender, found.body) == (lost.message_id, lost.sender, lost.body)

    asyncio.run(scenario())
    bodies = [m["body"] for m in s.read_messages(world.reviewer, world.room_id, after=0, limit=100)]
    assert sum(ref_tag("greet") in b for b in bodies) == 1
    assert sum(ref_tag("reply") in b for b in bodies) == 1


def test_a_restart_records_the_receipt_of_a_send_the_dead_process_posted(world: World) -> None:
    # Killed after the server took the hand-off, before its receipt was written: receivers check
    # hand-offs against receipts, so the next start records it without the send being repeated.
    async def scenario() -> None:
        async with _loop(world, Recorder()) as agent:
            await agent.send(world.room_id, "first", key="warmup")  # teaches the loop its sender id
            agent.store.begin_send("handoff", world.room_id, True, None)
            lost = await agent.clients[world.room_id].send_targeted_message(
                f"start_fix {ref_tag('handoff')}", ["fixer"])
        async with _loop(world, Recorder()) as agent:
            receipt = agent.store.state.sent["handoff"]
            assert (receipt.message_id, receipt.sender, receipt.body, receipt.addressed) == (
                lost.message_id, lost.sender, lost.body, True)
        assert AgentStore(world.service.ledger, agent_case(world.reviewer.id)).state.sent["handoff"] == receipt

    asyncio.run(scenario())
    bodies = [m["body"] for m in world.service.read_messages(world.reviewer, world.room_id, after=0, limit=100)]
    assert sum(ref_tag("handoff") in b for b in bodies) == 1


def test_a_restart_does_not_take_someone_elses_copy_of_our_tag_for_a_receipt(world: World) -> None:
    async def scenario() -> None:
        async with _loop(world, Recorder()) as agent:
            await agent.send(world.room_id, "first", key="warmup")
            agent.store.begin_send("handoff", world.room_id, True, None)
        world.service.post_message(world.bob, world.room_id, f"@fixer start_fix {ref_tag('handoff')}")
        async with _loop(world, Recorder()) as agent:
            assert "handoff" not in agent.store.state.sent

    asyncio.run(scenario())


def test_someone_else_posting_our_tag_does_not_stand_for_our_send(world: World) -> None:
    async def scenario() -> None:
        async with _loop(world, Recorder()) as agent:
            await agent.send(world.room_id, "first", key="warmup")  # teaches the loop its sender id
            agent.store.begin_send("decision")
        # Mallory-in-the-room (bob) copies the tag, hoping the repeat is suppressed.
        world.service.post_message(world.bob, world.room_id, f"@reviewer done {ref_tag('decision')}")
        async with _loop(world, Recorder()) as agent:
            receipt = await agent.send(world.room_id, "done", key="decision")
            assert receipt.sender != world.bob.sender

    asyncio.run(scenario())
    ours = [m for m in world.service.read_messages(world.reviewer, world.room_id, after=0, limit=100)
            if ref_tag("decision") in m["body"] and m["sender"] == world.reviewer.sender]
    assert len(ours) == 1


def test_sends_of_one_agent_are_serial(world: World) -> None:
    async def scenario() -> list[str]:
        async with _loop(world, Recorder()) as agent:
            receipts = await asyncio.gather(*(agent.send(world.room_id, f"n{i}", key=f"n{i}") for i in range(8)))
        return [r.message_id for r in receipts]

    ids = asyncio.run(scenario())
    order = [m["message_id"] for m in world.service.read_messages(world.reviewer, world.room_id, after=0, limit=100)]
    assert [i for i in order if i in ids] == ids  # the room holds them in the order they were asked for


def test_only_the_exact_recorded_message_is_a_handoff(world: World) -> None:
    seen: list[dict[str, Any]] = []

    async def keep(agent: AgentLoop, env: dict[str, Any]) -> None:
        if _addressed(env):
            seen.append(env)

    async def scenario() -> Any:
        sender = AgentLoop(InProcessTransport(world.service, world.fixer_key), world.service.ledger,
                           [world.room_id], keep, agent_name="fixer")
        async with sender, _loop(world, keep) as receiver:
            receipt = await sender.send(world.room_id, '{"action": "review"}', key="h1", targets=["reviewer"])
            # bob copies the exact text, mention included
            world.service.post_message(world.bob, world.room_id, receipt.body, target_names=["reviewer"])
            await receiver.run(until=lambda: len(seen) == 2)
        return receipt

    receipt = asyncio.run(scenario())
    genuine, copied = seen
    assert AgentLoop.is_handoff(genuine, receipt)
    assert not AgentLoop.is_handoff(copied, receipt)
    assert not AgentLoop.is_handoff({**genuine, "room_id": "elsewhere"}, receipt)


def test_two_processes_for_one_agent_do_not_interleave_their_records(world: World) -> None:
    other = AgentStore(world.service.ledger, agent_case(world.reviewer.id))
    mine = AgentStore(world.service.ledger, agent_case(world.reviewer.id))
    mine.begin_send("a")
    with pytest.raises(ConflictError):
        other.begin_send("b")


def test_events_of_several_rooms_and_the_connection_state(world: World) -> None:
    second = world.service.create_room(world.alice, "case-2", agent_names=["fixer", "reviewer"],
                                       user_names=["alice"]).id
    recorder = Recorder()

    async def scenario() -> dict[str, Any]:
        async with _loop(world, recorder, [world.room_id, second]) as agent:
            _ask(world, "in one")
            _ask(world, "in two", second)
            await agent.run(until=lambda: len(recorder.bodies) == 2)
            await _until(lambda: all(s["beats"] >= 1 for s in agent.status().values()))
            return agent.status()

    status = asyncio.run(scenario())
    assert sorted(recorder.bodies) == ["@reviewer in one", "@reviewer in two"]
    assert set(status) == {world.room_id, second}
    assert all(s["connected"] and s["last_beat"] is not None and s["saved_cursor"] for s in status.values())


def test_bad_use_is_refused_clearly(world: World) -> None:
    with pytest.raises(UsageError):
        _loop(world, Recorder(), [])

    async def scenario() -> None:
        with pytest.raises(NotFoundError):
            await _loop(world, Recorder(), ["not-a-room"]).start()  # at once, not a stream that never opens
        async with _loop(world, Recorder()) as agent:
            with pytest.raises(UsageError):
                await agent.send("not-a-room-of-ours", "hi")

    asyncio.run(scenario())
    with pytest.raises(UsageError):
        _loop(world, Recorder()).blocking(asyncio.sleep(0))


def test_the_same_message_has_one_key_whoever_it_is_delivered_to() -> None:
    env = {"type": "message", "room_id": "r", "payload": {"message_id": "m1", "addressed": True, "body": "x"}}
    assert event_key(env) == event_key({**env, "payload": {**env["payload"], "addressed": False}}) == "message:m1"
    card = {"type": "approval_outcome", "room_id": "r", "payload": {"request_id": "q", "addressed": True}}
    assert event_key(card) == event_key({**card, "payload": {"request_id": "q", "addressed": False}})
    assert event_key(card) != event_key({**card, "payload": {"request_id": "q2"}})


def test_records_from_several_threads_of_one_loop_never_conflict(world: World) -> None:
    # A handler's record and a job's send are written from different worker threads at once.
    from concurrent.futures import ThreadPoolExecutor

    store = AgentStore(world.service.ledger, agent_case(world.reviewer.id))
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(store.begin_send, [f"k{i}" for i in range(40)]))
    assert store.state.sending == {f"k{i}" for i in range(40)}
    assert AgentStore(world.service.ledger, agent_case(world.reviewer.id)).state.sending == store.state.sending


class Flaky:
    """A handler that fails transiently on its first `failures` calls for each message, then works;
    first, when `undecided` is given, it leaves each message undecided that many times."""

    def __init__(self, failures: int, error: Exception, undecided: int = 0) -> None:
        self.failures, self.error, self.undecided = failures, error, undecided
        self.calls: dict[str, int] = {}
        self.done: list[str] = []

    async def __call__(self, agent: AgentLoop, env: dict[str, Any]) -> None:
        if not _addressed(env):
            return
        body = str(env["payload"]["body"])
        self.calls[body] = self.calls.get(body, 0) + 1
        if self.calls[body] <= self.undecided:
            raise Undecided("the sender's receipt is not written yet")
        if self.calls[body] <= self.undecided + self.failures:
            raise self.error
        self.done.append(body)


def _handled(world: World, flaky: Flaky, texts: list[str], attempts: int = 8,
             retry_max: float = 30.0) -> list[str | None]:
    """Ask each text in turn and run the loop (fast backoff) until each is handled; the errors."""

    async def scenario() -> list[str | None]:
        loop = _loop(world, flaky)
        loop.retry_initial, loop.retry_max, loop.retry_attempts = 0.01, retry_max, attempts
        out: list[str | None] = []
        async with loop as agent:
            for text in texts:
                key = f"message:{_ask(world, text)}"
                await agent.run(until=lambda: key in agent.store.state.handled)
                out.append(agent.store.state.handled[key])
            assert agent.retrying == []
        return out

    return asyncio.run(scenario())


@pytest.mark.parametrize("error", [
    ConflictError("POST /ops/post_message (409): connection c1 is not open; reconnect and resume"),
    UnavailableError("POST /ops/post_message (502): bad gateway"),
    NotConnected("connect to a room, then retry"),
    TimeoutError("the server did not answer in time"),
])
def test_a_transient_failure_leaves_the_event_pending_and_it_is_retried_with_backoff(
        world: World, error: Exception) -> None:
    flaky = Flaky(2, error)
    assert _handled(world, flaky, ["review the test"]) == [None]
    assert flaky.calls == {"@reviewer review the test": 3} and flaky.done == ["@reviewer review the test"]


def test_transient_failures_are_retried_a_bounded_number_of_times_then_recorded(world: World) -> None:
    flaky = Flaky(100, ConflictError("connection c1 is not open; reconnect and resume"))
    assert _handled(world, flaky, ["review the test", "and the change"], attempts=4) == [
        "connection c1 is not open; reconnect and resume"] * 2
    assert flaky.calls == {"@reviewer review the test": 4, "@reviewer and the change": 4}


def test_a_bad_request_that_is_not_about_the_connection_is_not_retried(world: World) -> None:
    flaky = Flaky(1, UsageError("POST /ops/post_message (400): body is required", "pass a body"))
    assert _handled(world, flaky, ["review the test"]) == ["POST /ops/post_message (400): body is required"]
    assert flaky.calls == {"@reviewer review the test": 1}


@pytest.mark.parametrize(("status", "detail", "typed"), [
    (400, "Not connected to a room. Call connect_to_room first", True),
    (400, "body is required; Not connected to a room. Call connect_to_room first", False),
    (400, "body is required", False),
    (409, "Not connected to a room. Call connect_to_room first", False),
])
def test_only_switchs_not_connected_answer_is_read_as_not_connected(status: int, detail: str, typed: bool) -> None:
    """Over HTTP the refusal is known by the protocol's words, read once in the transport: a handler's
    retry then rests on the type, and a bad request that merely quotes those words is not retried."""
    request = httpx.Request("POST", "http://switch.test/agents/a1/ops/post_message")
    error = error_from_response(httpx.Response(status, json={"detail": detail}, request=request))
    assert isinstance(error, NotConnected) is typed
    assert is_transient(error) is (typed or status == 409)


def test_the_rooms_server_refuses_an_operation_without_a_connection_as_not_connected(world: World) -> None:
    """The embedded server raises the type itself: no words are read on the in-process transport."""
    async def scenario() -> None:
        transport = InProcessTransport(world.service, world.fixer_key)
        with pytest.raises(NotConnected):
            await transport.call("post_message", {"body": "hi"}, None)

    asyncio.run(scenario())


def test_an_undecided_event_is_handed_over_again_beyond_the_bound_with_capped_backoff(world: World) -> None:
    # Undecided twelve times (uncapped, the last backoff alone would be 0.01 * 2**11 = 20 s), then
    # done: none of those hand-overs counts against the four attempts a transient failure gets.
    flaky = Flaky(0, UnavailableError("unused"), undecided=12)
    assert _handled(world, flaky, ["review the test"], attempts=4, retry_max=0.05) == [None]
    assert flaky.calls == {"@reviewer review the test": 13} and flaky.done == ["@reviewer review the test"]


def test_after_being_undecided_other_transient_failures_still_stop_at_the_bound(world: World) -> None:
    flaky = Flaky(100, ConflictError("connection c1 is not open; reconnect and resume"), undecided=6)
    assert _handled(world, flaky, ["review the test"], attempts=3, retry_max=0.05) == [
        "connection c1 is not open; reconnect and resume"]
    assert flaky.calls == {"@reviewer review the test": 6 + 3} and flaky.done == []


def test_a_connection_whose_room_was_taken_over_claims_it_again_and_acts(world: World) -> None:
    """Another connection of the same agent (a one-off command run as it) takes its room over; the
    running client's next operation is answered "Not connected to a room" (Switch's words too), and
    the client claims the room again and acts, instead of failing until restarted."""
    from signoff.rooms.client import RoomsClient

    async def scenario() -> str:
        transport = InProcessTransport(world.service, world.reviewer_key)
        async with RoomsClient(transport) as running:
            await running.connect_to_room(world.room_id)
            # The one-off command takes the slot over, does its work and ends, as `rooms post --as`
            # does. (Kept open, its own stream would claim the room back whenever it reopened: two
            # live connections of one agent wanting one room take turns, and no retry settles that.)
            async with RoomsClient(transport) as one_off:
                await one_off.connect_to_room(world.room_id)
            receipt = await running.post_message("still here")
            return receipt.message_id

    message_id = asyncio.run(scenario())
    [stored] = [m for m in world.service.read_messages(world.alice, world.room_id, after=0, limit=100)
                if m["message_id"] == message_id]
    assert stored["body"] == "still here" and stored["sender"] == world.reviewer.sender
