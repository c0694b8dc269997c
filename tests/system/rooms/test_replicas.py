"""Three `signoff serve` replicas on one PostgreSQL serve one deployment: a stream on one replica
receives what is posted through another (LISTEN/NOTIFY, not the periodic refresh, which these
replicas run only once an hour), a client moved to another replica resumes from its cursor, a
replica killed mid-stream loses and doubles nothing, and connection state (slots, role leases, the
connection limit) holds across replicas and outlives a killed one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest
from sqlalchemy import select

from signoff.kernel.clock import FixedClock
from signoff.kernel.errors import ConflictError, RefusedError, SignoffError, UsageError
from signoff.kernel.settings import Settings
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from signoff.rooms import RoomService
from signoff.rooms.client import HttpTransport
from signoff.rooms.http.app import create_app
from signoff.rooms.protocol.streams import StreamParams
from signoff.rooms.storage.connections import HEARTBEAT_TTL, MAX_CONNECTIONS, PURGE_AFTER
from signoff.rooms.storage.tables import rooms_connections
from tests.conftest import _fresh_pg_database
from tests.support.fixtures.rooms import World, make_world
from tests.support.serve import Process, serve

HOUR = 3600  # the replicas' housekeeping interval: far longer than any wait in these tests
WAIT = 60.0  # a hang guard only: every wait below ends as soon as its condition holds


@dataclass
class Replica:
    url: str
    process: Process


@dataclass
class Deployment:
    db_url: str
    world: World
    replicas: list[Replica]
    home: Path
    extra: list[Replica] = field(default_factory=list)

    def start_replica(self) -> Replica:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
        config = self.home / "signoff.toml"
        process, url = serve({**env, "SIGNOFF_HOME": str(self.home), "SIGNOFF_DB": self.db_url,
                              "SIGNOFF_CONFIG": str(config)})
        replica = Replica(url, process)
        process.ready(f"{replica.url}/health")
        return replica


@pytest.fixture(scope="module")
def deployment(request: pytest.FixtureRequest, pg_server: str,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    db_url = _fresh_pg_database(request, pg_server)
    ledger = SqlLedger.from_url(db_url)
    world = make_world(RoomService(ledger))
    ledger.close()
    home = tmp_path_factory.mktemp("replicas")
    (home / "signoff.toml").write_text(f"[rooms]\nhousekeeping_seconds = {HOUR}\n")
    dep = Deployment(db_url, world, [], home)
    try:
        dep.replicas = [dep.start_replica() for _ in range(3)]
        yield dep
    finally:
        for replica in dep.replicas + dep.extra:
            replica.process.stop()


class Stream:
    """One agent event stream on one replica, recording every frame id exactly as served."""

    def __init__(self, url: str, agent_id: str, key: str, room_id: str | None, connection_id: str,
                 cursor: int | None) -> None:
        self.transport = HttpTransport(url, agent_id, key)
        start = "head" if cursor is None else str(cursor)
        self.params = StreamParams(connection_id=connection_id, start_from=start,
                                   last_event_id=None if cursor is None else start,
                                   rooms=[room_id] if room_id else [],
                                   protocol="1", protocol_accepts="1")
        self.ids: list[int] = []
        self.messages: list[str] = []
        self.cursor: int | None = cursor
        self.opened = asyncio.Event()
        self.changed = asyncio.Event()
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        with contextlib.suppress(Exception):  # a killed replica breaks the stream: that is the test
            async for frame in self.transport.events(self.params):
                if frame.event == "connection_state":
                    if self.cursor is None:
                        self.cursor = int(frame.data["cursor"])
                    self.opened.set()
                elif frame.id is not None:
                    self.ids.append(frame.id)
                    self.cursor = frame.id
                    if frame.event == "message":
                        self.messages.append(str(frame.data["payload"]["message_id"]))
                    self.changed.set()

    async def until(self, count: int) -> None:
        while len(self.messages) < count:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), WAIT)

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        await self.transport.aclose()


async def open_stream(url: str, world: World, cursor: int | None, connection_id: str) -> Stream:
    stream = Stream(url, world.reviewer.id, world.reviewer_key, world.room_id, connection_id, cursor)
    await asyncio.wait_for(stream.opened.wait(), WAIT)
    return stream


async def post(http: httpx.AsyncClient, url: str, world: World, text: str) -> str:
    response = await http.post(f"{url}/agents/{world.fixer.id}/message",
                               headers={"Authorization": f"Bearer {world.fixer_key}"},
                               json={"room_id": world.room_id, "content": text})
    response.raise_for_status()
    return str(response.json()["event_id"])


def room_order(dep: Deployment) -> list[str]:
    """The room's messages in the order the ledger holds them (read straight from the table)."""
    with psycopg.connect(dep.db_url) as conn:
        rows = conn.execute("SELECT message_id FROM rooms_messages WHERE room_id = %s ORDER BY seq",
                            (dep.world.room_id,)).fetchall()
    return [str(r[0]) for r in rows]


