"""Run the real `signoff` entry point on a pseudo-terminal of a given width, or on plain pipes."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping
from pathlib import Path

SIGNOFF = [sys.executable, "-m", "signoff.cli.main"]
_ANSI = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")


def _env(columns: int, extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR")}
    # UTF-8 whatever the locale of the machine running the tests (a test may override it)
    env.update({"COLUMNS": str(columns), "TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8", **(extra or {})})
    return env


def on_terminal(args: list[str], columns: int, cwd: Path, env: Mapping[str, str] | None = None,
                timeout: float = 300.0) -> tuple[int, str]:
    """Exit code and everything written to the terminal (stdout and stderr share it), escape
    sequences removed and line ends as `\\n`."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen([*SIGNOFF, *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                            env=_env(columns, env), close_fds=True)
    os.close(slave)
    chunks = []
    try:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side of the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    code = proc.wait(timeout=timeout)
    text = b"".join(chunks).decode((env or {}).get("PYTHONIOENCODING", "utf-8"), "replace")
    return code, _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def on_pipes(args: list[str], columns: int, cwd: Path, env: Mapping[str, str] | None = None,
             timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SIGNOFF, *args], capture_output=True, text=True, encoding="utf-8", cwd=cwd,
                          env=_env(columns, env), timeout=timeout, check=False)
