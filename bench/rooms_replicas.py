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
1.5 on our 2 cores): runs are interleaved, each run of three replicas right after one of one
replica, so the machine's other load hits both alike, and the ratio is the median of the ratios of
those pairs (with their spread). The receivers stay connected across runs, and a warm-up run per
deployment is not counted.

    python bench/rooms_replicas.py [--rate 100] [--seconds 5] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from rooms_load import AGENTS, Deployment, Trial, fresh_database, measure, percentile, summarise

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
    parser.add_argument("--runs", type=int, default=5)
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
        results = asyncio.run(measure(sides, [args.rate], args.runs, args.seconds))
        one, three = (summarise(side.name, args.rate, results[side.name, args.rate]) for side in sides)
        # Each run of 3 replicas is paired with the run of 1 just before it (same background load),
        # so the ratio is the median of the paired ratios; the ratio of the medians is shown too.
        paired = [p99_ratio(b, a) for a, b in zip(*(results[side.name, args.rate] for side in sides), strict=True)]
        ratio = statistics.median(paired)
        of_medians = three["p99_ms"] / one["p99_ms"] if one["p99_ms"] > 0 else float("inf")
        print(f"detail: at {args.rate}/s p99 3 replicas {three['p99_ms']:.1f} ms / 1 replica {one['p99_ms']:.1f} ms "
              f"= {of_medians:.2f} (medians of {args.runs} runs of {args.seconds:g} s, {AGENTS} receivers); paired "
              f"per-run ratios {', '.join(f'{r:.2f}' for r in sorted(paired))}; {cross_replica_share(3):.0%} of the "
              f"3-replica messages cross replicas; lost {one['lost']} and {three['lost']}; goal <= 1.5")
        print(f"ratio {ratio:.2f} (median of {args.runs} paired runs, spread {min(paired):.2f}..{max(paired):.2f})")
        return 0
    finally:
        for side in sides:
            side.stop()
        server.stop()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def p99_ratio(three: Trial, one: Trial) -> float:
    p99_one = percentile(one.latencies(), 0.99)
    return percentile(three.latencies(), 0.99) / p99_one if p99_one > 0 else float("inf")


if __name__ == "__main__":
    sys.exit(main())
