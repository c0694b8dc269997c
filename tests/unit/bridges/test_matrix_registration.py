"""`signoff bridge matrix registration` never overwrites a file, and `bridge matrix run` refuses a
registration signoff did not write with an error and a fix. The commands run in this process
(`tests/support/cli.py`); moved from tests/system/bridges/test_matrix_appservice.py, whose other
tests need a Synapse."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.cli import run_cli


def test_a_registration_is_not_overwritten_and_a_bad_one_is_an_error_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "registration.yaml"
    path.write_text("not: ours\n")
    again = run_cli(["bridge", "matrix", "registration", str(path), "--domain", "example.org"], os.environ)
    assert again.exit_code == 2 and again.stderr.startswith(f"error: {path} exists\nfix: ")
    assert path.read_text() == "not: ours\n"
    run = run_cli(["bridge", "matrix", "run", "--room", "r", "--matrix-room", "!x:example.org",
                   "--homeserver", "http://127.0.0.1:9", "--matrix-user", "@signoff:example.org",
                   "--registration", str(path)],
                  {"SIGNOFF_BRIDGE_TOKEN": "t", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    lines = run.stderr.strip().splitlines()
    assert run.exit_code == 2 and lines[0].startswith(f"error: {path} is not a registration file written by signoff")
    assert lines[1].startswith("fix: ") and "Traceback" not in run.stderr