@pytest.mark.slow
def test_messages_posted_through_other_replicas_stream_from_this_one(deployment: Deployment) -> None:
    a, b, c = deployment.replicas
    world = deployment.world

    async def scenario() -> tuple[list[str], Stream]:
        stream = await open_stream(a.url, world, None, str(uuid.uuid4()))
        sent: list[str] = []
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
            for n in range(12):  # never through A: A's own posts would make it catch up anyway
                sent.append(await post(http, (b, c)[n % 2].url, world, f"elsewhere {n}"))
            await stream.until(len(sent))
        await stream.close()
        return sent, stream

    sent, stream = asyncio.run(scenario())
    assert stream.messages == sent
    assert stream.ids == sorted(set(stream.ids))


def test_a_forged_notification_does_not_move_a_replica_past_events(deployment: Deployment) -> None:
    """Anyone who may connect to the database can NOTIFY: a cursor far ahead in the payload must not
    make a replica skip what comes next."""
    a, b, _c = deployment.replicas
    world = deployment.world

    async def scenario() -> tuple[str, Stream]:
        stream = await open_stream(a.url, world, None, str(uuid.uuid4()))
        with psycopg.connect(deployment.db_url, autocommit=True) as conn:
            conn.execute("SELECT pg_notify('signoff_rooms', '9223372036854775000')")
            conn.execute("SELECT pg_notify('signoff_rooms', 'not a number')")
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
            sent = await post(http, b.url, world, "after the forgery")
            await stream.until(1)
        await stream.close()
        return sent, stream

    sent, stream = asyncio.run(scenario())
    assert stream.messages == [sent]


def test_a_replica_whose_listening_connection_drops_catches_up(deployment: Deployment) -> None:
    """PostgreSQL ends every LISTEN session (a restart, a failover, an idle-session killer): what is
    posted while nobody listens still reaches the streams, from the stored cursor on reconnect."""
    a, b, _c = deployment.replicas
    world = deployment.world

    def drop_listeners() -> int:
        with psycopg.connect(deployment.db_url, autocommit=True) as conn:
            rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE datname = current_database() AND query LIKE 'LISTEN%'").fetchall()
        return len(rows)

    async def scenario() -> tuple[int, list[str], Stream]:
        stream = await open_stream(a.url, world, None, str(uuid.uuid4()))
        dropped = await asyncio.to_thread(drop_listeners)
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
            sent = [await post(http, b.url, world, f"while nobody listens {n}") for n in range(3)]
            await stream.until(len(sent))
        await stream.close()
        return dropped, sent, stream

    dropped, sent, stream = asyncio.run(scenario())
    assert dropped >= 3, "every replica listens on a connection of its own"
    assert stream.messages == sent


def test_a_client_moved_to_another_replica_resumes_from_its_cursor(deployment: Deployment) -> None:
    a, b, c = deployment.replicas
    world = deployment.world
    connection_id = str(uuid.uuid4())

    async def scenario() -> tuple[list[str], list[str], list[int]]:
        first = await open_stream(a.url, world, None, connection_id)
        sent: list[str] = []
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
            for n in range(4):
                sent.append(await post(http, c.url, world, f"before the move {n}"))
            await first.until(4)
            await first.close()
            for n in range(4):  # posted while the client is connected nowhere
                sent.append(await post(http, c.url, world, f"while moving {n}"))
            second = await open_stream(b.url, world, first.cursor, connection_id)
            for n in range(4):
                sent.append(await post(http, a.url, world, f"after the move {n}"))
            await second.until(8)
        await second.close()
        return sent, first.messages + second.messages, first.ids + second.ids

    sent, received, ids = asyncio.run(scenario())
    assert received == sent
    assert ids == sorted(set(ids)), "an event was doubled or reordered across the move"


