"""`signoff notes` on bad input, in process: a message and its fix, never a traceback. The commands
on a real repository are in tests/system/notes/test_cli.py (they run git)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import run_cli


@pytest.mark.parametrize("args, message", [
    (["notes", "snapshot", "--repo", "nowhere", "-o", "s.json"], "repository not found"),
    (["notes", "facts", "missing.json"], "snapshot not found"),
    (["notes", "verify", "--snapshot", "x.json", "--facts", "x.json", "--draft", "x.json"], "not valid JSON"),
    (["notes", "decide", "no-such-run", "ship"], "notes run not found"),
    (["notes", "render", ".", "--commit-url", "https://x/"], "no {hash} placeholder"),
    (["notes", "draft", "--facts", "x.json", "--writer", "nobody"], "not valid JSON"),
])
def test_bad_input_is_a_message_not_a_traceback(home: Path, args: list[str], message: str) -> None:
    Path("x.json").write_text("{oops")
    done = run_cli(args, dict(os.environ))
    assert done.exit_code == 2 and "error:" in done.stderr and message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
