"""Malformed JSON, wrong schema versions, cut and edited files: clear errors, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.notes.draft import load_draft
from signoff.notes.facts import FactsFile, build_facts
from signoff.notes.snapshot import Snapshot
from signoff.notes.verify import verify


def _consume(path: Path) -> None:
    for _ in Snapshot(path).commits():
        pass


def test_malformed_json_everywhere(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "signoff/draft@1", "sentences": [', encoding="utf-8")
    with pytest.raises(UsageError, match=r"draft .* is not valid JSON: .* line 1"):
        load_draft(bad)
    with pytest.raises(UsageError, match=r"snapshot .* is not valid JSON"):
        Snapshot(bad)
    with pytest.raises(UsageError, match=r"facts .* is not valid JSON"):
        FactsFile(bad)
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(UsageError, match="not UTF-8"):
        load_draft(bad)
    with pytest.raises(NotFoundError, match="draft not found"):
        load_draft(tmp_path / "missing.json")


@pytest.mark.parametrize("found, message", [
    ("signoff/draft@2", "schema version 'signoff/draft@2'; this signoff reads 'signoff/draft@1'"),
    ("signoff/facts@1", "has schema 'signoff/facts@1', expected 'signoff/draft@1'"),
    (None, "has schema None"),
])
def test_wrong_schema_for_draft(tmp_path: Path, found: str | None, message: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"schema": found, "sentences": []}), encoding="utf-8")
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_draft(path)


def test_wrong_schema_versions_of_streamed_files(built: tuple[Path, Path], tmp_path: Path) -> None:
    for src, old, new, reader in [(built[0], "signoff/snapshot@1", "signoff/snapshot@0", Snapshot),
                                  (built[1], "signoff/facts@1", "signoff/facts@9", FactsFile)]:
        path = tmp_path / src.name
        path.write_text(src.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
        with pytest.raises(UsageError, match=f"schema version '{new}'"):
            reader(path)
    # a facts file given where a snapshot is expected
    with pytest.raises(UsageError, match="expected 'signoff/snapshot@1'"):
        Snapshot(built[1])


@pytest.mark.parametrize("sentences, message", [
    ("nope", "sentences must be a list"),
    ([{"id": "1", "text": "x", "facts": []}], r"sentences\[0\].id must be an id like S1"),
    ([{"id": "S1", "text": " ", "facts": []}], r"sentences\[0\].text must be a non-empty string"),
    ([{"id": "S1", "text": "x", "facts": "F1"}], r"sentences\[0\].facts must be a list of fact ids"),
    ([{"id": "S1", "text": "x\n# injected", "facts": []}], r"sentences\[0\].text must be one line"),
    ([{"id": "S1", "text": "x", "facts": []}, {"id": "S1", "text": "y", "facts": []}], "appears twice"),
])
def test_draft_shape_errors(tmp_path: Path, sentences: object, message: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"schema": "signoff/draft@1", "sentences": sentences}), encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        load_draft(path)


def test_cut_snapshot_is_detected(built: tuple[Path, Path], tmp_path: Path) -> None:
    lines = built[0].read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.json"
    cut.write_text("".join(lines[:-3]), encoding="utf-8")
    with pytest.raises(UsageError, match="cut short"):
        _consume(cut)
    dropped = tmp_path / "dropped.json"
    dropped.write_text("".join(lines[:2] + lines[3:]), encoding="utf-8")
    with pytest.raises(UsageError, match="says it holds"):
        _consume(dropped)


def test_edited_snapshot_is_detected(built: tuple[Path, Path], tmp_path: Path) -> None:
    text = built[0].read_text(encoding="utf-8")
    edited = tmp_path / "edited.json"
    edited.write_text(text.replace('"added":39', '"added":93', 1), encoding="utf-8")
    assert edited.read_text(encoding="utf-8") != text
    with pytest.raises(UsageError, match="changed after it was taken"):
        build_facts(edited, tmp_path / "f.json")
    assert not [p.name for p in tmp_path.iterdir() if "f.json" in p.name]  # neither the file nor a staged one


def test_snapshot_shape_errors(tmp_path: Path) -> None:
    doc = {"schema": "signoff/snapshot@1", "range": "HEAD", "merges": False,
           "commits": [{"hash": "abc", "parents": [], "subject": "x", "body": "", "files": []}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UsageError, match=r"commits\[0\].hash must be 40 lowercase hex characters"):
        _consume(path)


def test_facts_shape_errors(built: tuple[Path, Path], tmp_path: Path) -> None:
    doc = json.loads(built[1].read_text(encoding="utf-8"))
    doc["facts"][-1]["op"] = "sum"
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UsageError, match=r"facts\[\d+\].op must be ratio or pct_change"):
        verify(built[0], path, [{"id": "S1", "text": "x", "facts": ["F1"]}])
    doc = json.loads(built[1].read_text(encoding="utf-8"))
    doc["facts"][1]["id"] = doc["facts"][0]["id"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UsageError, match="appears twice"):
        FactsFile(path)
