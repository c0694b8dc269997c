"""Faces reach the notes workflow through its facade only: `signoff.notes` (or its service module),
never an inner module, so the rules stay in the workflow and a face cannot route around them."""

from __future__ import annotations

from pathlib import Path

from signoff.notes import service
from tests.unit.test_layers import ROOT, _imports

FACADE = {"signoff.notes", service.__name__}


def _past(path: Path) -> list[str]:
    return [name for _, name in _imports(path) if name.startswith("signoff.notes.") and name not in FACADE]


def test_no_module_outside_notes_imports_past_its_facade() -> None:
    past = [f"{p.relative_to(ROOT)} imports {name}" for p in sorted(ROOT.rglob("*.py"))
            if p.relative_to(ROOT).parts[0] != "notes" for name in _past(p)]
    assert past == []


def test_the_check_sees_an_import_past_the_facade(tmp_path: Path) -> None:
    face = tmp_path / "face.py"
    face.write_text("import signoff.notes.run\nfrom signoff.notes import NotesService\n"
                    "from signoff.notes.service import NotesService as S\n"
                    "def later() -> None:\n    from signoff.notes.decisions import decide\n")
    assert _past(face) == ["signoff.notes.run", "signoff.notes.decisions"]
