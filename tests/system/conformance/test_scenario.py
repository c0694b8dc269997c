"""One scenario, any Switch-protocol server: signoff's own (CI) or the one SIGNOFF_CONFORMANCE_URL
names (a Switch core, by hand). Everything goes over HTTP through signoff's client, as a workflow
would: registration with the body each server needs, the operator API for policies, SSE with
heartbeats, an agent creating a room, addressed delivery, receipts, a refusing policy, documents,
reconnecting, a restart that loses the server's events (a gap), and receipts in a busy room."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.ledger import SqlLedger
from signoff.rooms import OWNER_ONLY, Receipt, handoff_matches
from signoff.rooms.client import RoomsClient, refused_by, refuses, register_agent
from tests.support.fixtures.conformance import Target


@dataclass
class Pair:
    room_id: str
    fixer: RoomsClient
    reviewer: RoomsClient
    fixer_name: str
    reviewer_name: str


def _client(target: Target, agent_id: str, key: str, **kwargs: Any) -> RoomsClient:
    return RoomsClient(target.transport(agent_id, key), heartbeat_interval=0.5, backoff_initial=0.1,
                       backoff_max=1.0, **kwargs)


@asynccontextmanager
async def pair(target: Target, reviewer_filter: str = "all") -> AsyncIterator[Pair]:
    """Two agents registered over HTTP, opened by the operator, in a room the fixer created."""
    target.step("registration")
    names = target.name("fixer"), target.name("reviewer")
    with target.http() as http:
        fixer_reg, reviewer_reg = [await asyncio.to_thread(register_agent, target.base_url, target.registration_key,
                                                           n, "signoff conformance", http=http) for n in names]
    target.step("policy")
    for reg in (fixer_reg, reviewer_reg):
        await asyncio.to_thread(target.operator.set_policy, reg.agent_id, None)  # open: new agents start owner-only
    fixer = _client(target, fixer_reg.agent_id, fixer_reg.api_key)
    reviewer = _client(target, reviewer_reg.agent_id, reviewer_reg.api_key, filter=reviewer_filter)
    async with fixer, reviewer:
        target.step("create_room")
        room = await fixer.call("create_room", name=target.name("room"), description="conformance",
                                agent_names=list(names))
        await fixer.connect_to_room(room["id"])
        await reviewer.connect_to_room(room["id"])
        yield Pair(room["id"], fixer, reviewer, *names)


async def received(client: RoomsClient, receipt: Receipt, timeout: float = 20.0) -> dict[str, Any]:
    return await client.next_event(lambda e: e.get("type") == "message"
                                   and e["payload"].get("message_id") == receipt.message_id, timeout)


async def post_when_connected(client: RoomsClient, body: str, attempts: int = 3) -> Receipt:
    """Post, and if the server no longer knows this connection (it restarted), wait for the
    client to reopen its stream and post again."""
    for _ in range(attempts - 1):
        opened = client.opened
        try:
            return await client.post_message(body)
        except (ConflictError, NotFoundError):
            await client.wait_opened(opened + 1, 60)
    return await client.post_message(body)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_registration_needs_the_full_body_and_rotates_the_key(target: Target) -> None:
    http = target.http()
    name = target.name("reg")
    bare = http.post(f"{target.base_url}/agents", json={"name": f"{name}-bare", "description": "x"},
                     headers={"Authorization": f"Bearer {target.registration_key}"})
    # signoff takes the bare body; a Switch core answers 422 (connector_type, integration_profile missing).
    assert bare.status_code == 200 if target.kind == "embedded" else bare.status_code in (200, 422)
    first = register_agent(target.base_url, target.registration_key, name, "conformance", http=http)
    again = register_agent(target.base_url, target.registration_key, name, "conformance", overwrite=True, http=http)
    assert again.agent_id == first.agent_id and again.api_key != first.api_key
    old = http.get(f"{target.base_url}/agents/{first.agent_id}/ops",
                    headers={"Authorization": f"Bearer {first.api_key}"})
    assert old.status_code in (401, 403)  # the rotated key stopped working
    with pytest.raises(RefusedError):
        register_agent(target.base_url, "not-a-registration-key", target.name("reg"), http=http)
    http.close()


def test_addressed_delivery_receipts_and_copies(target: Target) -> None:
    async def scenario() -> None:
        async with pair(target, reviewer_filter="addressed") as p:
            assert p.fixer.server is not None and p.fixer.server["heartbeat_interval_seconds"] == 2.0
            target.step("addressed")
            await p.fixer.post_message("chatter, not addressed")
            receipt = await p.fixer.send_targeted_message("patch ready", [p.reviewer_name])
            assert receipt.target_statuses == {p.reviewer_name: "live"}
            assert receipt.body.endswith("patch ready") and receipt.sender
            event = await received(p.reviewer, receipt)
            assert event["payload"]["addressed"] is True
            assert handoff_matches(event, receipt)
            # A copy of the same text, posted by someone else, never matches the receipt.
            copy = await p.reviewer.post_message(receipt.body)
            forged = {**event, "payload": {**event["payload"], "message_id": copy.message_id,
                                           "sender": copy.sender}}
            assert not handoff_matches(forged, receipt)
            # The connection is alive: the server takes a beat with our cursor.
            beat = await p.reviewer.transport.beat(p.reviewer.connection_id, p.reviewer.cursor or 0)
            assert beat["ok"] is True

    run(scenario())


def test_refusing_policy_is_visible_to_the_sender(target: Target) -> None:
    async def scenario() -> None:
        async with pair(target) as p:
            target.step("refusal")
            # Both owner-only again: the reviewer refuses the fixer, and on Switch the refusal then
            # passes through the fixer's own policy too.
            for client in (p.reviewer, p.fixer):
                await asyncio.to_thread(target.operator.set_policy, client.agent_id, OWNER_ONLY)
            receipt = await p.fixer.send_targeted_message("merge this", [p.reviewer_name])
            assert refused_by(receipt) == [p.reviewer_name]
            # The target still sees the message, as unaddressed.
            seen = await received(p.reviewer, receipt)
            assert seen["payload"]["addressed"] is False
            # The sender learns of the refusal: a threaded reply, however the server addresses it.
            refusal = await p.fixer.next_event(lambda e: e.get("type") == "message"
                                               and refuses(e["payload"], receipt), 20)
            assert refusal["payload"]["sender"] != receipt.sender
            if target.kind == "embedded":
                assert refusal["payload"]["addressed"] is True  # signoff addresses it to the sender
            assert [r["id"] for r in await p.fixer.refusals(receipt)] == [refusal["payload"]["message_id"]]

    run(scenario())


def test_documents_have_a_single_writer(target: Target) -> None:
    async def scenario() -> None:
        async with pair(target) as p:
            target.step("documents")
            doc = await p.fixer.call("create_room_document", name="notes", description="d", instructions="i",
                                     content="draft")
            with pytest.raises(UsageError, match="did not create document"):
                await p.reviewer.call("update_room_document", document_id=doc["document_id"], content="x")
            [loaded] = await p.reviewer.call("load_internal_documents", ids=[doc["document_id"]])
            assert loaded["content"] == "draft"

    run(scenario())


def test_reconnect_resumes_without_loss_or_duplicates(target: Target) -> None:
    async def scenario() -> None:
        async with pair(target) as p:
            target.step("reconnect")
            opened = p.reviewer.opened
            p.reviewer.reconnect()
            sent = [await p.fixer.post_message(f"during {i}") for i in range(3)]
            await p.reviewer.wait_opened(opened + 1)
            got = [await received(p.reviewer, r) for r in sent]
            assert [e["payload"]["message_id"] for e in got] == [r.message_id for r in sent]
            ids = [e["sequence"] for e in got]
            assert ids == sorted(set(ids))
            assert p.reviewer.gaps == []

    run(scenario())


def test_restart_that_loses_events_moves_the_cursor_and_recovers_context(target: Target) -> None:
    async def scenario() -> None:
        async with pair(target) as p:
            target.step("before restart")
            first = await p.fixer.post_message("before the mark")
            await received(p.reviewer, first)
            target.mark()
            lost = await p.fixer.post_message("after the mark")  # gone after an embedded restart
            await received(p.reviewer, lost)
            before = p.reviewer.cursor
            assert before is not None
            target.step("restart")
            await asyncio.to_thread(target.restart_losing_events)
            target.step("after restart")
            # A stream may reopen on the old server while it shuts down: what counts is the gap.
            recovered = await p.reviewer.next_event(lambda e: e.get("type") == "context_recovered", 60)
            [gap] = p.reviewer.gaps
            assert gap["resumed_at"] < before
            assert recovered["room_id"] == p.room_id
            ids = [t["root"].get("id") for t in recovered["payload"]["context"]["threads"]]
            assert first.message_id in ids
            # New events are numbered from the server's new head; none is dropped as "already seen".
            new = [await post_when_connected(p.fixer, f"after restart {i}") for i in range(2)]
            got = [await received(p.reviewer, r) for r in new]
            assert [e["payload"]["message_id"] for e in got] == [r.message_id for r in new]
            assert p.reviewer.cursor == got[-1]["sequence"]
            # The heartbeat reports the new cursor, not one beyond the server's head (which it would clamp).
            beat = await p.reviewer.transport.beat(p.reviewer.connection_id, p.reviewer.cursor)
            assert p.reviewer.cursor <= beat["cursor"]

    run(scenario())


def test_receipts_in_a_busy_room(target: Target) -> None:
    async def scenario() -> None:
        async with pair(target) as p:
            target.step("busy room")
            receipt = await p.fixer.send_targeted_message("the one to find", [p.reviewer_name])
            for i in range(120):  # more than two pages of read_context after it
                await p.reviewer.post_message(f"busy {i}")
            found = await p.fixer.find_message(receipt.message_id)
            assert found is not None
            assert (found["sender"], found["body"]) == (receipt.sender, receipt.body)
            event = await received(p.reviewer, receipt)
            assert handoff_matches(event, receipt)

    run(scenario())


def test_capabilities_are_read_from_the_server(target: Target) -> None:
    async def scenario() -> None:
        async with pair(target) as p:
            caps = await p.fixer.capabilities()
            assert caps.missing("connect_to_room", "send_targeted_message", "read_context") == []
            if target.kind == "embedded":
                assert caps.approval_cards and caps.decision_channel == "approval_card"

    run(scenario())


def test_release_note_decisions_on_the_server(target: Target, tmp_path: Path) -> None:
    """Notes' room decisions through the client: the decider is bound by configured sender id (here
    the reviewer agent stands in for a bridged person, as a Switch core without a bridge has no
    people), a command from anyone else is refused, and every command is answered once."""
    from signoff.kernel.settings import Settings
    from signoff.notes.decisions import bound
    from signoff.notes.room import poll_room_client
    from signoff.notes.run import start_run
    from signoff.rooms.client import Identities
    from tests.support.deciding import decisions, notes_of, state_of
    from tests.support.gitrepo import rich_history
    from tests.support.requires import require_binary

    require_binary("git", "apt-get install -y git")
    repo = rich_history(tmp_path / "repo")
    settings = Settings.load(home=str(tmp_path / "home"))
    start_run(repo.path, "v0.1.0..v0.2.0", tmp_path / "run", settings)
    ledger = SqlLedger.open(settings)

    async def scenario() -> None:
        async with pair(target) as p:
            target.step("notes decisions")
            decider = await p.reviewer.post_message("hello")  # learn the stand-in's sender id from a receipt
            identities = Identities.configured({"alice": decider.sender})
            named = bound("approve all", state_of(ledger, tmp_path / "run"))  # as the page or CLI shows it
            approve = await p.reviewer.send_targeted_message(named, [p.fixer_name])
            unknown = await p.reviewer.send_targeted_message("I think approve S2", [p.fixer_name])
            out = await poll_room_client(notes_of(ledger), tmp_path / "run", p.fixer, p.fixer_name, p.room_id,
                                         ["alice"], identities)
            commands = [(o.message_id, o.applied) for o in out if o.sender == decider.sender]
            assert commands == [(approve.message_id, True), (unknown.message_id, False)]
            assert await poll_room_client(notes_of(ledger), tmp_path / "run", p.fixer, p.fixer_name, p.room_id,
                                          ["alice"], identities) == []
            assert [d["ref"]["message_id"] for d in decisions(ledger, tmp_path / "run")] == [approve.message_id]

    try:
        run(scenario())
    finally:
        ledger.close()


def test_notes_agents_hand_work_over_on_the_server(target: Target, tmp_path: Path) -> None:
    """Notes' scout, writer and editor as room agents on the runtime, over HTTP: a stand-in for a
    person (an agent bound by its configured sender id, as bridged people are on Switch) asks the
    scout, and the work moves by four addressed hand-offs, each matching its sender's receipt."""
    from signoff.kernel.settings import Settings
    from signoff.notes.crew import EDITOR, ROLES, SCOUT, WRITER, Crew, NotesAgent, handoffs
    from signoff.notes.run import load_review
    from signoff.rooms.client import AgentLoop, Identities
    from tests.support.gitrepo import rich_history
    from tests.support.requires import require_binary

    require_binary("git", "apt-get install -y git")
    repo = rich_history(tmp_path / "repo")
    settings = Settings.load(home=str(tmp_path / "home"))
    ledger = SqlLedger.open(settings)

    async def scenario() -> None:
        target.step("notes agents")
        names = {role: target.name(role) for role in (*ROLES, "asker")}
        with target.http() as http:
            regs = {role: await asyncio.to_thread(register_agent, target.base_url, target.registration_key,
                                                  name, "signoff conformance", http=http)
                    for role, name in names.items()}
        for reg in regs.values():
            await asyncio.to_thread(target.operator.set_policy, reg.agent_id, None)
        asker = _client(target, regs["asker"].agent_id, regs["asker"].api_key)
        async with asker:
            room = await asker.call("create_room", name=target.name("room"), description="conformance",
                                    agent_names=list(names.values()))
            await asker.connect_to_room(room["id"])
            hello = await asker.post_message("hello")  # learn the stand-in's sender id from a receipt
            people = Identities.configured({"alice": hello.sender})
            crew = Crew({role: names[role] for role in ROLES})
            agents = {role: NotesAgent(role, settings, ledger, room["id"], crew, people, repo.path, script="demo")
                      for role in ROLES}
            loops = [AgentLoop(target.transport(regs[role].agent_id, regs[role].api_key), ledger, [room["id"]],
                               agents[role].handle, agent_name=names[role], heartbeat_interval=0.5)
                     for role in ROLES]
            for loop in loops:
                await loop.start()
            tasks = [asyncio.create_task(loop.run()) for loop in loops]
            try:
                await asker.send_targeted_message("notes v0.1.0..v0.2.0", [names[SCOUT]])

                async def done() -> None:
                    while not agents[EDITOR].done:
                        await asyncio.sleep(0.05)

                await asyncio.wait_for(done(), 120)
            finally:
                for task in tasks:
                    task.cancel()
                for loop in loops:
                    await loop.close()
        run_name = agents[EDITOR].done[0]
        sent = handoffs(ledger, run_name)
        assert [(h["from"], h["to"]) for h in sent] == [(SCOUT, WRITER), (WRITER, EDITOR), (EDITOR, WRITER),
                                                        (WRITER, EDITOR)]
        assert all(h["receipt"]["message_id"] and h["receipt"]["sender"] for h in sent)
        assert [r["round"] for r in load_review(settings.home / "notes" / run_name)["rounds"]] == [0, 1]

    try:
        run(scenario())
    finally:
        ledger.close()