@pytest.mark.slow
def test_a_replica_killed_mid_stream_loses_and_doubles_nothing(deployment: Deployment) -> None:
    a, b, _c = deployment.replicas
    victim = deployment.start_replica()
    deployment.extra.append(victim)
    world = deployment.world
    connection_id = str(uuid.uuid4())
    before = set(room_order(deployment))

    async def scenario() -> tuple[list[str], list[str], list[int], int, list[str]]:
        first = await open_stream(victim.url, world, None, connection_id)
        accepted: list[str] = []
        attempted = 0
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:

            async def send(url: str, count: int) -> None:
                nonlocal attempted
                for n in range(count):
                    attempted += 1
                    with contextlib.suppress(httpx.HTTPError):  # the victim dies under some posts
                        accepted.append(await post(http, url, world, f"{url} {n}"))

            # Posts go through the victim and another replica at once; the victim dies mid-stream.
            posting = asyncio.gather(send(victim.url, 40), send(b.url, 40))
            await first.until(10)
            victim.process.proc.send_signal(signal.SIGKILL)
            await posting
            # The client reconnects elsewhere from the last id it received.
            second = await open_stream(a.url, world, first.cursor, connection_id)
            accepted.append(await post(http, b.url, world, "last"))  # also projects any straggler
            order = [m for m in await asyncio.to_thread(room_order, deployment) if m not in before]
            await second.until(len(order) - len(first.messages))
        await second.close()
        return accepted, first.messages + second.messages, first.ids + second.ids, attempted, order

    accepted, received, ids, attempted, order = asyncio.run(scenario())
    assert victim.process.proc.wait(timeout=WAIT) == -signal.SIGKILL
    assert received == order, "the stream differs from the room's order in the ledger"
    assert set(accepted) <= set(received), "an accepted message was lost"
    assert len(received) <= attempted + 1
    assert ids == sorted(set(ids)), "an event was doubled or reordered across the kill"


@pytest.mark.parametrize("value", [0, -1, 3601, "2", True])
def test_a_bad_housekeeping_interval_is_refused_with_a_fix(tmp_path: Path, value: object) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text(f"[rooms]\nhousekeeping_seconds = {json.dumps(value)}\n")
    settings = Settings.load(home=tmp_path / "home", db_url=f"sqlite:///{tmp_path / 'ledger.db'}",
                             env={"SIGNOFF_CONFIG": str(config)})
    with pytest.raises(UsageError) as caught:
        create_app(settings=settings)
    assert "housekeeping_seconds" in caught.value.message and caught.value.fix
    assert not (tmp_path / "ledger.db").exists(), "a refused setting must not create the database"


# -- connection state shared by the replicas ----------------------------------------------------


async def call(http: httpx.AsyncClient, url: str, agent_id: str, key: str, connection_id: str, operation: str,
               **args: object) -> httpx.Response:
    return await http.post(f"{url}/agents/{agent_id}/ops/{operation}", json=args,
                           headers={"Authorization": f"Bearer {key}", "X-Switch-Connection-Id": connection_id})


async def open_as(url: str, agent_id: str, key: str, room_id: str | None, connection_id: str) -> Stream:
    stream = Stream(url, agent_id, key, room_id, connection_id, None)
    await asyncio.wait_for(stream.opened.wait(), WAIT)
    return stream


def test_an_exclusive_role_held_through_one_replica_is_refused_through_the_others(deployment: Deployment) -> None:
    a, b, c = deployment.replicas
    w = deployment.world
    role = f"oncall-{uuid.uuid4().hex[:6]}"

    async def scenario() -> None:
        fixer_conn, reviewer_conn = str(uuid.uuid4()), str(uuid.uuid4())
        fixer = await open_as(a.url, w.fixer.id, w.fixer_key, w.room_id, fixer_conn)
        reviewer = await open_as(b.url, w.reviewer.id, w.reviewer_key, w.room_id, reviewer_conn)
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
            defined = await call(http, c.url, w.fixer.id, w.fixer_key, fixer_conn, "define_role", name=role,
                                 instructions="answers pages", exclusive=True)
            assert defined.status_code == 200, defined.text
            # The reviewer's stream is on B: a post through C sees it live, and the role delivers to it.
            sent = await call(http, c.url, w.fixer.id, w.fixer_key, fixer_conn, "send_targeted_message",
                              body="are you there", target_names=["reviewer"])
            assert sent.json()["result"]["target_statuses"] == {"reviewer": "live"}, sent.text
            # The fixer's stream is on A; it assumes the role through C, the reviewer tries through B and A.
            held = await call(http, c.url, w.fixer.id, w.fixer_key, fixer_conn, "assume_role", role=role)
            assert held.status_code == 200, held.text
            for url in (b.url, a.url):
                taken = await call(http, url, w.reviewer.id, w.reviewer_key, reviewer_conn, "assume_role", role=role)
                assert taken.status_code == 400 and "exclusive" in taken.json()["detail"], taken.text
            listed = await call(http, b.url, w.reviewer.id, w.reviewer_key, reviewer_conn, "list_roles")
            holders = {r["name"]: [h["name"] for h in r["held_by"]] for r in listed.json()["result"]}
            assert holders[role] == ["fixer"]
            released = await call(http, b.url, w.fixer.id, w.fixer_key, fixer_conn, "release_role")
            assert released.json()["result"] == {"released": role}
            taken = await call(http, a.url, w.reviewer.id, w.reviewer_key, reviewer_conn, "assume_role", role=role)
            assert taken.status_code == 200, taken.text
            await call(http, a.url, w.reviewer.id, w.reviewer_key, reviewer_conn, "release_role")
        await fixer.close()
        await reviewer.close()

    asyncio.run(scenario())


