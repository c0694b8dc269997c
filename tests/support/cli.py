"""`signoff` commands run in this process, as a test would see them run as a process.

`run_cli` calls `signoff.cli.main.main` (the console script's entry point, with its error/fix
handling and exit codes) inside typer's `CliRunner` isolation: standard output and error are
captured apart, the environment is exactly `env` for the call (what `subprocess.run(env=...)` gave:
every other variable is hidden and put back afterwards), and the working folder is `cwd`. Output goes
to pipes, not a terminal, so it is as wide as it is off a terminal whatever COLUMNS says.

Keep a subprocess only where a test needs a real process: signals, a server, import-time cost, a
fresh interpreter's state.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from signoff.cli.main import main


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(args: Sequence[str], env: Mapping[str, str], cwd: Path | None = None,
            input: str | None = None) -> Result:
    """`signoff *args` with exactly the environment `env`, in `cwd`: its exit code and output."""
    overrides: dict[str, str | None] = {name: None for name in os.environ if name not in env}
    overrides.update(env)
    before = Path.cwd()
    with CliRunner().isolation(input=input, env=overrides) as (out, err, _):
        try:
            if cwd is not None:
                os.chdir(cwd)
            code = main(list(args))
        except SystemExit as exc:  # a command that exits itself, as a process would
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            os.chdir(before)
            sys.stdout.flush()  # the isolation's text wrappers buffer: flushed, as a process's at exit
            sys.stderr.flush()
        return Result(code, out.getvalue().decode(), err.getvalue().decode())
