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


# A Unix socket's path must fit in sun_path (108 bytes with the final NUL); the server's socket is
# `<dir>/.s.PGSQL.5432`. Room for that name, and then some.
SOCKET_PATH_MAX = 100 - len("/.s.PGSQL.5432")


def socket_dir(prefix: str) -> Path:
    """A fresh folder for Unix sockets: under the temporary folder when its path is short enough,
    else under /tmp (a long TMPDIR or a deep checkout must not break the sockets)."""
    for base in (tempfile.gettempdir(), "/tmp"):
        if len(os.fsencode(base)) + len(prefix) + 10 <= SOCKET_PATH_MAX:
            return Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    raise RuntimeError("no folder with a path short enough for a Unix socket")


class PgServer:
    """A throwaway PostgreSQL cluster on a Unix socket, run as the `postgres` user when we are root
    (the server refuses to run as root)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="signoff-pg-"))
        self.data = self.dir / "data"
        self.sock = socket_dir("signoff-pg-")
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
        shutil.rmtree(self.sock, ignore_errors=True)
