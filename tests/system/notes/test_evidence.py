"""Signed evidence of shipped notes, re-verified offline; tampering from the outside is caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from signoff.kernel.errors import IntegrityError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.notes.evidence import check
from signoff.notes.run import start_run
from signoff.trust import KeyStore, verify_file
from tests.support.deciding import decide, notes_of
from tests.support.gitrepo import Repo


@pytest.fixture
def shipped(history: Repo, tmp_path: Path) -> tuple[Path, Settings]:
    settings = Settings.load(home=str(tmp_path / "home"))
    run = tmp_path / "run"
    start_run(history.path, "v0.1.0..v0.2.0", run, settings)
    ledger = SqlLedger.open(settings)
    decide(ledger, run, "approve all", "alice")
    decide(ledger, run, "reject S2", "bob")
    decide(ledger, run, "ship", "alice")
    ledger.close()
    return run, settings


def _publish(run: Path, settings: Settings, commit_url: str | None = None) -> tuple[str, Path]:
    ledger = SqlLedger.open(settings)
    try:
        return notes_of(ledger).publish(run, settings, commit_url)
    finally:
        ledger.close()


def test_evidence_verifies_offline_and_tampering_fails(shipped: tuple[Path, Settings], tmp_path: Path) -> None:
    run, settings = shipped
    text, path = _publish(run, settings, "https://example.org/c/{hash}")
    trusted = KeyStore(settings.keys_dir).trusted()
    report = verify_file(path, trusted)
    assert report.ok and report.kind == "measured"
    assert any("re-verified" in n for n in report.notes)
    st = report.statement
    assert st is not None and [s["id"] for s in st["predicate"]["sentences"]][:2] == ["S1", "S3"]

    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(path, alone / path.name)
    lone = verify_file(alone / path.name, trusted)
    assert lone.ok and any("not re-verified" in n for n in lone.notes)

    (run / "final.md").write_text(text.replace("This release", "This big release"), encoding="utf-8")
    bad = verify_file(path, trusted)
    assert not bad.ok and "final.md" in (bad.problem or "")


def test_predicate_check_replays_the_run(shipped: tuple[Path, Settings]) -> None:
    run, settings = shipped
    _, path = _publish(run, settings)
    report = verify_file(path, KeyStore(settings.keys_dir).trusted())
    st = report.statement
    assert st is not None
    # A decision slipped into the exported log after signing changes what ships (subject digests aside).
    with (run / "decisions.jsonl").open("a") as fh:
        fh.write(json.dumps({"schema": "signoff/decision@1", "seq": 99, "action": "reject", "target": "S1",
                             "by": "mallory", "at": "2026-12-06T08:00:00Z", "source": "cli"}) + "\n")
    with pytest.raises(IntegrityError, match="differ from the signed ones"):
        check(st, run)
    forged = json.loads(json.dumps(st))
    forged["predicate"]["verdict_ok"] = False
    with pytest.raises(IntegrityError, match="passing verification"):
        check(forged, run)


def test_evidence_of_a_range_between_two_hashes_verifies(history: Repo, tmp_path: Path) -> None:
    """Issue 39: the rendered heading names the range `hash..hash`; the grade supports both hashes
    (the base is not in the range but is the range's own name), so the signed grade passes."""
    settings = Settings.load(home=str(tmp_path / "home"))
    base = history.git("rev-parse", "v0.1.0").strip()
    tip = history.git("rev-parse", "v0.2.0").strip()
    run = tmp_path / "run"
    start_run(history.path, f"{base}..{tip}", run, settings)
    ledger = SqlLedger.open(settings)
    decide(ledger, run, "approve all", "alice")
    decide(ledger, run, "ship", "alice")
    ledger.close()
    text, path = _publish(run, settings)
    assert f"# Release notes: {base}..{tip}" in text
    report = verify_file(path, KeyStore(settings.keys_dir).trusted())
    assert report.ok and any("re-verified" in n for n in report.notes), report.problem
    st = report.statement
    assert st is not None and st["predicate"]["grade"]["claims"]["supported"] == \
        st["predicate"]["grade"]["claims"]["total"]
