"""What the rooms benchmarks share (`rooms_delivery.py`, `rooms_replicas.py`): a deployment of
`signoff serve` processes on one database, twenty receivers on addressed-only SSE streams, an
open-loop sender in its own process, and the summary of a set of runs.

Each run times every message from its scheduled send start to its arrival at the addressed
receiver; a message that never arrives, or whose send failed, is lost.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the one server harness

from tests.support.net import free_port
from tests.support.synapse import stop_process, wait_http

from signoff.ledger import SqlLedger
from signoff.rooms import OPEN, RoomService
from signoff.rooms.client import HttpTransport, RoomsClient

AGENTS = 20
GRACE = 10.0  # seconds to wait for stragglers after the last send
IN_FLIGHT = 64  # concurrent sends at most (an unbounded queue makes the load generator the bottleneck)


@dataclass
class Trial:
    sent: dict[str, float] = field(default_factory=dict)
    received: dict[str, float] = field(default_factory=dict)
    errors: int = 0
    achieved: float = 0.0  # messages per second the server actually accepted

    def latencies(self) -> list[float]:
        return [self.received[k] - t for k, t in self.sent.items() if k in self.received]

    def lost(self) -> int:
        return len([k for k in self.sent if k not in self.received]) + self.errors


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def nonce_of(body: str) -> str:
    return body.rsplit(" ", 1)[-1]


@dataclass(frozen=True)
class SendSpec:
    """How the sender process posts one addressed message (picklable)."""

    kind: str  # signoff | signoff-mention | synapse
    host: str
    port: int
    headers: dict[str, str]
    target: str  # signoff: sender agent id; synapse: room id
    room: str = ""  # signoff-mention: the room posted to
    more_ports: tuple[int, ...] = ()  # sends go round robin over `port` and these (replicas)


def request_for(spec: SendSpec, target: int, nonce: str) -> tuple[str, str, bytes]:
    if spec.kind == "signoff":
        body = {"body": f"m {nonce}", "target_names": [f"agent{target:02d}"]}
        return "POST", f"/agents/{spec.target}/ops/send_targeted_message", json.dumps(body).encode()
    if spec.kind == "signoff-mention":  # no connection needed: any replica accepts it
        body = {"room_id": spec.room, "content": f"@agent{target:02d} m {nonce}"}
        return "POST", f"/agents/{spec.target}/message", json.dumps(body).encode()
    body = {"msgtype": "m.text", "body": f"@agent{target:02d} m {nonce}"}
    path = f"/_matrix/client/v3/rooms/{spec.target}/send/m.room.message/{uuid.uuid4().hex}"
    return "PUT", path, json.dumps(body).encode()


class RawPool:
    """A minimal keep-alive HTTP/1.1 client: a load generator must cost less than the server it
    measures, and httpx's pool does not at hundreds of requests per second."""

    def __init__(self, host: str, port: int, size: int) -> None:
        self.host, self.port, self.size = host, port, size
        self._free: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

    async def open(self) -> None:
        for _ in range(self.size):
            self._free.put_nowait(await asyncio.open_connection(self.host, self.port))

    async def request(self, method: str, path: str, headers: dict[str, str], body: bytes) -> int:
        reader, writer = await self._free.get()
        try:
            head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            status_line = await reader.readline()
            status = int(status_line.split()[1])
            length, chunked = 0, False
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                elif name.lower() == "transfer-encoding" and "chunked" in value.lower():
                    chunked = True
            if chunked:
                while True:
                    size = int((await reader.readline()).strip(), 16)
                    await reader.readexactly(size + 2)
                    if size == 0:
                        break
            else:
                await reader.readexactly(length)
        except BaseException:
            writer.close()
            reader, writer = await asyncio.open_connection(self.host, self.port)
            raise
        finally:
            self._free.put_nowait((reader, writer))
        return status


