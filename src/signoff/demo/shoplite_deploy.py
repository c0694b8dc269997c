"""Deploy a ShopLite commit on a loopback port: export the commit, serve it, stop it.

Deployment here means what a recorder must check: a process that answers /health with the
service name and the exact commit it serves.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from signoff import git
from signoff.kernel.errors import UnavailableError


@dataclass
class Deployment:
    url: str
    commit: str
    process: subprocess.Popen[str]

    def wait(self) -> None:
        self.process.wait()


@contextmanager
def serve_commit(repo: str | Path, commit: str, port: int = 0) -> Iterator[Deployment]:
    repo_path = git.open_repo(Path(repo))
    sha = git.resolve(repo_path, commit)
    tmp = Path(tempfile.mkdtemp(prefix="signoff-deploy-"))
    try:
        tree = git.export(repo_path, sha, tmp / "app")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(tree), "SHOPLITE_COMMIT": sha,
               "PYTHONDONTWRITEBYTECODE": "1"}
        # The TypeScript ShopLite serves its health endpoint from server.mjs (plain node, no build).
        argv = ["node", "server.mjs", str(port)] if (tree / "server.mjs").is_file() else \
            [sys.executable, "-m", "shoplite.server", str(port)]
        proc = subprocess.Popen(argv, cwd=tree, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("http://127.0.0.1:"):
            proc.kill()
            err = proc.stderr.read() if proc.stderr else ""
            raise UnavailableError(f"the deployment of {sha[:12]} did not start: {err[-300:]}",
                                   "check that the commit has shoplite/server.py (or server.mjs)")
        try:
            yield Deployment(line, sha, proc)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
