"""Delivery latency of signoff rooms vs Synapse (the Matrix homeserver Switch uses as its bus).

Twenty agents hold live streams; one sender posts messages addressed to them in turn, at rising
rates, open loop (each send starts on schedule, whether or not the previous one finished). For each
message we time send start -> arrival at the addressed receiver.

- signoff: `signoff serve` in its own process on SQLite; receivers are `RoomsClient`s over HTTP
  (SSE, filter=addressed, 2 s heartbeats); the sender calls `send_targeted_message`.
- Synapse: installed with pip into a throwaway venv (cached as for the tests; never a project dependency),
  SQLite, rate limits lifted; receivers long-poll `/sync` on the room; the sender `PUT`s
  `m.room.message` events (the same send-to-sync round trip Switch's bus makes).

Prints per system and rate: p50 and p99 latency (median over runs, with min..max), lost messages,
the send rate the server actually accepted, and the highest rate sustained without loss (every
message delivered, sends accepted at >= 95% of the offered rate); then `ratio <x>` = Synapse p99 /
signoff p99 at 200 messages/s (the goal is at least 2). The machine's other load hits both systems
alike: runs are interleaved.

    python bench/rooms_delivery.py [--rates 50,100,200,400] [--seconds 5] [--runs 3] [--synapse-venv DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the one Synapse harness

from tests.support.net import free_port
from tests.support.synapse import Synapse, stop_process, wait_http
from tests.support.synapse import synapse_python as cached_synapse_python

from signoff.ledger import Ledger
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


# -- signoff -----------------------------------------------------------------------------------


async def open_receivers(bases: list[str], receivers: list[tuple[Any, str]], room_id: str,
                         trial: Trial) -> tuple[list[RoomsClient], list[asyncio.Task[None]]]:
    """One addressed-only stream per receiver (receiver i on server bases[i % len]), each recording
    when its addressed messages arrive."""
    clients = []
    for i, (agent, key) in enumerate(receivers):
        client = RoomsClient(HttpTransport(bases[i % len(bases)], agent.id, key), filter="addressed")
        clients.append(client)
        await client.start()
        await client.connect_to_room(room_id)

    async def receive(client: RoomsClient) -> None:
        async for event in client.events():
            if event.get("type") == "message" and event["payload"].get("addressed"):
                trial.received.setdefault(nonce_of(event["payload"]["body"]), time.perf_counter())

    return clients, [asyncio.create_task(receive(c)) for c in clients]


async def close_clients(clients: list[RoomsClient]) -> None:
    for client in clients:
        await client.close()
        await client.transport.aclose()


class SignoffSide:
    name = "signoff"

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp

    def start(self) -> None:
        db = f"sqlite:///{self.tmp / 'signoff.db'}"
        ledger = Ledger.from_url(db)
        service = RoomService(ledger)
        admin = service.user(service.init()["admin_user_id"])
        self.sender, self.sender_key = service.create_agent(admin, "sender", policy=OPEN)
        self.receivers = [service.create_agent(admin, f"agent{i:02d}", policy=OPEN) for i in range(AGENTS)]
        self.room = service.create_room(admin, "bench", agent_names=["sender"] + [a.name for a, _ in self.receivers])
        ledger.close()
        port = self.port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "SIGNOFF_HOME": str(self.tmp / "home"), "SIGNOFF_DB": db}
        self.log = (self.tmp / "signoff.log").open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "signoff.rooms.app:app_from_env",
                                      "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_http(f"{self.base}/health", self.proc, "signoff serve")

    async def trial(self, rate: int, seconds: float) -> Trial:
        trial = Trial()
        clients: list[RoomsClient] = []
        try:
            clients, readers = await open_receivers([self.base], self.receivers, self.room.id, trial)
            sender = RoomsClient(HttpTransport(self.base, self.sender.id, self.sender_key))
            clients.append(sender)
            await sender.start()
            await sender.connect_to_room(self.room.id)
            spec = SendSpec("signoff", "127.0.0.1", self.port, {
                "Authorization": f"Bearer {self.sender_key}", "X-Switch-Connection-Id": sender.connection_id},
                self.sender.id)
            await drive(spec, rate, seconds, trial)
            for r in readers:
                r.cancel()
        finally:
            await close_clients(clients)
        return trial

    def stop(self) -> None:
        stop_process(self.proc)
        self.log.close()


# -- Synapse -----------------------------------------------------------------------------------

def synapse_python(venv: Path | None) -> Path:
    """The Python of a venv with matrix-synapse: the given one, else the cached test install."""
    if venv is None:
        print("using (or installing) the cached matrix-synapse venv ...", flush=True)
        return cached_synapse_python()
    python = venv / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"--synapse-venv {venv} has no bin/python")
    return python


class SynapseSide:
    name = "synapse"

    def __init__(self, tmp: Path, python: Path) -> None:
        self.server = Synapse(tmp / "synapse", python, server_name="bench.local")
        self.port = self.server.port
        self.base = self.server.base

    def start(self) -> None:
        self.server.start()
        with httpx.Client(base_url=self.base, timeout=30) as http:
            self.sender = self.server.register("sender").access_token
            self.receivers = [self.server.register(f"agent{i:02d}").access_token for i in range(AGENTS)]
            created = http.post("/_matrix/client/v3/createRoom", json={"preset": "public_chat", "name": "bench"},
                                headers=self._auth(self.sender))
            created.raise_for_status()
            self.room = created.json()["room_id"]
            for user in self.receivers:
                http.post(f"/_matrix/client/v3/join/{self.room}", json={},
                          headers=self._auth(user)).raise_for_status()

    @staticmethod
    def _auth(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    async def trial(self, rate: int, seconds: float) -> Trial:
        trial = Trial()
        flt = json.dumps({"room": {"rooms": [self.room], "timeline": {"limit": 1000, "types": ["m.room.message"]},
                                   "state": {"types": []}, "ephemeral": {"types": []},
                                   "account_data": {"types": []}},
                          "presence": {"types": []}, "account_data": {"types": []}})
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(base_url=self.base, timeout=httpx.Timeout(60), limits=limits) as http:

            async def sync_loop(index: int, token: str, since: str) -> None:
                me = f"@agent{index:02d} "
                while True:
                    reply = await http.get("/_matrix/client/v3/sync", params={
                        "since": since, "timeout": "30000", "filter": flt}, headers=self._auth(token))
                    now = time.perf_counter()
                    if reply.status_code != 200:
                        await asyncio.sleep(0.1)
                        continue
                    body = reply.json()
                    since = body["next_batch"]
                    room = body.get("rooms", {}).get("join", {}).get(self.room, {})
                    for event in room.get("timeline", {}).get("events", []):
                        text = event.get("content", {}).get("body", "")
                        if text.startswith(me):
                            trial.received.setdefault(nonce_of(text), now)

            readers = []
            for i, token in enumerate(self.receivers):
                first = await http.get("/_matrix/client/v3/sync", params={"timeout": "0", "filter": flt},
                                       headers=self._auth(token))
                readers.append(asyncio.create_task(sync_loop(i, token, first.json()["next_batch"])))

            spec = SendSpec("synapse", "127.0.0.1", self.port, self._auth(self.sender), self.room)
            await drive(spec, rate, seconds, trial)
            for r in readers:
                r.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
        return trial

    def stop(self) -> None:
        self.server.stop()


# -- main --------------------------------------------------------------------------------------


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="50,100,200,400")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--synapse-venv", type=Path, default=None,
                        help="reuse a venv that already has matrix-synapse (default: the cached test install)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, databases)")
    parser.add_argument("--signoff-only", action="store_true",
                        help="skip Synapse (no ratio line; for profiling signoff alone)")
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="rooms-bench-"))
    try:
        sides: list[Any] = [SignoffSide(tmp)]
        if not args.signoff_only:
            sides.append(SynapseSide(tmp, synapse_python(args.synapse_venv)))
        for side in sides:
            side.start()
        rows = []
        for rate in rates:
            results: dict[str, list[Trial]] = {s.name: [] for s in sides}
            for _ in range(args.runs):
                for side in sides:  # interleaved, so background load hits both alike
                    results[side.name].append(asyncio.run(side.trial(rate, args.seconds)))
            rows += [summarise(name, rate, trials) for name, trials in results.items()]
        for side in sides:
            side.stop()
        for name in [side.name for side in sides]:
            # Sustained: every run delivered everything and the server accepted sends at >= 95% of
            # the offered rate (a server that falls behind slows its senders down).
            best = "none"
            for r in sorted((r for r in rows if r["system"] == name), key=lambda r: r["rate"]):
                if r["lost"] or r["achieved"] < 0.95 * r["rate"]:
                    break
                best = str(r["rate"])
            print(f"{name:8} highest rate sustained without loss: {best}/s")
        if args.signoff_only:
            return 0
        at = 200 if 200 in rates else rates[-1]
        ours = next(r for r in rows if r["system"] == "signoff" and r["rate"] == at)
        theirs = next(r for r in rows if r["system"] == "synapse" and r["rate"] == at)
        ratio = theirs["p99_ms"] / ours["p99_ms"] if ours["p99_ms"] > 0 else float("inf")
        print(f"detail: at {at}/s p99 synapse {theirs['p99_ms']:.1f} ms / signoff {ours['p99_ms']:.1f} ms "
              f"(medians of {args.runs} runs of {args.seconds:g} s, {AGENTS} receivers); goal >= 2")
        print(f"ratio {ratio:.2f}")
        return 0
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