async def _send_all(spec: SendSpec, rate: int, seconds: float) -> tuple[dict[str, float], int, float]:
    pools = [RawPool(spec.host, port, IN_FLIGHT) for port in (spec.port, *spec.more_ports)]
    for pool in pools:
        await pool.open()
    sent: dict[str, float] = {}
    errors = 0
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.2

    async def one(i: int) -> None:
        nonlocal errors
        nonce = uuid.uuid4().hex[:12]
        sent[nonce] = time.perf_counter()  # the scheduled start: client-side queueing counts
        method, path, body = request_for(spec, i % AGENTS, nonce)
        try:
            status = await pools[i % len(pools)].request(method, path, spec.headers, body)
        except (OSError, ValueError, asyncio.IncompleteReadError):
            status = 0
        if status != 200:  # a failed send is a lost message
            sent.pop(nonce, None)
            errors += 1

    tasks = []
    for i in range(int(rate * seconds)):
        delay = start + i / rate - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i)))
    await asyncio.gather(*tasks)
    elapsed = loop.time() - start
    return sent, errors, len(tasks) / elapsed if elapsed > 0 else 0.0


def sender_process(spec: SendSpec, rate: int, seconds: float, out: Any) -> None:
    """Runs in its own process so sending never competes with receiving for one interpreter."""
    out.send(asyncio.run(_send_all(spec, rate, seconds)))
    out.close()


async def drive(spec: SendSpec, rate: int, seconds: float, trial: Trial) -> None:
    """Open-loop schedule in a sender process: message i starts at t0 + i / rate. Receive times are
    taken in this process; both use the system-wide monotonic clock."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=sender_process, args=(spec, rate, seconds, child), daemon=True)
    proc.start()
    sent, errors, achieved = await asyncio.to_thread(parent.recv)
    await asyncio.to_thread(proc.join, 30)
    trial.sent.update(sent)
    trial.errors += errors
    trial.achieved = achieved
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GRACE
    while loop.time() < deadline and len(trial.received) < len(trial.sent):
        await asyncio.sleep(0.05)


class Receivers:
    """One addressed-only stream per receiving agent (receiver i on server bases[i % len]), open
    across runs (connecting twenty agents is not what a run measures); each arrival is recorded in
    the current run's trial."""

    def __init__(self) -> None:
        self.trial = Trial()
        self.clients: list[RoomsClient] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def open(self, bases: list[str], receivers: list[tuple[Any, str]], room_id: str) -> None:
        for i, (agent, key) in enumerate(receivers):
            client = RoomsClient(HttpTransport(bases[i % len(bases)], agent.id, key), filter="addressed")
            self.clients.append(client)
            await client.start()
            await client.connect_to_room(room_id)
        self.tasks = [asyncio.create_task(self._receive(c)) for c in self.clients]

    async def _receive(self, client: RoomsClient) -> None:
        async for event in client.events():
            if event.get("type") == "message" and event["payload"].get("addressed"):
                self.trial.received.setdefault(nonce_of(event["payload"]["body"]), time.perf_counter())

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await close_clients(self.clients)


async def close_clients(clients: list[RoomsClient]) -> None:
    for client in clients:
        await client.close()
        await client.transport.aclose()


def summarise(name: str, rate: int, trials: list[Trial]) -> dict[str, Any]:
    p50s = [percentile(t.latencies(), 0.50) * 1000 for t in trials]
    p99s = [percentile(t.latencies(), 0.99) * 1000 for t in trials]
    lost = [t.lost() for t in trials]
    sent = [len(t.sent) + t.errors for t in trials]
    achieved = min(t.achieved for t in trials)
    row = {"system": name, "rate": rate, "achieved": achieved, "p50_ms": statistics.median(p50s), "p50_min": min(p50s),
           "p50_max": max(p50s), "p99_ms": statistics.median(p99s), "p99_min": min(p99s), "p99_max": max(p99s),
           "lost": sum(lost), "sent": sum(sent), "runs": len(trials)}
    print(f"{name:8} {rate:5d}/s  p50 {row['p50_ms']:8.1f} ms ({row['p50_min']:.1f}..{row['p50_max']:.1f})  "
          f"p99 {row['p99_ms']:8.1f} ms ({row['p99_min']:.1f}..{row['p99_max']:.1f})  "
          f"lost {row['lost']}/{row['sent']}  accepted >= {achieved:.0f}/s  runs {len(trials)}", flush=True)
    return row


