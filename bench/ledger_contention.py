"""SqlLedger contention: 16 concurrent writers over 64 cases, per-case optimistic concurrency (ours)
against a single versioned JSON document per workspace with compare-and-swap and up to 20 retries
(the baseline, implemented here). Both run in this process, on SQLite and on PostgreSQL.

Usage: python bench/ledger_contention.py [--writers 16] [--cases 64] [--per-writer 60] [--runs 3]
PostgreSQL: SIGNOFF_BENCH_PG=postgresql://... or a throwaway local cluster when the binaries exist.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Engine, text

from signoff.ledger import Event, NewEvent, NewJob, SqlLedger
from signoff.ledger.engine import WRITE, make_engine

MAX_RETRIES = 20


def _timed_processes(writers: int, target: Callable[..., None], args: tuple[object, ...]) -> tuple[float, int]:
    """Start one process per writer (separate processes, as separate workers would be), release them
    together, and time until the last one has made its last write. Returns (seconds, exhausted
    writes summed).

    The clock stops at the last write, not when the processes have exited: 16 interpreters shutting
    down on two cores took about 1.4 s (measured), longer than the writes themselves, and that
    fixed cost, paid by both designs alike, compressed the ratio towards 1."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(writers + 1)
    exhausted = ctx.Value("i", 0)
    finished = ctx.Value("d", 0.0)  # time.monotonic() of the last write any writer made
    procs = [ctx.Process(target=target, args=(i, barrier, exhausted, finished, *args)) for i in range(writers)]
    for p in procs:
        p.start()
    barrier.wait()
    start = time.monotonic()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise SystemExit(f"a writer process failed with exit code {p.exitcode}")
    return float(finished.value) - start, int(exhausted.value)


def _done(finished: Any) -> None:
    """Record that this writer has made its last write (CLOCK_MONOTONIC is one clock for all processes)."""
    now = time.monotonic()
    with finished.get_lock():
        finished.value = max(finished.value, now)


def _ours_writer(i: int, barrier: Any, exhausted: Any, finished: Any,
                 url: str, cases: int, per_writer: int, seed: int) -> None:
    ledger = SqlLedger.from_url(url)
    names = [f"case-{c}" for c in range(cases)]
    rnd = random.Random(seed * 1000 + i)
    barrier.wait()
    for n in range(per_writer):
        case = rnd.choice(names)

        def decide(history: list[Event], n: int = n) -> tuple[list[NewEvent], list[NewJob]]:
            return [NewEvent("transition", {"writer": i, "n": n, "from": len(history)})], []

        ledger.update(case, decide, attempts=1000)
    _done(finished)
    ledger.close()


def _history(cases: int, per_case: int) -> dict[str, list[dict[str, Any]]]:
    """The workspace's past: both designs start from the same events, as a workspace in use would."""
    return {f"case-{c}": [{"writer": -1, "n": n, "note": "earlier work " * 4} for n in range(per_case)]
            for c in range(cases)}


def ours(url: str, writers: int, cases: int, per_writer: int, seed: int, history: int) -> tuple[float, int]:
    ledger = SqlLedger.from_url(url)  # schema and history in place before the clock starts
    for case, past in _history(cases, history).items():
        if past:
            ledger.append(case, 0, [NewEvent("transition", e) for e in past])
    ledger.close()
    seconds, _ = _timed_processes(writers, _ours_writer, (url, cases, per_writer, seed))
    ledger = SqlLedger.from_url(url)
    assert sum(ledger.version(f"case-{c}") for c in range(cases)) == writers * per_writer + cases * history
    ledger.close()
    return seconds, 0


