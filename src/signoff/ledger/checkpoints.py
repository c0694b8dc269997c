"""Signed checkpoints of the audit chain, and witnesses that keep copies of them.

The hash chain alone proves only that the rows agree with each other: a database writer can change
an event, recompute every later hash and the stored head, and the chain still links. A checkpoint
is an Ed25519 signature over (position, head hash) made with a key kept outside the database
(`ledger` in the key store). Rewriting anything at or before a signed position changes the hash
there, which the writer cannot re-sign without the key.

Checkpoints are the default, not a command to remember: `signoff serve` and the long-running
workers sign the head in the background (`Checkpointer`, every `[ledger] checkpoint_seconds` when
the head moved, and once more when they stop), every `signoff demo` ends with one, and
`signoff ledger verify` fails when more than `[ledger] unsigned_tail_limit` events are unsigned, or
when a non-empty ledger has no checkpoint at all (deleting checkpoint rows is a writer's way to
hide a rewrite).

The key holder could re-sign a rewritten history. Against that, each checkpoint can also go to a
witness that a second party keeps: a JSON-lines file, or a second database. A witnessed checkpoint
that no longer matches the chain is a divergence, whoever holds the key.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from sqlalchemy import Engine, func, insert, select
from sqlalchemy.exc import IntegrityError as SAIntegrityError

from signoff.kernel import metrics
from signoff.kernel.canonical import canonical_bytes, canonical_text
from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import IntegrityError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger.engine import make_engine, migrate
from signoff.ledger.schema import checkpoints
from signoff.ledger.store import SqlLedger
from signoff.trust.keys import KeyStore, PublicKey, SigningKey

KEY_NAME = "ledger"
_TYPE = "signoff/ledger-checkpoint@1"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SigningPolicy:
    """`[ledger]` in signoff.toml: how many events may stay unsigned before `ledger verify` fails,
    and how often a running server or worker signs the head."""

    # A writer without the key can rewrite at most this many of the newest events unnoticed; a
    # server signing every 30 s rarely leaves more than a few behind.
    unsigned_tail_limit: int = 1000
    checkpoint_seconds: float = 30.0

    @classmethod
    def load(cls, settings: Settings) -> SigningPolicy:
        raw = settings.section("ledger")
        unknown = sorted(set(raw) - {"unsigned_tail_limit", "checkpoint_seconds"})
        if unknown:
            raise UsageError(f"unknown [ledger] setting(s): {', '.join(unknown)}",
                             "use only: checkpoint_seconds, unsigned_tail_limit")
        limit = raw.get("unsigned_tail_limit", cls.unsigned_tail_limit)
        every = raw.get("checkpoint_seconds", cls.checkpoint_seconds)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise UsageError("[ledger] unsigned_tail_limit must be a whole number of events, 0 or more",
                             "e.g. unsigned_tail_limit = 1000 (0: every event must be signed)")
        if not isinstance(every, int | float) or isinstance(every, bool) or not 0 < every <= 86400:
            raise UsageError("[ledger] checkpoint_seconds must be a number of seconds, above 0 and at most a day",
                             "e.g. checkpoint_seconds = 30")
        return cls(limit, float(every))


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    head_hash: str
    signed_at: str
    keyid: str
    signature: str  # hex

    def message(self) -> bytes:
        return canonical_bytes({"type": _TYPE, "seq": self.seq, "head": self.head_hash, "signed_at": self.signed_at})

    def signer(self, trusted: dict[str, PublicKey]) -> PublicKey | None:
        """The trusted ledger key that made this signature, or None when no such key did."""
        key = trusted.get(self.keyid)
        if key is None or not is_ledger_key(key.name):
            return None
        try:
            raw = bytes.fromhex(self.signature)
        except ValueError:
            return None
        return key if key.verify(raw, self.message()) else None


def is_ledger_key(name: str) -> bool:
    """Only keys named for the ledger may sign checkpoints (a trusted evidence key may not)."""
    return name == KEY_NAME or name.startswith(KEY_NAME + "-")


def sign_checkpoint(ledger: SqlLedger, key: SigningKey, witnesses: Iterable[str] = ()) -> Checkpoint:
    """Sign the chain's current head, store it, and hand it to each witness."""
    seq, head_hash = ledger.head()
    if seq == 0:
        raise UsageError("the ledger is empty: there is nothing to checkpoint", "checkpoint after the first event")
    signed_at = utc_iso(ledger.clock.now())
    unsigned = Checkpoint(seq, head_hash, signed_at, key.keyid, "")
    cp = Checkpoint(seq, head_hash, signed_at, key.keyid, key.sign(unsigned.message()).hex())
    _store(ledger.engine, cp)
    metrics.count("signoff_ledger_checkpoints_total")
    for witness in witnesses:
        Witness(witness).record(cp)
    return cp


