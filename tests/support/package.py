"""signoff as a user installs it: the wheel built from this checkout, in a fresh virtual environment
outside it, with the dependencies the server lock file pins (docs/operations.md)."""

from __future__ import annotations

import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT


@dataclass(frozen=True)
class Installed:
    wheel: Path
    sdist: Path
    bin: Path

    def signoff(self, *args: str) -> list[str]:
        return [str(self.bin / "signoff"), *args]


def _run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{' '.join(argv[:4])}... failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def install(where: Path) -> Installed:
    """Build the wheel and sdist (`python -m build`, with this environment's setuptools) and install
    the wheel, with no source tree on its path, into a new environment under `where`."""
    dist = where / "dist"
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], cwd=where)
    wheel = next(dist.glob("signoff-*.whl"))
    sdist = next(dist.glob("signoff-*.tar.gz"))
    env_dir = where / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    # --no-compile: pip would byte-compile every module of every dependency up front; the ones the
    # tests import are compiled when they are first imported, as on any first start.
    _run([python, "-m", "pip", "install", "--quiet", "--no-compile", "--require-hashes", "-r",
          str(ROOT / "requirements" / "server.lock")], cwd=where)
    _run([python, "-m", "pip", "install", "--quiet", "--no-compile", "--no-deps", str(wheel)], cwd=where)
    return Installed(wheel, sdist, env_dir / "bin")
