"""The run's room server as its own process: `python -m signoff.incident.roomserver DB_URL`.

It binds 127.0.0.1 on a port the OS picks, prints `port <n>` on its first stdout line, and serves
the rooms app (agent protocol and user endpoints) on the run's database until it is terminated.
A restart of this process is a real restart of the room server: connections and role leases are
gone, events and documents are in the database.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from types import TracebackType

from signoff.kernel.errors import UnavailableError
from signoff.kernel.tls import tls_context

# A short long-poll wait: the incident's services poll each room in turn.
POLL_WAIT = 0.002


def main(argv: list[str]) -> int:
    import uvicorn

    from signoff.ledger import SqlLedger
    from signoff.rooms.http.app import create_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Small request/response pairs: without this, Nagle and delayed ACKs add ~40 ms to each call.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    app = create_app(SqlLedger.from_url(argv[0]), keepalive_seconds=POLL_WAIT)
    print(f"port {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=False))
    server.run(sockets=[sock])
    return 0


class RoomServerProcess:
    """Start and stop the room server process; `.url` once started."""

    def __init__(self, db_url: str) -> None:
        self.db_url = db_url
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> RoomServerProcess:
        self.proc = subprocess.Popen([sys.executable, "-m", "signoff.incident.roomserver", self.db_url],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("port "):
            self.proc.kill()
            raise UnavailableError("the room server process did not start", "run it by hand to see why: "
                                   "python -m signoff.incident.roomserver <db url>")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        import time

        import httpx

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.url}/users/me", timeout=2, verify=tls_context())
                return
            except httpx.HTTPError:
                time.sleep(0.02)
        raise UnavailableError("the room server process does not answer", "check the port and its stderr")

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
