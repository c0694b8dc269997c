"""A database writer rewrites history the way someone who has read `ledger/store.py` would: change an
event, recompute every later hash and the stored head. The chain alone cannot see that; signed
checkpoints (key outside the database) and witnesses (a copy a second party keeps) must."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import select, text

from signoff.cli.main import main
from signoff.kernel import canonical_text
from signoff.ledger import NewEvent, SqlLedger, Witness, sign_checkpoint, verify_chain
from signoff.ledger.checkpoints import Checkpointer, stored
from signoff.ledger.schema import chain_head, checkpoints, events
from signoff.ledger.store import GENESIS, event_hash
from signoff.trust import KeyStore
from tests.conftest import wait_for
from tests.support.serve import serve


def _filled(url: str, n: int = 6) -> SqlLedger:
    ledger = SqlLedger.from_url(url)
    for i in range(n):
        ledger.append(f"BUG-{i % 2}", None, [NewEvent("step", {"i": i})])
    return ledger


def _rewrite(ledger: SqlLedger, seq: int, payload: dict[str, object]) -> None:
    """Change one event and recompute every hash after it and the head: a consistent forgery."""
    with ledger.engine.begin() as conn:
        rows = conn.execute(select(events).order_by(events.c.seq)).all()
        prev = GENESIS
        for r in rows:
            body = canonical_text(payload) if int(r.seq) == seq else r.payload
            digest = event_hash(int(r.seq), r.case_id, int(r.version), r.type, body, r.recorded_at, prev)
            conn.execute(events.update().where(events.c.seq == r.seq).values(payload=body, prev_hash=prev,
                                                                              hash=digest))
            prev = digest
        conn.execute(chain_head.update().where(chain_head.c.id == 1).values(hash=prev))


def _append_forged(ledger: SqlLedger, case_id: str, type_: str) -> None:
    """Append a consistent event straight into the tables, as the desk would have."""
    with ledger.engine.begin() as conn:
        seq, prev = conn.execute(select(chain_head.c.seq, chain_head.c.hash)).one()
        version = int(conn.execute(text("SELECT version FROM cases WHERE case_id = :c"), {"c": case_id}).scalar())
        at = "2026-12-01T00:00:00.000000Z"
        digest = event_hash(int(seq) + 1, case_id, version + 1, type_, "{}", at, prev)
        conn.execute(events.insert().values(seq=int(seq) + 1, case_id=case_id, version=version + 1, type=type_,
                                            payload="{}", recorded_at=at, prev_hash=prev, hash=digest))
        conn.execute(text("UPDATE cases SET version = :v WHERE case_id = :c"), {"v": version + 1, "c": case_id})
        conn.execute(chain_head.update().where(chain_head.c.id == 1).values(seq=int(seq) + 1, hash=digest))


@pytest.fixture
def keys(tmp_path: Path) -> KeyStore:
    return KeyStore(tmp_path / "keys")


def test_rewritten_history_before_a_checkpoint_is_found(db_url: str, keys: KeyStore) -> None:
    ledger = _filled(db_url)
    sign_checkpoint(ledger, keys.ensure("ledger"))
    assert verify_chain(ledger).ok, "the forgery below is consistent: the chain alone must not see it"
    _rewrite(ledger, 2, {"i": "forged"})
    assert verify_chain(ledger).ok  # precisely the weakness: hashes alone agree
    report = verify_chain(ledger, trusted=keys.trusted())
    assert not report.ok
    assert "history up to it was rewritten" in (report.problem or "") and report.broken_seq == 6


def test_a_forged_tail_is_named_as_unsigned(db_url: str, keys: KeyStore) -> None:
    ledger = _filled(db_url)
    sign_checkpoint(ledger, keys.ensure("ledger"))
    _append_forged(ledger, "BUG-1", "verification.yes")
    report = verify_chain(ledger, trusted=keys.trusted())
    assert report.ok and report.last_checkpoint == 6 and report.unsigned_tail == 1


def test_a_checkpoint_the_writer_makes_without_the_key_is_refused(db_url: str, keys: KeyStore,
                                                                    tmp_path: Path) -> None:
    ledger = _filled(db_url)
    cp = sign_checkpoint(ledger, keys.ensure("ledger"))
    _rewrite(ledger, 3, {"i": "forged"})
    new_head = ledger.head()[1]
    # the writer re-points the stored checkpoint at the new head, and also signs one with a key of her own
    with ledger.engine.begin() as conn:
        conn.execute(checkpoints.update().where(checkpoints.c.seq == cp.seq).values(head_hash=new_head))
    assert "not signed by a trusted ledger key" in (verify_chain(ledger, trusted=keys.trusted()).problem or "")
    with ledger.engine.begin() as conn:
        conn.execute(checkpoints.delete())
    mallory = KeyStore(tmp_path / "mallory").ensure("ledger")
    sign_checkpoint(ledger, mallory)
    assert "not signed by a trusted ledger key" in (verify_chain(ledger, trusted=keys.trusted()).problem or "")


def test_an_evidence_key_may_not_sign_checkpoints(db_url: str, keys: KeyStore) -> None:
    ledger = _filled(db_url)
    sign_checkpoint(ledger, keys.ensure("verifier"))
    report = verify_chain(ledger, trusted=keys.trusted())
    assert not report.ok and "not signed by a trusted ledger key" in (report.problem or "")


def test_deleting_checkpoints_hides_nothing_from_a_witness(db_url: str, keys: KeyStore, tmp_path: Path) -> None:
    ledger = _filled(db_url)
    witness = tmp_path / "witness" / "checkpoints.jsonl"
    sign_checkpoint(ledger, keys.ensure("ledger"), [str(witness)])
    with ledger.engine.begin() as conn:
        conn.execute(checkpoints.delete())
    _rewrite(ledger, 1, {"i": "forged"})
    alone = verify_chain(ledger, trusted=keys.trusted())
    assert alone.ok and alone.last_checkpoint is None and alone.unsigned_tail == 6
    report = verify_chain(ledger, trusted=keys.trusted(), witness=Witness(str(witness)))
    assert not report.ok and "the witness disagrees" in (report.problem or "")


def test_the_key_holder_cannot_rewrite_witnessed_history(db_url: str, keys: KeyStore, tmp_path: Path) -> None:
    ledger = _filled(db_url)
    witness_db = f"sqlite:///{tmp_path / 'witness.db'}"
    key = keys.ensure("ledger")
    sign_checkpoint(ledger, key, [witness_db])
    with ledger.engine.begin() as conn:
        conn.execute(checkpoints.delete())
    _rewrite(ledger, 4, {"i": "forged"})
    sign_checkpoint(ledger, key)  # re-signed with the real key: only the witness can tell
    assert verify_chain(ledger, trusted=keys.trusted()).ok
    report = verify_chain(ledger, trusted=keys.trusted(), witness=Witness(witness_db))
    assert not report.ok and "the witness disagrees" in (report.problem or "")


def test_a_witnessed_checkpoint_missing_from_the_database_is_a_divergence(db_url: str, keys: KeyStore,
                                                                          tmp_path: Path) -> None:
    ledger = _filled(db_url)
    witness = tmp_path / "w.jsonl"
    sign_checkpoint(ledger, keys.ensure("ledger"), [str(witness)])
    with ledger.engine.begin() as conn:
        conn.execute(checkpoints.delete())
    report = verify_chain(ledger, trusted=keys.trusted(), witness=Witness(str(witness)))
    assert not report.ok and "missing from the database" in (report.problem or "")


def test_cli_checkpoint_and_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    monkeypatch.setenv("SIGNOFF_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    assert main(["ledger", "checkpoint"]) == 2
    assert "nothing to checkpoint" in capsys.readouterr().err
    ledger = SqlLedger.open()
    ledger.append("c", None, [NewEvent("e", {})])
    ledger.append("c", None, [NewEvent("e", {})])
    witness = tmp_path / "their-copy.jsonl"
    assert main(["ledger", "checkpoint", "--witness", str(witness)]) == 0
    capsys.readouterr()
    ledger.append("c", None, [NewEvent("e", {})])
    assert main(["ledger", "verify", "--json", "--witness", str(witness)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["last_checkpoint"] == 2 and out["unsigned_tail"] == 1 and out["witnessed"] == 1
    assert main(["ledger", "verify", "--require-signed"]) == 1
    assert "unsigned tail: 1 event(s)" in capsys.readouterr().out
    assert main(["ledger", "verify", "--witness", str(tmp_path / "nope.jsonl")]) == 2
    assert "witness file not found" in capsys.readouterr().err
    witness.write_text("not json\n")
    assert main(["ledger", "verify", "--witness", str(witness)]) == 1  # an integrity failure, not a usage error
    err = capsys.readouterr().err
    assert err.startswith("error:") and "is not a checkpoint" in err


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str = "") -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIGNOFF_CONFIG", raising=False)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    monkeypatch.setenv("SIGNOFF_HOME", str(tmp_path / "home"))
    if toml:
        (tmp_path / "signoff.toml").write_text(toml)
    return tmp_path / "home"


def test_a_writer_who_recomputes_the_chain_fails_verify_when_nothing_is_signed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The attack: with no signed checkpoint, a database writer changes an event and recomputes every
    later hash and the head. The chain links, so only the missing signature can give it away."""
    _home(tmp_path, monkeypatch)
    ledger = SqlLedger.open()
    for i in range(4):
        ledger.append("BUG-1", None, [NewEvent("step", {"i": i})])
    _rewrite(ledger, 2, {"i": "forged"})
    assert verify_chain(ledger).ok  # the hashes alone agree
    assert main(["ledger", "verify"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no signed checkpoint: all 4 events are unsigned") and "\nfix: " in err
    assert main(["ledger", "verify", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and "no signed checkpoint" in out["problem"] and out["fix"]


def test_deleting_the_checkpoints_after_a_rewrite_fails_verify(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = _home(tmp_path, monkeypatch)
    ledger = SqlLedger.open()
    for i in range(4):
        ledger.append("BUG-1", None, [NewEvent("step", {"i": i})])
    sign_checkpoint(ledger, KeyStore(home / "keys").ensure("ledger"))
    assert main(["ledger", "verify"]) == 0
    _rewrite(ledger, 2, {"i": "forged"})
    assert main(["ledger", "verify"]) == 1  # the signed head no longer matches
    with ledger.engine.begin() as conn:
        conn.execute(checkpoints.delete())  # ... so the writer removes the evidence
    capsys.readouterr()
    assert main(["ledger", "verify"]) == 1
    assert "no signed checkpoint" in capsys.readouterr().err


def test_an_unsigned_tail_longer_than_the_limit_fails_verify(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = _home(tmp_path, monkeypatch, "[ledger]\nunsigned_tail_limit = 2\n")
    ledger = SqlLedger.open()
    ledger.append("c", None, [NewEvent("e", {})])
    sign_checkpoint(ledger, KeyStore(home / "keys").ensure("ledger"))
    for _ in range(2):
        ledger.append("c", None, [NewEvent("e", {})])
    assert main(["ledger", "verify"]) == 0
    assert "unsigned tail: 2 event(s) (limit 2)" in capsys.readouterr().out
    ledger.append("c", None, [NewEvent("e", {})])
    assert main(["ledger", "verify"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 3 events after the last signed checkpoint (seq 1) are unsigned") and "fix:" in err
    (tmp_path / "signoff.toml").write_text("[ledger]\nunsigned_tail_limit = -1\n")
    assert main(["ledger", "verify"]) == 2
    assert "unsigned_tail_limit" in capsys.readouterr().err


def test_an_empty_ledger_needs_no_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _home(tmp_path, monkeypatch)
    assert main(["ledger", "verify"]) == 0


def test_the_checkpointer_signs_only_a_moved_head_and_once_more_when_stopped(db_url: str, keys: KeyStore) -> None:
    ledger = SqlLedger.from_url(db_url)
    signer = Checkpointer(ledger, keys.ensure("ledger"), interval=3600)
    assert signer.sign_if_moved() is None  # nothing to sign yet
    ledger.append("c", None, [NewEvent("e", {})])
    first = signer.sign_if_moved()
    assert first is not None and first.seq == 1
    assert signer.sign_if_moved() is None  # the head did not move
    signer.start()
    ledger.append("c", None, [NewEvent("e", {})])
    signer.stop()  # long before the first scheduled tick: stopping signs what is left
    assert [cp.seq for cp in stored(ledger.engine)] == [1, 2]
    assert verify_chain(ledger, trusted=keys.trusted()).unsigned_tail == 0


def test_signoff_serve_signs_the_head_on_a_schedule(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = tmp_path / "signoff.toml"
    config.write_text("[ledger]\ncheckpoint_seconds = 0.2\n")
    db = f"sqlite:///{home / 'signoff.db'}"
    home.mkdir()
    ledger = SqlLedger.from_url(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    server, url = serve({**env, "SIGNOFF_HOME": str(home), "SIGNOFF_DB": db, "SIGNOFF_CONFIG": str(config)})
    try:
        server.ready(f"{url}/health")
        ledger.append("written-elsewhere", None, [NewEvent("e", {})])
        head = ledger.head()[0]
        assert wait_for(lambda: any(cp.seq >= head for cp in stored(ledger.engine)), timeout=60)
        ledger.append("written-elsewhere", None, [NewEvent("e", {})])
        head = ledger.head()[0]
        assert wait_for(lambda: any(cp.seq >= head for cp in stored(ledger.engine)), timeout=60)
    finally:
        server.stop()
    report = verify_chain(ledger, trusted=KeyStore(home / "keys").trusted())
    assert report.ok and report.last_checkpoint == report.count and report.unsigned_tail == 0