def last_signed(engine: Engine, keyid: str) -> int:
    """The highest position a stored checkpoint of `keyid` names (0: none)."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.max(checkpoints.c.seq)).where(checkpoints.c.keyid == keyid)).scalar()
                   or 0)


class Checkpointer:
    """Signs the chain head in the background every `interval` seconds when it moved since this
    key's last checkpoint, and once more when stopped, so a running process leaves no long unsigned
    tail and a one-shot one leaves none."""

    def __init__(self, ledger: SqlLedger, key: SigningKey, interval: float, witnesses: Iterable[str] = ()) -> None:
        self.ledger, self.key, self.interval, self.witnesses = ledger, key, interval, list(witnesses)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sign_if_moved(self) -> Checkpoint | None:
        seq, _ = self.ledger.head()
        if seq == 0 or seq <= last_signed(self.ledger.engine, self.key.keyid):
            return None
        return sign_checkpoint(self.ledger, self.key, self.witnesses)

    def _tick(self) -> None:
        try:
            self.sign_if_moved()
        except Exception:  # a busy or unreachable database: the next tick signs, verify shows the tail
            log.warning("could not sign a ledger checkpoint; trying again in %.0f s", self.interval, exc_info=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._tick()

    def start(self) -> Checkpointer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="ledger-checkpoints", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._tick()


def checkpointer(ledger: SqlLedger, settings: Settings) -> Checkpointer:
    """The checkpointer of this home: the `ledger` key of its key store, `[ledger] checkpoint_seconds`."""
    policy = SigningPolicy.load(settings)
    return Checkpointer(ledger, KeyStore(settings.keys_dir).ensure(KEY_NAME), policy.checkpoint_seconds)


@contextmanager
def checkpointing(ledger: SqlLedger, settings: Settings) -> Iterator[Checkpointer]:
    """Sign the head in the background while the block runs, and once more when it ends."""
    signer = checkpointer(ledger, settings).start()
    try:
        yield signer
    finally:
        signer.stop()


def stored(engine: Engine) -> list[Checkpoint]:
    with engine.connect() as conn:
        rows = conn.execute(select(checkpoints).order_by(checkpoints.c.seq)).all()
    return [Checkpoint(int(r.seq), r.head_hash, r.signed_at, r.keyid, r.signature) for r in rows]


def last_signed_at(engine: Engine) -> str | None:
    """When the newest stored checkpoint was signed (RFC 3339 UTC), or None when there is none."""
    with engine.connect() as conn:
        found = conn.execute(select(func.max(checkpoints.c.signed_at))).scalar()
    return None if found is None else str(found)


def _store(engine: Engine, cp: Checkpoint) -> None:
    try:
        with engine.begin() as conn:
            conn.execute(insert(checkpoints).values(**asdict(cp)))
    except SAIntegrityError:
        # A checkpoint of this position exists: keep the first (re-signing the same head adds nothing).
        return


class Witness:
    """A copy of checkpoints kept by a second party: a JSON-lines file, or a database URL."""

    def __init__(self, where: str) -> None:
        if not where:
            raise UsageError("empty witness", "name a file or a database URL")
        self.where = where
        self.is_database = where.startswith(("sqlite:", "postgresql"))

    def record(self, cp: Checkpoint) -> None:
        if self.is_database:
            engine = make_engine(self.where)
            try:
                migrate(engine)
                _store(engine, cp)
            finally:
                engine.dispose()
            return
        path = Path(self.where)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = (canonical_text(asdict(cp)) + "\n").encode()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> list[Checkpoint]:
        if self.is_database:
            engine = make_engine(self.where)
            try:
                migrate(engine)
                return stored(engine)
            finally:
                engine.dispose()
        path = Path(self.where)
        if not path.is_file():
            raise UsageError(f"witness file not found: {path}",
                             "pass the file that `signoff ledger checkpoint --witness` wrote")
        found: list[Checkpoint] = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                found.append(Checkpoint(int(raw["seq"]), str(raw["head_hash"]), str(raw["signed_at"]),
                                        str(raw["keyid"]), str(raw["signature"])))
            except (ValueError, KeyError, TypeError) as exc:
                raise IntegrityError(f"witness {path} line {n} is not a checkpoint",
                                     "the witness file was damaged; ask its keeper for their copy") from exc
        return found