async def measure(sides: list[Any], rates: list[int], runs: int, seconds: float,
                  warmup: float = 1.0) -> dict[tuple[str, int], list[Trial]]:
    """`runs` runs of `seconds` per side and rate, sides interleaved so that the machine's other load
    hits them alike, after a warm-up run per side (`warmup` seconds at the first rate, not
    counted: the first posts pay for cold caches and connection pools). Each side has `name`, and
    async `open()`, `trial(rate, seconds)` and `close()`."""
    results: dict[tuple[str, int], list[Trial]] = {}
    for side in sides:
        await side.open()
    try:
        for side in sides:
            await side.trial(rates[0], warmup)
        for rate in rates:
            for _ in range(runs):
                for side in sides:
                    results.setdefault((side.name, rate), []).append(await side.trial(rate, seconds))
        return results
    finally:
        for side in sides:
            await side.close()


def fresh_database(server_url: str, name: str) -> str:
    """A new, empty database on a PostgreSQL server (the URL of its `postgres` database)."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.replace("/postgres?", f"/{name}?", 1)


class Deployment:
    """`replicas` `signoff serve` processes on the database `db`, with a sender agent and AGENTS
    receiving agents (OPEN policies) in one room.

    `kind` says how the sender posts: "signoff" calls `send_targeted_message` on a connection of
    its own to the first replica (the Switch operation); "signoff-mention" posts an @-mention with
    `POST /agents/{id}/message`, which needs no connection, round robin over the replicas."""

    def __init__(self, tmp: Path, db: str, replicas: int = 1, name: str = "", kind: str = "signoff") -> None:
        self.tmp, self.db, self.count, self.kind = tmp, db, replicas, kind
        self.name = name or f"{replicas} replica{'s' if replicas > 1 else ''}"
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.ports: list[int] = []
        self.log = (self.tmp / "serve.log").open("w")

    def start(self) -> None:
        ledger = SqlLedger.from_url(self.db)
        service = RoomService(ledger)
        admin = service.user(service.init()["admin_user_id"])
        self.sender, self.sender_key = service.create_agent(admin, "sender", policy=OPEN)
        self.receivers = [service.create_agent(admin, f"agent{i:02d}", policy=OPEN) for i in range(AGENTS)]
        self.room = service.create_room(admin, "bench", agent_names=["sender"] + [a.name for a, _ in self.receivers])
        ledger.close()
        for _ in range(self.count):
            port = free_port()
            env = {**os.environ, "SIGNOFF_HOME": str(self.tmp / "home"), "SIGNOFF_DB": self.db}
            proc = subprocess.Popen([sys.executable, "-m", "signoff.cli.main", "serve", "--port", str(port)],
                                    env=env, stdout=self.log, stderr=subprocess.STDOUT)
            self.procs.append(proc)
            wait_http(f"http://127.0.0.1:{port}/health", proc, "signoff serve")
            self.ports.append(port)

    async def open(self) -> None:
        """Connect the receivers (and the sender, for `send_targeted_message`) for the runs to come."""
        bases = [f"http://127.0.0.1:{port}" for port in self.ports]
        self.live = Receivers()
        self.clients: list[RoomsClient] = []
        await self.live.open(bases, self.receivers, self.room.id)
        headers = {"Authorization": f"Bearer {self.sender_key}"}
        if self.kind == "signoff":
            sender = RoomsClient(HttpTransport(bases[0], self.sender.id, self.sender_key))
            self.clients.append(sender)
            await sender.start()
            await sender.connect_to_room(self.room.id)
            headers["X-Switch-Connection-Id"] = sender.connection_id
        # Message i goes to receiver i % AGENTS through replica i % replicas: with several
        # replicas and the receivers spread the same way, most posts land on a replica the
        # receiver is not on.
        self.spec = SendSpec(self.kind, "127.0.0.1", self.ports[0], headers, self.sender.id, room=self.room.id,
                             more_ports=tuple(self.ports[1:]) if self.kind == "signoff-mention" else ())

    async def trial(self, rate: int, seconds: float) -> Trial:
        trial = self.live.trial = Trial()
        await drive(self.spec, rate, seconds, trial)
        return trial

    async def close(self) -> None:
        await self.live.close()
        await close_clients(self.clients)

    def stop(self) -> None:
        for proc in self.procs:
            stop_process(proc)
        self.log.close()
