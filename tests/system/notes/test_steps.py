"""The notes pipeline in the steps its room agents take: a hand-off names a file by its digest and
is never a fact; the editor refuses a snapshot git does not reproduce, however consistent the
files are among themselves."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from signoff.kernel.errors import ConflictError, UsageError
from signoff.kernel.settings import Settings
from signoff.notes.documents import SNAPSHOT, dumps_line, write_streamed
from signoff.notes.run import load_review
from signoff.notes.snapshot import Snapshot
from signoff.notes.steps import FIRST_ROUND_FILE, Handoff, edit, revise, run_folder, scout, write_draft
from tests.support.gitrepo import Repo

DIGEST = "ab" * 32


def test_handoff_text_round_trips_and_anything_else_is_not_a_handoff() -> None:
    h = Handoff("review", "notes-1a2b", "draft.r1.json", DIGEST)
    assert Handoff.parse(h.text()) == h
    for text in [
        f"review notes-1a2b facts.json sha256:{DIGEST}",        # a file the verb does not take
        f"draft ../etc facts.json sha256:{DIGEST}",             # out of the runs folder
        f"draft notes..x facts.json sha256:{DIGEST}",
        f"draft Notes facts.json sha256:{DIGEST}",
        f"draft notes-1 facts.json sha256:{DIGEST[:-1]}",       # a short digest
        f"draft notes-1 facts.json sha256:{DIGEST} please",     # trailing words
        f"ship notes-1 facts.json sha256:{DIGEST}",
        "",
    ]:
        assert Handoff.parse(text) is None, text


def test_run_names_stay_under_the_runs_folder(tmp_path: Path) -> None:
    settings = Settings.load(home=str(tmp_path / "home"))
    assert run_folder(settings, "notes-1a2b") == tmp_path / "home" / "notes" / "notes-1a2b"
    for bad in ["../x", "a/b", "..", "", "A"]:
        with pytest.raises(UsageError):
            run_folder(settings, bad)


def _pipeline(history: Repo, folder: Path, settings: Settings, script: str) -> Handoff:
    to_writer = scout(history.path, "v0.1.0..v0.2.0", folder, settings)
    return write_draft(folder, to_writer, settings, script=script)


def test_the_steps_give_the_same_review_as_one_go(history: Repo, tmp_path: Path) -> None:
    settings = Settings.load(home=str(tmp_path / "home"))
    folder = tmp_path / "run"
    to_editor = _pipeline(history, folder, settings, "demo")
    back = edit(folder, to_editor, history.path, settings)
    assert isinstance(back, Handoff) and back.verb == "revise" and back.file == FIRST_ROUND_FILE
    again = revise(folder, back, settings, script="demo")
    assert again.file == "draft.r1.json"
    done = edit(folder, again, history.path, settings)
    assert isinstance(done, dict)
    review = load_review(folder)
    assert [r["round"] for r in review["rounds"]] == [0, 1] and review["draft"] == "draft.r1.json"
    assert any(s["status"] == "rejected" for s in review["rounds"][0]["sentences"])
    assert all(s["status"] == "ok" for s in review["sentences"])


def test_a_file_changed_after_the_handoff_is_refused(history: Repo, tmp_path: Path) -> None:
    settings = Settings.load(home=str(tmp_path / "home"))
    folder = tmp_path / "run"
    to_editor = _pipeline(history, folder, settings, "default")
    draft = json.loads((folder / "draft.json").read_text())
    draft["sentences"][0]["text"] += " "
    (folder / "draft.json").write_text(json.dumps(draft))
    with pytest.raises(ConflictError, match="changed after it was handed over"):
        edit(folder, to_editor, history.path, settings)
    assert not (folder / "review.json").exists()


def test_a_snapshot_git_does_not_reproduce_is_refused(history: Repo, tmp_path: Path) -> None:
    """The attacker has read our code: one commit's line count is raised in the snapshot, its
    content digest recomputed, the facts rebuilt from it and the draft written from those facts.
    Every file agrees with every other and every hand-off digest is honest; only git disagrees."""
    from signoff.notes.facts import build_facts

    settings = Settings.load(home=str(tmp_path / "home"))
    folder = tmp_path / "run"
    scout(history.path, "v0.1.0..v0.2.0", folder, settings)
    snap = Snapshot(folder / "snapshot.json")
    commits = list(snap.commits())
    commits[0]["files"][0]["added"] += 1000
    header = {k: v for k, v in snap.doc.header.items()}
    assert header["schema"] == SNAPSHOT
    digest = hashlib.sha256(dumps_line(header).encode() + b"\n")  # as take_snapshot seeds it
    write_streamed(folder / "snapshot.json", header, "commits", commits, digest=digest)
    assert sum(1 for _ in Snapshot(folder / "snapshot.json").commits()) == len(commits)  # reads as intact
    build_facts(folder / "snapshot.json", folder / "facts.json")
    from signoff.notes.steps import handoff_of

    to_editor = write_draft(folder, handoff_of("draft", folder, "facts.json"), settings)
    with pytest.raises(ConflictError, match="is not what git gives"):
        edit(folder, to_editor, history.path, settings)
    assert not (folder / "review.json").exists()
