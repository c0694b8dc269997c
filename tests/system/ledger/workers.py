"""Functions run in separate processes by the ledger tests (module-level so `spawn` can import them)."""

from __future__ import annotations

import random
import threading
import time

from signoff.ledger import Event, NewEvent, NewJob, Outbox, SqlLedger


def append_many(url: str, writer: str, cases: list[str], count: int, seed: int, threads: int = 1) -> None:
    ledger = SqlLedger.from_url(url)

    def one(tag: str, rnd: random.Random) -> None:
        for n in range(count):
            case = rnd.choice(cases)

            def decide(history: list[Event], tag: str = tag, n: int = n) -> tuple[list[NewEvent], list[NewJob]]:
                return [NewEvent("wrote", {"writer": tag, "n": n, "after": len(history)})], []

            ledger.update(case, decide, attempts=10_000)

    workers = [
        threading.Thread(target=one, args=(f"{writer}.{t}", random.Random(seed * 100 + t))) for t in range(threads)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    ledger.close()


def deliver_forever(url: str, lease: float, seed: int) -> None:
    """An outbox worker whose effect is keyed on the job id; the test kills it at random moments."""
    rnd = random.Random(seed)
    ledger = SqlLedger.from_url(url)
    outbox = Outbox(ledger, lease_seconds=lease)
    while True:
        job = outbox.claim(["effect"])
        if job is None:
            time.sleep(0.02)
            continue
        time.sleep(rnd.random() * 0.03)
        ledger.append("effects", None, [NewEvent("effect", {"job": job.job_id})], idempotency_key=job.job_id)
        time.sleep(rnd.random() * 0.03)  # a kill here leaves an effect without an ack
        outbox.ack(job)