def test_a_role_lease_outlives_the_replica_that_granted_it(deployment: Deployment) -> None:
    a, b, _c = deployment.replicas
    victim = deployment.start_replica()
    deployment.extra.append(victim)
    w = deployment.world
    role = f"lead-{uuid.uuid4().hex[:6]}"

    async def scenario() -> None:
        fixer_conn, reviewer_conn = str(uuid.uuid4()), str(uuid.uuid4())
        first = await open_as(victim.url, w.fixer.id, w.fixer_key, w.room_id, fixer_conn)
        reviewer = await open_as(b.url, w.reviewer.id, w.reviewer_key, w.room_id, reviewer_conn)
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
            await call(http, victim.url, w.fixer.id, w.fixer_key, fixer_conn, "define_role", name=role,
                       instructions="leads", exclusive=True)
            held = await call(http, victim.url, w.fixer.id, w.fixer_key, fixer_conn, "assume_role", role=role)
            assert held.status_code == 200, held.text
            victim.process.proc.send_signal(signal.SIGKILL)
            await first.close()
            # The client reattaches the same connection through another replica and beats there.
            second = await open_as(a.url, w.fixer.id, w.fixer_key, w.room_id, fixer_conn)
            beat = await http.post(f"{b.url}/agents/{w.fixer.id}/connection/beat",
                                   headers={"Authorization": f"Bearer {w.fixer_key}"},
                                   json={"connection_id": fixer_conn, "cursor": second.cursor or 0})
            assert beat.status_code == 200, beat.text
            taken = await call(http, b.url, w.reviewer.id, w.reviewer_key, reviewer_conn, "assume_role", role=role)
            assert taken.status_code == 400 and "exclusive" in taken.json()["detail"], taken.text
            listed = await call(http, a.url, w.reviewer.id, w.reviewer_key, reviewer_conn, "list_roles")
            holders = {r["name"]: [h["name"] for h in r["held_by"]] for r in listed.json()["result"]}
            assert holders[role] == ["fixer"], "the lease was lost with the replica"
            await call(http, a.url, w.fixer.id, w.fixer_key, fixer_conn, "release_role")
        await second.close()
        await reviewer.close()

    asyncio.run(scenario())
    assert victim.process.proc.wait(timeout=WAIT) == -signal.SIGKILL


def test_a_room_taken_over_through_another_replica_evicts_the_old_stream(deployment: Deployment) -> None:
    a, b, c = deployment.replicas
    w = deployment.world

    async def scenario() -> tuple[list[str], dict[str, str]]:
        old = Stream(a.url, w.reviewer.id, w.reviewer_key, w.room_id, str(uuid.uuid4()), None)
        evicted: list[str] = []

        async def watch() -> None:
            async for frame in old.transport.events(old.params):
                if frame.event == "connection_state":
                    old.opened.set()
                if frame.event == "evicted":
                    evicted.append(str(frame.data["reason"]))
                    return

        old.task.cancel()
        watcher = asyncio.create_task(watch())
        await asyncio.wait_for(old.opened.wait(), WAIT)
        new = await open_as(b.url, w.reviewer.id, w.reviewer_key, w.room_id, str(uuid.uuid4()))
        await asyncio.wait_for(watcher, WAIT)
        async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
            status = await call(http, c.url, w.reviewer.id, w.reviewer_key, new.params.connection_id or "",
                                "list_rooms")
        await new.close()
        await old.transport.aclose()
        return evicted, {r["room_id"]: r["connected"] for r in status.json()["result"]}

    evicted, connected = asyncio.run(scenario())
    assert evicted == ["room " + w.room_id + " taken over"]
    assert connected[w.room_id] is True


