from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.text import Text
from typer.core import TyperGroup

from signoff import __version__
from signoff.cli.main import app, main
from tests.support.paths import ROOT

GROUPS = ("demo", "doctor", "evidence", "ledger", "airlock", "sandbox", "rooms", "serve", "incident", "notes",
          "repair", "desk", "agents", "mcp", "bridge")


def test_the_cli_page_lists_every_command_group() -> None:
    root = typer.main.get_command(app)
    ctx = typer.Context(root)
    assert isinstance(root, TyperGroup)
    registered = set(root.list_commands(ctx))
    assert registered == set(GROUPS)
    for group in GROUPS:  # each lazily imported module really holds its command
        command = root.get_command(ctx, group)
        assert command is not None and command.name == group
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for group in GROUPS:
        assert f"`signoff {group}" in page, group


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version_and_help_list_every_group(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"signoff {__version__}"
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for group in GROUPS:
        assert group in out


def _help_texts(command: Any, path: str) -> list[tuple[str, str]]:
    """Every help text of `command` and the commands under it: its own, and each option's."""
    texts = [(path, command.help or "")] + [(f"{path} {p.name}", getattr(p, "help", None) or "")
                                            for p in command.params]
    for name, sub in getattr(command, "commands", {}).items():
        texts += _help_texts(sub, f"{path} {name}")
    return [(where, text) for where, text in texts if text]


def test_no_help_text_loses_a_bracketed_word_to_markup() -> None:
    # Typer renders help as Rich markup, where "[rooms]" is a style tag and vanishes: a literal
    # bracket in help must be escaped ("\\[rooms]").
    for where, text in _help_texts(typer.main.get_command(app), "signoff"):
        assert Text.from_markup(text).plain == text.replace("\\[", "["), where


def test_the_crew_help_shows_the_rooms_section_literally(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")  # narrow, as in CI: the help wraps inside its panels
    code, out, _ = run(capsys, "desk", "crew", "--help")
    shown = " ".join(re.sub(r"[\u2500-\u257f]", " ", out).split())  # no box drawing, no line breaks
    assert code == 0
    assert "(default: [rooms] url)" in shown and "With [rooms] url, all of it on that server" in shown
    assert "\\[" not in shown


def test_demo_then_verify_then_tamper(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo", "ledger", "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["ok"] and summary["tamper_detected"] and summary["chain_ok"]
    code, out, _ = run(capsys, "ledger", "verify")
    assert code == 0 and "ledger ok: 3 events" in out
    code, out, _ = run(capsys, "evidence", "verify", summary["evidence"], "--json")
    assert code == 0 and json.loads(out)[0]["ok"]

    import sqlite3

    db = sqlite3.connect(home / "signoff.db")
    db.execute("UPDATE events SET payload = '{}' WHERE seq = 2")
    db.commit()
    db.close()
    code, out, _ = run(capsys, "ledger", "verify", "--json")
    assert code == 1
    assert json.loads(out)["broken_seq"] == 2

    evidence = Path(summary["evidence"])
    evidence.write_bytes(evidence.read_bytes().replace(b'"sig":"', b'"sig":"A', 1))
    code, out, _ = run(capsys, "evidence", "verify", str(evidence))
    assert code == 1 and "FAIL" in out


def test_bad_input_is_a_message_not_a_traceback(home: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(capsys, "evidence", "verify", "no-such-file.json")
    assert code == 1 and "file not found" in out
    code, out, err = run(capsys, "ledger", "show", "nope")
    assert code == 2 and "error:" in err and "fix:" in err and "Traceback" not in err
    monkeypatch.setenv("SIGNOFF_DB", "mysql://nope")
    code, out, err = run(capsys, "ledger", "verify")
    assert code == 2 and "unsupported database URL" in err
    code, out, err = run(capsys, "ledger", "no-such-command")
    assert code == 2 and err.splitlines() == ["error: No such command 'no-such-command'.",
                                              "fix: see `signoff ledger --help`"]


def test_doctor_reports_each_check_with_a_fix(home: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(capsys, "doctor", "--json")
    report = json.loads(out)
    names = {c["name"] for c in report["checks"]}
    assert {"python", "git", "database"} <= names
    assert all(c["fix"] for c in report["checks"] if not c["ok"])
    monkeypatch.setenv("SIGNOFF_DB", "postgresql://nobody@127.0.0.1:1/none")
    code, out, _ = run(capsys, "doctor", "--json")
    report = json.loads(out)
    db = next(c for c in report["checks"] if c["name"] == "database")
    assert code == 1 and not db["ok"] and "SIGNOFF_DB" in db["fix"]


def test_doctor_surfaces_a_check_module_that_cannot_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from signoff.cli.doctor import all_checks
    from signoff.kernel.settings import Settings

    # A check module whose own dependency is missing, once as a required and once as an optional one.
    (tmp_path / "probe_broken_doctor.py").write_text("import signoff_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    s = Settings.load(home=tmp_path / "home")
    for optional in (frozenset(), frozenset({"probe_broken_doctor"})):
        checks = all_checks(s, modules=("probe_broken_doctor",), optional=optional)
        broken = [c for c in checks if c.name == "probe_broken_doctor"]
        assert len(broken) == 1 and not broken[0].ok and broken[0].required and broken[0].fix
        assert "signoff_no_such_dependency" in broken[0].detail
    # An optional module that is absent as a whole adds no check and no failure.
    absent = "probe_absent_doctor"
    names = {c.name for c in all_checks(s, modules=(absent,), optional=frozenset({absent}))}
    assert names == {c.name for c in all_checks(s, modules=())}


def test_repair_verify_loads_no_ledger_rooms_web_or_github_stack(tmp_path: Path) -> None:
    # `signoff repair verify` runs on every candidate: what it imports is paid for each time. The
    # facade `signoff.repair` names the whole workflow, but the verifier needs none of these stacks,
    # and reading its options needs no pydantic (signoff.cli.coercion). cryptography comes only to sign,
    # imported while the sandbox runs (this command stops before that).
    probe = ("import sys, json\n"
             "from signoff.cli.main import _run\n"
             "from signoff.repair import VerifyRequest, verify\n"
             "code = _run(['repair', 'verify', '--repo', 'missing', '--harness', 'h', '--expect', 't.py::t', "
             "'--base', 'a', '--candidate', 'b', '--regression', 't.py::u', '--repeat', '2', '--timeout', '9.5'])\n"
             "print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in "
             "('sqlalchemy', 'alembic', 'httpx', 'fastapi', 'starlette', 'psycopg', 'jinja2', 'pydantic', "
             "'cryptography') "
             "or m.startswith(('signoff.ledger', 'signoff.rooms', 'signoff.github', 'signoff.web')))]))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "SIGNOFF_HOME": str(tmp_path / "home")})
    assert json.loads(done.stdout) == [2, []] and "repository not found: missing" in done.stderr


def test_help_imports_no_other_command_group_and_no_heavy_stack() -> None:
    # `signoff --help` lists the commands from signoff.cli.main's COMMANDS (it imported every group's
    # stack, about 1.5 s, to read their help), and `signoff repair verify --help` needs no verifier.
    from signoff.cli.main import COMMANDS

    probe = ("import contextlib, io, json, sys\n"
             "from signoff.cli import main\n"
             "seen = {}\n"
             "for argv in (['--help'], ['repair', 'verify', '--help']):\n"
             "    with contextlib.redirect_stdout(io.StringIO()):\n"
             "        main.main(argv)\n"
             "    seen[' '.join(argv)] = sorted(sys.modules)\n"
             "print(json.dumps(seen))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    seen = json.loads(done.stdout)
    groups = {module for module, _attr, _help in COMMANDS.values()}
    heavy = ("cryptography", "sqlalchemy", "fastapi", "httpx", "pydantic", "signoff.ledger", "signoff.rooms",
             "signoff.desk", "signoff.repair.verifier", "signoff.sandbox", "signoff.trust")
    assert set(seen) == {"--help", "repair verify --help"}
    for argv, modules in seen.items():
        allowed = {"signoff.cli.repair"} if argv.startswith("repair") else set()
        assert not set(modules) & (groups - allowed), argv
        assert not [m for m in modules if m.split(".")[0] in heavy or m.startswith(heavy)], argv


def test_the_program_ends_at_once_yet_runs_its_exit_handlers_and_keeps_its_output(tmp_path: Path) -> None:
    # Run as the program, signoff skips the interpreter's teardown: what is registered to run at
    # exit must still run, and the output and the exit code must be complete.
    marker = tmp_path / "ran-at-exit"
    probe = ("import atexit, pathlib, sys\n"
             f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('yes'))\n"
             "from signoff.cli.main import main\n"
             "sys.argv = ['signoff', *sys.argv[1:]]\n"
             "print('before', end='')\n"  # buffered, not yet flushed when the command ends
             "main()\n"
             "print('never reached')\n")
    done = subprocess.run([sys.executable, "-c", probe, "--version"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0 and done.stdout == f"beforesignoff {__version__}\n", done
    assert marker.read_text() == "yes"
    bad = subprocess.run([sys.executable, "-c", probe, "no-such-command"], capture_output=True, text=True,
                         timeout=120, check=False)
    assert bad.returncode == 2 and bad.stderr.splitlines()[0].startswith("error: "), bad
