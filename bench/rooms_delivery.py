"""Delivery latency of signoff rooms vs Synapse (the Matrix homeserver Switch uses as its bus).

Twenty agents hold live streams; one sender posts messages addressed to them in turn, at rising
rates, open loop (each send starts on schedule, whether or not the previous one finished). For each
message we time send start -> arrival at the addressed receiver.

- signoff: `signoff serve` in its own process on a throwaway PostgreSQL cluster (`--db sqlite`: on
  a SQLite file); receivers are `RoomsClient`s over HTTP (SSE, filter=addressed, 2 s heartbeats);
  the sender calls `send_targeted_message`.
- Synapse: installed with pip into a throwaway venv (cached as for the tests; never a project dependency),
  SQLite, rate limits lifted; receivers long-poll `/sync` on the room; the sender `PUT`s
  `m.room.message` events (the same send-to-sync round trip Switch's bus makes).

Prints per system and rate: p50 and p99 latency (median over runs, with min..max), lost messages,
the send rate the server actually accepted, and the highest rate sustained without loss (every
message delivered, sends accepted at >= 95% of the offered rate); then `ratio <x>` = Synapse p99 /
signoff p99 at 200 messages/s (the goal is at least 2). The machine's other load hits both systems
alike: runs are interleaved.

    python bench/rooms_delivery.py [--rates 50,100,200,400] [--seconds 5] [--runs 3] [--db postgres|sqlite]
        [--synapse-venv DIR] [--signoff-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rooms_load import AGENTS, Deployment, SendSpec, Trial, drive, fresh_database, measure, nonce_of, summarise

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support: the one Synapse harness

from tests.support.pg import PgServer
from tests.support.synapse import Synapse
from tests.support.synapse import synapse_python as cached_synapse_python

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

    async def open(self) -> None:
        """Nothing to connect ahead: each run long-polls /sync afresh."""

    async def close(self) -> None:
        """Nothing left open between runs."""

    def stop(self) -> None:
        self.server.stop()


# -- main --------------------------------------------------------------------------------------

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
    parser.add_argument("--db", choices=("postgres", "sqlite"), default="postgres",
                        help="signoff's database: a throwaway PostgreSQL cluster (default) or a SQLite file")
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="rooms-bench-"))
    pg = PgServer() if args.db == "postgres" else None
    sides: list[Any] = []
    try:
        db = fresh_database(pg.start(), "bench_delivery") if pg is not None else f"sqlite:///{tmp / 'signoff.db'}"
        sides.append(Deployment(tmp / "signoff", db, name="signoff"))
        if not args.signoff_only:
            sides.append(SynapseSide(tmp, synapse_python(args.synapse_venv)))
        for side in sides:
            side.start()
        results = asyncio.run(measure(sides, rates, args.runs, args.seconds))
        rows = [summarise(name, rate, trials) for (name, rate), trials in results.items()]
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
        for side in sides:
            side.stop()
        if pg is not None:
            pg.stop()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
