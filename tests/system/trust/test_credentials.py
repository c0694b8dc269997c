"""trust.credentials: one way to mint, digest and compare tokens, and a shared secret that racing
processes agree on."""

from __future__ import annotations

import multiprocessing
import stat
from multiprocessing.synchronize import Barrier
from pathlib import Path

from signoff.trust import credentials

RACERS = 8


def _race(path: str, barrier: Barrier, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    barrier.wait()  # every process starts the creation at once
    out.put(credentials.shared_secret(Path(path)))


def test_racing_processes_end_up_with_one_secret(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    for attempt in range(3):
        path = tmp_path / f"home{attempt}" / "desk" / "webhook.secret"
        barrier = ctx.Barrier(RACERS)
        out = ctx.Queue()
        procs = [ctx.Process(target=_race, args=(str(path), barrier, out)) for _ in range(RACERS)]
        for p in procs:
            p.start()
        secrets = [out.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
        assert len(set(secrets)) == 1 and len(secrets[0]) >= 40
        assert path.read_text().strip().encode() == secrets[0]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert [p.name for p in path.parent.iterdir()] == ["webhook.secret"]  # no temporary file left behind


def test_an_existing_secret_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "webhook.secret"
    first = credentials.shared_secret(path)
    assert credentials.shared_secret(path) == first


def test_tokens_are_prefixed_digested_and_compared() -> None:
    token = credentials.mint("dke")
    assert token.startswith("dke_") and len(token) > 40 and credentials.mint("dke") != token
    stored = credentials.digest(token)
    assert len(stored) == 64 and token not in stored
    assert credentials.matches(stored, token)
    assert not credentials.matches(stored, token + "x") and not credentials.matches(stored, "")
