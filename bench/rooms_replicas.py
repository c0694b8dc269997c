"""Delivery latency and loss of signoff rooms with 1 and with 3 replicas on one PostgreSQL.

Two deployments run side by side, each on its own database of one throwaway PostgreSQL cluster:
one `signoff serve` process, and three. Twenty agents hold live streams (SSE, filter=addressed,
2 s heartbeats), spread round robin over the deployment's replicas; one sender posts messages
addressed to them in turn, open loop at a fixed rate, its posts spread round robin over the
replicas too (`POST /agents/{id}/message` with an @-mention, which any replica accepts). With
three replicas, two in three messages are posted through a replica other than the receiver's, so
they reach it through LISTEN/NOTIFY. For each message we time send start -> arrival at the
addressed receiver.

Prints per deployment: p50 and p99 latency (median over runs, with min..max), lost messages and
the send rate accepted; then `ratio <x>` = p99 with 3 replicas / p99 with 1 (the goal is at most
1.5 on our 2 cores). Runs are interleaved, so the machine's other load hits both alike.

    python bench/rooms_replicas.py [--rate 100] [--seconds 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the one PostgreSQL harness

from rooms_delivery import AGENTS, SendSpec, Trial, close_clients, drive, open_receivers, percentile, summarise
from tests.support.net import free_port
from tests.support.pg import PgServer
from tests.support.synapse import stop_process, wait_http

from signoff.ledger import Ledger
from signoff.rooms import OPEN, RoomService
from signoff.rooms.client import RoomsClient


def fresh_database(server_url: str, name: str) -> str:
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.replace("/postgres?", f"/{name}?", 1)


class Deployment:
    def __init__(self, tmp: Path, server_url: str, replicas: int) -> None:
        self.tmp, self.count = tmp / f"replicas{replicas}", replicas
        self.tmp.mkdir()
        self.name = f"{replicas} replica{'s' if replicas > 1 else ''}"
        self.db = fresh_database(server_url, f"bench_replicas{replicas}")
        self.procs: list[subprocess.Popen[bytes]] = []
        self.ports: list[int] = []
        self.log = (self.tmp / "serve.log").open("w")

    def start(self) -> None:
        ledger = Ledger.from_url(self.db)
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
            wait_http(f"http://127.0.0.1:{port}/health", proc, "signoff serve")
            self.procs.append(proc)
            self.ports.append(port)

    async def trial(self, rate: int, seconds: float) -> Trial:
        trial = Trial()
        clients: list[RoomsClient] = []
        try:
            bases = [f"http://127.0.0.1:{port}" for port in self.ports]
            clients, readers = await open_receivers(bases, self.receivers, self.room.id, trial)
            # Message i goes to receiver i % 20 through replica i % n: with 3 replicas and 20
            # receivers spread the same way, most posts land on a replica the receiver is not on.
            spec = SendSpec("signoff-mention", "127.0.0.1", self.ports[0],
                            {"Authorization": f"Bearer {self.sender_key}"}, self.sender.id, room=self.room.id,
                            more_ports=tuple(self.ports[1:]))
            await drive(spec, rate, seconds, trial)
            for r in readers:
                r.cancel()
        finally:
            await close_clients(clients)
        return trial

    def stop(self) -> None:
        for proc in self.procs:
            stop_process(proc)
        self.log.close()


def cross_replica_share(count: int) -> float:
    """How many of the messages are posted through a replica their receiver is not on."""
    if count == 1:
        return 0.0
    return sum(1 for i in range(AGENTS * count) if i % count != (i % AGENTS) % count) / (AGENTS * count)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rooms-replicas-"))
    server = PgServer()
    sides: list[Deployment] = []
    try:
        url = server.start()
        sides = [Deployment(tmp, url, 1), Deployment(tmp, url, 3)]
        for side in sides:
            side.start()
        results: dict[str, list[Trial]] = {s.name: [] for s in sides}
        for _ in range(args.runs):
            for side in sides:  # interleaved, so background load hits both alike
                results[side.name].append(asyncio.run(side.trial(args.rate, args.seconds)))
        rows: list[dict[str, Any]] = [summarise(name, args.rate, trials) for name, trials in results.items()]
        one, three = rows
        ratio = three["p99_ms"] / one["p99_ms"] if one["p99_ms"] > 0 else float("inf")
        spread = [percentile_ratio(results[sides[1].name][i], results[sides[0].name][i]) for i in range(args.runs)]
        print(f"detail: at {args.rate}/s p99 3 replicas {three['p99_ms']:.1f} ms / 1 replica {one['p99_ms']:.1f} ms "
              f"(medians of {args.runs} runs of {args.seconds:g} s, {AGENTS} receivers; per-run ratios "
              f"{min(spread):.2f}..{max(spread):.2f}; {cross_replica_share(3):.0%} of the 3-replica messages "
              f"cross replicas); lost {one['lost']} and {three['lost']}; goal <= 1.5")
        print(f"ratio {ratio:.2f}")
        return 0
    finally:
        for side in sides:
            side.stop()
        server.stop()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def percentile_ratio(three: Trial, one: Trial) -> float:
    p99_one = percentile(one.latencies(), 0.99)
    return percentile(three.latencies(), 0.99) / p99_one if p99_one > 0 else float("inf")


if __name__ == "__main__":
    sys.exit(main())
