"""Human decisions: events of the run's ledger case, replayed in order, last decision wins; ship
refuses and says why; decisions.jsonl is an export, checked line by line when read offline."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.notes.checks import exported_state, read_decisions
from signoff.notes.model import DECISION, Decided, replay, text_digest
from signoff.notes.render import render
from signoff.notes.run import start_run
from tests.support.deciding import decide, decisions, notes_of, state_of
from tests.support.gitrepo import Repo


def export_decisions(ledger: SqlLedger, run: Path) -> Path:
    return notes_of(ledger).export(run)


@pytest.fixture(scope="module")
def template(history: Repo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("notes-run")
    settings = Settings.load(home=str(folder / "home"))
    start_run(history.path, "v0.1.0..v0.2.0", folder / "run", settings)
    return folder / "run"


@pytest.fixture
def run(template: Path, tmp_path: Path) -> Path:
    shutil.copytree(template, tmp_path / "run")
    return tmp_path / "run"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(home=str(tmp_path / "home"))


@pytest.fixture
def ledger(settings: Settings) -> Iterator[SqlLedger]:
    opened = SqlLedger.open(settings)
    yield opened
    opened.close()


def _status(ledger: SqlLedger, run: Path) -> dict[str, str]:
    return {s.id: s.status for s in state_of(ledger, run).sentences}


def test_approve_all_then_edit_then_reject_last_wins(ledger: SqlLedger, run: Path) -> None:
    decide(ledger, run, "approve all", "alice")
    assert set(_status(ledger, run).values()) == {"approved"}
    state = decide(ledger, run, "edit S2 The changes touch many files.", "bob")
    assert state.get("S2").status == "pending" and state.get("S2").edited
    state = decide(ledger, run, "reject S2", "carol")
    assert state.get("S2").status == "rejected"
    assert _status(ledger, run)["S1"] == "approved"
    assert [d["action"] for d in decisions(ledger, run)] == ["approve", "edit", "reject"]
    # ... and in the other order the approval wins, over the edited text.
    state = decide(ledger, run, "approve S2", "alice")
    assert state.get("S2").status == "approved" and state.get("S2").text == "The changes touch many files."


def test_reject_then_approve_all_approves_again(ledger: SqlLedger, run: Path) -> None:
    decide(ledger, run, "reject S1", "alice")
    decide(ledger, run, "approve all", "bob")
    assert _status(ledger, run)["S1"] == "approved"


def test_ship_refuses_and_names_each_blocker(ledger: SqlLedger, run: Path) -> None:
    with pytest.raises(RefusedError, match="S1: not approved"):
        decide(ledger, run, "ship", "alice")
    decide(ledger, run, "approve all", "alice")
    decide(ledger, run, "edit S1 This release brings 12 commits.", "bob")
    with pytest.raises(RefusedError) as err:
        decide(ledger, run, "ship", "alice")
    assert "S1: not approved since its edit; NUMBER_UNSUPPORTED '12'" in err.value.message
    # A sentence that no longer verifies cannot be approved: refused with the verifier's codes.
    with pytest.raises(RefusedError, match="S1 does not verify: NUMBER_UNSUPPORTED '12'"):
        decide(ledger, run, "approve S1", "alice")
    with pytest.raises(RefusedError, match="S1: not approved since its edit; NUMBER_UNSUPPORTED '12'"):
        decide(ledger, run, "ship", "alice")
    assert [d["action"] for d in decisions(ledger, run)] == ["approve", "edit"]  # refusals not written
    decide(ledger, run, "reject S1", "alice")
    state = decide(ledger, run, "ship", "alice")
    assert state.shipped
    with pytest.raises(RefusedError, match="has shipped"):
        decide(ledger, run, "approve S1", "alice")
    text = render(run, state)
    assert "12 commits" not in text and "[F" in text and "## Facts" in text


def test_edited_sentence_that_verifies_can_ship(ledger: SqlLedger, run: Path) -> None:
    decide(ledger, run, "approve all", "alice")
    s1 = state_of(ledger, run).get("S1")
    new = s1.text.replace("This release brings", "This range holds")
    decide(ledger, run, f"edit S1 {new}", "bob")
    decide(ledger, run, "approve S1", "alice")
    state = decide(ledger, run, "ship", "alice")
    assert state.shipped
    assert new in render(run, state)


def test_approve_all_skips_a_sentence_that_does_not_verify(ledger: SqlLedger, run: Path) -> None:
    decide(ledger, run, "edit S1 This release brings 12 commits.", "bob")
    state = decide(ledger, run, "approve all", "alice")
    s1 = state.get("S1")
    assert s1.status == "pending" and "does not verify: NUMBER_UNSUPPORTED '12'" in s1.notes[0]
    assert all(s.status == "approved" for s in state.sentences if s.id != "S1")
    (recorded,) = [d for d in decisions(ledger, run) if d["action"] == "approve"]
    assert "S1" not in recorded["digests"] and "S1" in recorded["unverified"]
    # ... and the export, replayed offline, gives the same state.
    export_decisions(ledger, run)
    assert exported_state(run).get("S1").status == "pending"


def test_approve_all_refused_when_nothing_verifies(ledger: SqlLedger, run: Path) -> None:
    for s in state_of(ledger, run).sentences:
        decide(ledger, run, f"edit {s.id} About 4242 things changed.", "bob")
    before = decisions(ledger, run)
    with pytest.raises(RefusedError, match="cannot approve: S1 does not verify"):
        decide(ledger, run, "approve all", "alice")
    assert decisions(ledger, run) == before


def test_preview_renders_the_approved_sentences_before_ship(ledger: SqlLedger, run: Path) -> None:
    from signoff.notes.grade import grade_text
    from signoff.notes.render import preview

    assert "- " not in preview(run, state_of(ledger, run)).split("## Facts")[0]  # nothing approved yet
    state = decide(ledger, run, "approve S1", "alice")
    text = preview(run, state)
    s1 = state.get("S1")
    assert f"- {s1.text} " + "".join(f"[{f}]" for f in s1.facts) in text
    assert all(s.text not in text for s in state.sentences if s.id != "S1")
    graded = grade_text(text, "preview.md", run / "snapshot.json")
    assert graded["ok"] and graded["file"] == "preview.md"
    assert grade_text("We made it 77% faster in 19 commits.", "one-shot.md", run / "snapshot.json")["ok"] is False


def test_render_refuses_before_ship(ledger: SqlLedger, run: Path) -> None:
    with pytest.raises(RefusedError, match="not shipped"):
        render(run, state_of(ledger, run))


@pytest.mark.parametrize("command, message", [
    ("frobnicate S1", "not a decision"),
    ("approve", "needs a sentence id"),
    ("approve S99", "no sentence S99"),
    ("edit S1", "needs the new text"),
    ("reject S1 please", "takes nothing after the id"),
    ("ship now", "takes no argument"),
    ("edit S1 first line\n# injected heading", "line break"),
])
def test_bad_commands_leave_the_log_untouched(ledger: SqlLedger, run: Path, command: str, message: str) -> None:
    decide(ledger, run, "approve S1", "alice")
    before = (ledger.count_events(), decisions(ledger, run))
    with pytest.raises(UsageError, match=message):
        decide(ledger, run, command, "alice")
    assert (ledger.count_events(), decisions(ledger, run)) == before


def test_approval_binds_the_text_it_saw(ledger: SqlLedger, run: Path) -> None:
    """An exported decisions file edited to move an approval onto other text grants nothing when it
    is replayed offline, and changes nothing in the record (the ledger)."""
    decide(ledger, run, "approve S1", "alice")
    lines = export_decisions(ledger, run).read_text().splitlines()
    assert exported_state(run).get("S1").status == "approved"
    rec = json.loads(lines[0])
    rec["digests"]["S1"] = text_digest("something else")
    (run / "decisions.jsonl").write_text(json.dumps(rec) + "\n")
    state = exported_state(run)
    assert state.get("S1").status == "pending" and "other text" in state.get("S1").notes[0]
    assert state_of(ledger, run).get("S1").status == "approved"


def test_the_ledger_is_the_record_and_the_file_an_export(ledger: SqlLedger, run: Path) -> None:
    decide(ledger, run, "approve all", "alice")
    decide(ledger, run, "reject S2", "bob")
    assert not (run / "decisions.jsonl").exists()  # deciding writes no file
    recorded = decisions(ledger, run)
    assert [d["seq"] for d in recorded] == [1, 2]
    assert [d.payload() for d in read_decisions(export_decisions(ledger, run).parent)] == recorded
    (run / "decisions.jsonl").unlink()
    assert _status(ledger, run)["S2"] == "rejected"  # nothing is lost with the export
    # A copy of the run folder is the same run: its decisions are the same case's.
    copy = run.parent / "copy"
    shutil.copytree(run, copy)
    assert decisions(ledger, copy) == recorded


def test_replay_is_pure_and_ordered() -> None:
    sentences = [{"id": "S1", "text": "a", "facts": ["F1"]}, {"id": "S2", "text": "b", "facts": ["F1"]}]
    log = [
        {"action": "approve", "target": "all", "digests": {"S1": text_digest("a"), "S2": text_digest("b")}},
        {"action": "edit", "target": "S2", "text": "c"},
        {"action": "approve", "target": "S2", "digests": {"S2": text_digest("b")}},  # stale: for old text
        {"action": "reject", "target": "S1"},
    ]
    state = replay(sentences, [Decided.model_validate({"schema": DECISION, "seq": n, "at": "2026-12-06T08:00:00Z",
                                                       "by": "alice", "source": "cli", **d})
                               for n, d in enumerate(log, 1)])
    assert (state.get("S1").status, state.get("S2").status, state.get("S2").text) == ("rejected", "pending", "c")


def test_malformed_decisions_file(ledger: SqlLedger, run: Path) -> None:
    (run / "decisions.jsonl").write_text('{"schema": "signoff/decision@2", "action": "ship"}\n')
    with pytest.raises(UsageError, match="decision@2"):
        exported_state(run)
    (run / "decisions.jsonl").write_text("{not json\n")
    with pytest.raises(UsageError, match="not valid JSON"):
        exported_state(run)
    (run / "decisions.jsonl").write_text('{"schema": "signoff/decision@1", "action": "delete"}\n')
    with pytest.raises(UsageError, match="unknown action"):
        exported_state(run)
    # A damaged export is not the record: deciding reads the ledger and is not misled by it.
    assert decide(ledger, run, "approve S1", "alice").get("S1").status == "approved"


def test_review_and_new_run_refused_once_decided(ledger: SqlLedger, settings: Settings, run: Path,
                                                  history: Repo) -> None:
    from signoff.notes.run import review

    decide(ledger, run, "approve S1", "alice")
    with pytest.raises(RefusedError, match="already has human decisions"):
        review(run, settings)
    with pytest.raises(UsageError, match="already holds a run"):
        start_run(history.path, None, run, settings)


def test_a_run_with_a_decisions_file_is_not_reviewed_again(ledger: SqlLedger, settings: Settings, run: Path,
                                                           history: Repo, tmp_path: Path) -> None:
    """A run decided before decisions moved into the ledger has only its file; it still counts."""
    from signoff.notes.run import review

    decide(ledger, run, "approve S1", "alice")
    export_decisions(ledger, run)
    elsewhere = Settings.load(home=str(tmp_path / "another-home"))  # a ledger without those decisions
    with pytest.raises(RefusedError, match="already has human decisions"):
        review(run, elsewhere)
    with pytest.raises(UsageError, match="already holds a run"):
        start_run(history.path, None, run, elsewhere)
