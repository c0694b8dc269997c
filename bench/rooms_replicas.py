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
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from rooms_load import AGENTS, Deployment, Trial, fresh_database, percentile, summarise

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the one PostgreSQL harness

from tests.support.pg import PgServer


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
        sides = [Deployment(tmp / f"replicas{n}", fresh_database(url, f"bench_replicas{n}"), n, kind="signoff-mention")
                 for n in (1, 3)]
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
