"""What a person reads is never hard-wrapped off a terminal, whatever COLUMNS says and however long
the path; on a terminal it fits the terminal without losing a character."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from signoff.cli.main import main
from tests.system.cli.terminal import on_pipes, on_terminal

FIX = "fix: pass a TOML file describing the contract"


def _long_folder(base: Path) -> Path:
    # Longer than any terminal here, with markup-like brackets that must come out as typed.
    folder = base / ("a-folder-with-a-long-name-[red]-" * 6) / ("and-another-one-" * 6)
    folder.mkdir(parents=True)
    assert len(str(folder)) > 250
    return folder


def _missing_contract(folder: Path) -> list[str]:
    return ["repair", "watch", "--room", "r", "--operator", "o", "--contract", str(folder / "contract.toml")]


def test_error_with_a_long_path_is_two_whole_lines_off_a_terminal(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _long_folder(home.parent)
    expected = [f"error: contract file not found: {folder / 'contract.toml'}", FIX]
    monkeypatch.setenv("COLUMNS", "40")
    assert main(_missing_contract(folder)) == 2
    assert capsys.readouterr().err.splitlines() == expected
    # A fresh process reads COLUMNS=40 when its consoles are made: still two whole lines.
    done = on_pipes(_missing_contract(folder), 40, home.parent)
    assert done.returncode == 2 and done.stderr.splitlines() == expected and done.stdout == ""


def test_error_with_a_long_path_is_not_broken_on_a_narrow_terminal(home: Path) -> None:
    folder = _long_folder(home.parent)
    code, text = on_terminal(_missing_contract(folder), 40, home.parent)
    assert code == 2
    # The terminal wraps the line on screen; the bytes hold the message and the fix whole.
    assert text.splitlines() == [f"error: contract file not found: {folder / 'contract.toml'}", FIX]


def test_doctor_shows_the_database_path_whole_on_one_line_off_a_terminal(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _long_folder(home.parent)
    monkeypatch.setenv("SIGNOFF_HOME", str(folder / ".signoff"))
    monkeypatch.setenv("COLUMNS", "40")
    main(["doctor"])
    out = capsys.readouterr().out
    database = folder / ".signoff" / "signoff.db"
    row = next(line for line in out.splitlines() if " database " in line)
    assert str(database) in row and "…" not in out


def test_doctor_folds_the_database_path_on_a_terminal_without_cutting_it(home: Path) -> None:
    folder = _long_folder(home.parent)
    database = folder / ".signoff" / "signoff.db"
    _, text = on_terminal(["doctor"], 80, home.parent, {"SIGNOFF_HOME": str(folder / ".signoff")})
    lines = text.splitlines()
    assert "…" not in text and all(len(line) <= 80 for line in lines)
    # The rows of the database check, read cell by cell: the detail column holds the whole path.
    start = next(i for i, line in enumerate(lines) if "│ database" in line)
    row = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("│") or line.split("│")[1].strip():
            break
        row.append(line)
    detail = "".join(line.split("│")[3].strip() for line in row)
    assert str(database) in detail


def test_json_output_is_unchanged_by_a_narrow_width(home: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _long_folder(home.parent)
    monkeypatch.setenv("SIGNOFF_HOME", str(folder / ".signoff"))
    monkeypatch.setenv("COLUMNS", "40")
    main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    db = next(c for c in report["checks"] if c["name"] == "database")
    assert str(folder / ".signoff" / "signoff.db") in db["detail"]
