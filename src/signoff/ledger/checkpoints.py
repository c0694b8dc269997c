"""Signed checkpoints of the audit chain, and witnesses that keep copies of them.

The hash chain alone proves only that the rows agree with each other: a database writer can change
an event, recompute every later hash and the stored head, and the chain still links. A checkpoint
is an Ed25519 signature over (position, head hash) made with a key kept outside the database
(`ledger` in the key store). Rewriting anything at or before a signed position changes the hash
there, which the writer cannot re-sign without the key.

The key holder could re-sign a rewritten history. Against that, each checkpoint can also go to a
witness that a second party keeps: a JSON-lines file, or a second database. A witnessed checkpoint
that no longer matches the chain is a divergence, whoever holds the key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError as SAIntegrityError

from signoff.kernel.canonical import canonical_bytes, canonical_text
from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import IntegrityError, UsageError
from signoff.ledger.engine import make_engine, migrate
from signoff.ledger.schema import checkpoints
from signoff.ledger.store import Ledger
from signoff.trust.keys import PublicKey, SigningKey

KEY_NAME = "ledger"
_TYPE = "signoff/ledger-checkpoint@1"


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


def sign_checkpoint(ledger: Ledger, key: SigningKey, witnesses: Iterable[str] = ()) -> Checkpoint:
    """Sign the chain's current head, store it, and hand it to each witness."""
    seq, head_hash = ledger.head()
    if seq == 0:
        raise UsageError("the ledger is empty: there is nothing to checkpoint", "checkpoint after the first event")
    signed_at = utc_iso(ledger.clock.now())
    unsigned = Checkpoint(seq, head_hash, signed_at, key.keyid, "")
    cp = Checkpoint(seq, head_hash, signed_at, key.keyid, key.sign(unsigned.message()).hex())
    _store(ledger.engine, cp)
    for witness in witnesses:
        Witness(witness).record(cp)
    return cp


def stored(engine: Engine) -> list[Checkpoint]:
    with engine.connect() as conn:
        rows = conn.execute(select(checkpoints).order_by(checkpoints.c.seq)).all()
    return [Checkpoint(int(r.seq), r.head_hash, r.signed_at, r.keyid, r.signature) for r in rows]


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

