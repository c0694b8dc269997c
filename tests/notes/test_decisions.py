"""Human decisions: append-only, replayed in order, last decision wins; ship refuses and says why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.settings import Settings
from signoff.notes.decisions import decide, read_decisions, replay, state_of, text_digest
from signoff.notes.render import render
from signoff.notes.run import start_run
from tests.notes.gitrepo import Repo


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


def _status(run: Path) -> dict[str, str]:
    return {s.id: s.status for s in state_of(run).sentences}


def test_approve_all_then_edit_then_reject_last_wins(run: Path) -> None:
    decide(run, "approve all", "alice")
    assert set(_status(run).values()) == {"approved"}
    state = decide(run, "edit S2 The changes touch many files.", "bob")
    assert state.get("S2").status == "pending" and state.get("S2").edited
    state = decide(run, "reject S2", "carol")
    assert state.get("S2").status == "rejected"
    assert _status(run)["S1"] == "approved"
    assert [d["action"] for d in read_decisions(run)] == ["approve", "edit", "reject"]
    # ... and in the other order the approval wins, over the edited text.
    state = decide(run, "approve S2", "alice")
    assert state.get("S2").status == "approved" and state.get("S2").text == "The changes touch many files."


def test_reject_then_approve_all_approves_again(run: Path) -> None:
    decide(run, "reject S1", "alice")
    decide(run, "approve all", "bob")
    assert _status(run)["S1"] == "approved"


def test_ship_refuses_and_names_each_blocker(run: Path) -> None:
    with pytest.raises(RefusedError, match="S1: not approved"):
        decide(run, "ship", "alice")
    decide(run, "approve all", "alice")
    decide(run, "edit S1 This release brings 12 commits.", "bob")
    with pytest.raises(RefusedError) as err:
        decide(run, "ship", "alice")
    assert "S1: not approved since its edit; NUMBER_UNSUPPORTED '12'" in err.value.message
    decide(run, "approve S1", "alice")
    with pytest.raises(RefusedError, match="S1: NUMBER_UNSUPPORTED '12'"):
        decide(run, "ship", "alice")
    assert [d["action"] for d in read_decisions(run)] == ["approve", "edit", "approve"]  # refusals not written
    decide(run, "reject S1", "alice")
    state = decide(run, "ship", "alice")
    assert state.shipped
    with pytest.raises(RefusedError, match="has shipped"):
        decide(run, "approve S1", "alice")
    text = render(run)
    assert "12 commits" not in text and "[F" in text and "## Facts" in text


def test_edited_sentence_that_verifies_can_ship(run: Path) -> None:
    decide(run, "approve all", "alice")
    s1 = state_of(run).get("S1")
    new = s1.text.replace("This release brings", "This range holds")
    decide(run, f"edit S1 {new}", "bob")
    decide(run, "approve S1", "alice")
    assert decide(run, "ship", "alice").shipped
    assert new in render(run)


def test_render_refuses_before_ship(run: Path) -> None:
    with pytest.raises(RefusedError, match="not shipped"):
        render(run)


@pytest.mark.parametrize("command, message", [
    ("frobnicate S1", "not a decision"),
    ("approve", "needs a sentence id"),
    ("approve S99", "no sentence S99"),
    ("edit S1", "needs the new text"),
    ("reject S1 please", "takes nothing after the id"),
    ("ship now", "takes no argument"),
    ("edit S1 first line\n# injected heading", "line break"),
])
def test_bad_commands_leave_the_log_untouched(run: Path, command: str, message: str) -> None:
    decide(run, "approve S1", "alice")
    before = (run / "decisions.jsonl").read_bytes()
    with pytest.raises(UsageError, match=message):
        decide(run, command, "alice")
    assert (run / "decisions.jsonl").read_bytes() == before


def test_approval_binds_the_text_it_saw(run: Path) -> None:
    """A decisions file edited to move an approval onto other text grants nothing."""
    decide(run, "approve S1", "alice")
    lines = (run / "decisions.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["digests"]["S1"] = text_digest("something else")
    (run / "decisions.jsonl").write_text(json.dumps(rec) + "\n")
    state = state_of(run)
    assert state.get("S1").status == "pending" and "other text" in state.get("S1").notes[0]


def test_replay_is_pure_and_ordered() -> None:
    sentences = [{"id": "S1", "text": "a", "facts": ["F1"]}, {"id": "S2", "text": "b", "facts": ["F1"]}]
    log = [
        {"action": "approve", "target": "all", "digests": {"S1": text_digest("a"), "S2": text_digest("b")}},
        {"action": "edit", "target": "S2", "text": "c"},
        {"action": "approve", "target": "S2", "digests": {"S2": text_digest("b")}},  # stale: for old text
        {"action": "reject", "target": "S1"},
    ]
    state = replay(sentences, log)
    assert (state.get("S1").status, state.get("S2").status, state.get("S2").text) == ("rejected", "pending", "c")


def test_malformed_decisions_file(run: Path) -> None:
    (run / "decisions.jsonl").write_text('{"schema": "signoff/decision@2", "action": "ship"}\n')
    with pytest.raises(UsageError, match="decision@2"):
        state_of(run)
    (run / "decisions.jsonl").write_text("{not json\n")
    with pytest.raises(UsageError, match="not valid JSON"):
        decide(run, "approve S1", "alice")


def test_review_and_new_run_refused_once_decided(run: Path, history: Repo, tmp_path: Path) -> None:
    from signoff.notes.run import review

    decide(run, "approve S1", "alice")
    settings = Settings.load(home=str(tmp_path / "home"))
    with pytest.raises(RefusedError, match="already has human decisions"):
        review(run, settings)
    with pytest.raises(UsageError, match="already holds a run"):
        start_run(history.path, None, run, settings)