def _baseline_writer(i: int, barrier: Any, exhausted: Any, finished: Any,
                     url: str, cases: int, per_writer: int, seed: int) -> None:
    engine: Engine = make_engine(url)
    rnd = random.Random(seed * 1000 + i)
    lost = 0
    barrier.wait()
    for n in range(per_writer):
        case = f"case-{rnd.randrange(cases)}"
        for attempt in range(MAX_RETRIES):
            with engine.connect() as c:
                row = c.execute(text("SELECT version, doc FROM workspace_doc WHERE id = 1")).one()
                c.rollback()
            state = json.loads(row.doc)
            state[case]["version"] += 1
            state[case]["events"].append({"writer": i, "n": n})
            with engine.connect() as raw_c:
                wc = raw_c.execution_options(**WRITE)
                with wc.begin():
                    res = wc.execute(
                        text("UPDATE workspace_doc SET version = :v, doc = :d WHERE id = 1 AND version = :old"),
                        {"v": row.version + 1, "d": json.dumps(state), "old": row.version},
                    )
            if res.rowcount == 1:
                break
            time.sleep(rnd.uniform(0.001, 0.005) * (attempt + 1))  # the short backoff before re-reading
        else:
            lost += 1
    _done(finished)
    with exhausted.get_lock():
        exhausted.value += lost
    engine.dispose()


def baseline(url: str, writers: int, cases: int, per_writer: int, seed: int, history: int) -> tuple[float, int]:
    """One JSON document per workspace; every transition rewrites it with compare-and-swap."""
    engine: Engine = make_engine(url)
    with engine.connect() as raw:
        conn = raw.execution_options(**WRITE)
        with conn.begin():
            conn.execute(text("CREATE TABLE IF NOT EXISTS workspace_doc (id INTEGER PRIMARY KEY, "
                              "version INTEGER NOT NULL, doc TEXT NOT NULL)"))
            conn.execute(text("DELETE FROM workspace_doc"))
            doc = {case: {"version": len(past), "events": past} for case, past in _history(cases, history).items()}
            conn.execute(text("INSERT INTO workspace_doc VALUES (1, 0, :d)"), {"d": json.dumps(doc)})
    engine.dispose()
    return _timed_processes(writers, _baseline_writer, (url, cases, per_writer, seed))


def fresh_sqlite(folder: Path) -> str:
    return f"sqlite:///{folder / (uuid.uuid4().hex + '.db')}"


def fresh_pg(server: str) -> str:
    import psycopg

    name = "b_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    if "/postgres?" in server:
        return server.replace("/postgres?", f"/{name}?", 1)
    return server.rsplit("/", 1)[0] + "/" + name


def measure(label: str, make_url: Callable[[], str], args: argparse.Namespace) -> float:
    total = args.writers * args.per_writer
    ours_rates: list[float] = []
    base_rates: list[float] = []
    lost: list[int] = []
    for run in range(args.runs):
        # interleave so drift on the machine hits both sides alike
        s, _ = ours(make_url(), args.writers, args.cases, args.per_writer, run, args.history)
        ours_rates.append(total / s)
        s, exhausted = baseline(make_url(), args.writers, args.cases, args.per_writer, run, args.history)
        base_rates.append((total - exhausted) / s)
        lost.append(exhausted)
    o, b = statistics.median(ours_rates), statistics.median(base_rates)
    print(f"[{label}] {args.writers} writer processes x {args.per_writer} transitions over {args.cases} cases "
          f"holding {args.history} earlier events each, {args.runs} runs")
    print(f"[{label}]   per-case ledger : median {o:8.1f} committed/s  (min {min(ours_rates):.1f}, "
          f"max {max(ours_rates):.1f}), exhausted 0")
    print(f"[{label}]   single document : median {b:8.1f} committed/s  (min {min(base_rates):.1f}, "
          f"max {max(base_rates):.1f}), exhausted after {MAX_RETRIES} retries: {lost} of {total} per run")
    print(f"[{label}] ratio {o / b:.2f}")
    return o / b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--cases", type=int, default=64)
    parser.add_argument("--per-writer", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--history", type=int, default=20, help="events per case before the run starts")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="signoff-bench-"))
    ratios = [measure("sqlite", lambda: fresh_sqlite(folder), args)]

    server = os.environ.get("SIGNOFF_BENCH_PG")
    pg = None
    if not server:
        from tests.support.pg import PgServer, pg_bin

        if pg_bin("initdb"):
            pg = PgServer()
            server = pg.start()
    try:
        if server:
            url = server
            ratios.append(measure("postgresql", lambda: fresh_pg(url), args))
        else:
            print("[postgresql] skipped: no server (set SIGNOFF_BENCH_PG or install postgresql)")
    finally:
        if pg is not None:
            pg.stop()
    print(f"ratio {min(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