def test_an_agent_cannot_exceed_its_connection_limit_by_spreading_over_replicas(deployment: Deployment) -> None:
    """At most MAX_CONNECTIONS live connections per agent, counted across replicas; and a
    connection id another agent holds is refused on every replica."""
    w = deployment.world
    urls = [r.url for r in deployment.replicas]
    ledger = SqlLedger.from_url(deployment.db_url)
    try:  # an agent of its own: the other tests' connections stay live (housekeeping is hourly)
        service = RoomService(ledger)
        alice = service.user(w.alice.id)
        helper, helper_key = service.create_agent(alice, f"helper{uuid.uuid4().hex[:6]}", "spreads out")
        service.add_member(alice, w.room_id, agent_name=helper.name)
    finally:
        ledger.close()
    helper_id = helper.id

    async def scenario() -> tuple[list[SignoffError], list[SignoffError]]:
        streams: list[Stream] = []

        async def keep_beating() -> None:  # as every client does, so that none lapses meanwhile
            async with httpx.AsyncClient(timeout=30, verify=tls_context()) as http:
                while True:
                    await asyncio.gather(*(
                        http.post(f"{urls[n % 3]}/agents/{helper_id}/connection/beat",
                                  headers={"Authorization": f"Bearer {helper_key}"},
                                  json={"connection_id": stream.params.connection_id, "cursor": 0})
                        for n, stream in enumerate(list(streams))))
                    await asyncio.sleep(HEARTBEAT_TTL / 6)

        beating = asyncio.create_task(keep_beating())
        for n in range(MAX_CONNECTIONS):  # no room: a claim would take the room over from the previous one
            streams.append(await open_as(urls[n % 3], helper_id, helper_key, None, str(uuid.uuid4())))
        over: list[SignoffError] = []
        for url in urls:
            transport = HttpTransport(url, helper_id, helper_key)
            params = StreamParams(connection_id=str(uuid.uuid4()), protocol="1", protocol_accepts="1")
            try:
                async for _frame in transport.events(params):
                    break
            except SignoffError as exc:
                over.append(exc)
            await transport.aclose()
        stolen: list[SignoffError] = []
        for url in urls:  # the reviewer names one of the helper's connection ids
            transport = HttpTransport(url, w.reviewer.id, w.reviewer_key)
            params = StreamParams(connection_id=streams[0].params.connection_id, protocol="1", protocol_accepts="1")
            try:
                async for _frame in transport.events(params):
                    break
            except SignoffError as exc:
                stolen.append(exc)
            await transport.aclose()
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
        for stream in streams:
            await stream.close()
        return over, stolen

    over, stolen = asyncio.run(scenario())
    assert [type(e) for e in over] == [ConflictError] * 3, over
    assert all(f"{MAX_CONNECTIONS} live connections" in e.message for e in over)
    assert [type(e) for e in stolen] == [RefusedError] * 3


def test_lapsed_connections_neither_count_nor_pile_up_where_no_server_sweeps(db_url: str) -> None:
    """Connection rows outlive processes now: one process after another (the embedded client, the
    CLI) each opening a fresh connection and never sweeping must not lock the agent out."""
    clock = FixedClock(1_800_000_000.0)
    ledger = SqlLedger.from_url(db_url, clock)
    world = make_world(RoomService(ledger))
    for n in range(MAX_CONNECTIONS + 8):
        RoomService(ledger).connections.open(world.fixer.id, f"run-{n}")  # a fresh process's registry
        clock.advance(HEARTBEAT_TTL + 1)
    registry = RoomService(ledger).connections
    opened = [registry.open(world.fixer.id, f"now-{n}")[0] for n in range(MAX_CONNECTIONS)]
    with pytest.raises(ConflictError, match=f"{MAX_CONNECTIONS} live connections"):
        registry.open(world.fixer.id, "one-too-many")
    assert {c.id for c in registry.connections(world.fixer.id)} == {c.id for c in opened}
    clock.advance(PURGE_AFTER + HEARTBEAT_TTL + 1)
    registry.open(world.fixer.id, "after-an-hour")
    with ledger.engine.connect() as conn:
        left = conn.execute(select(rooms_connections.c.connection_id)
                            .where(rooms_connections.c.agent_id == world.fixer.id)).scalars().all()
    assert sorted(left) == sorted(["after-an-hour", *(c.id for c in opened)]), "dead rows piled up"
    ledger.close()
