"""A throwaway PostgreSQL cluster for tests and benchmarks."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path


def pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    matches = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return matches[-1] if matches else None


class PgServer:
    """A throwaway PostgreSQL cluster on a Unix socket, run as the `postgres` user when we are root
    (the server refuses to run as root)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="signoff-pg-"))
        self.data = self.dir / "data"
        self.sock = self.dir / "sock"
        self.sock.mkdir()
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    def _run(self, *args: str) -> None:
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> str:
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            shutil.chown(self.sock, "postgres")
        initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
        assert initdb and pg_ctl
        self._run(initdb, "-D", str(self.data), "-A", "trust", "-U", "signoff", "--no-sync")
        opts = f"-k {self.sock} -c listen_addresses='' -c fsync=off -c max_connections=200 -p 5432"
        self._run(pg_ctl, "-D", str(self.data), "-o", opts, "-w", "-l", str(self.dir / "log"), "start")
        return f"postgresql://signoff@/postgres?host={self.sock}"

    def stop(self) -> None:
        pg_ctl = pg_bin("pg_ctl")
        if pg_ctl:
            try:
                self._run(pg_ctl, "-D", str(self.data), "-m", "immediate", "stop")
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
