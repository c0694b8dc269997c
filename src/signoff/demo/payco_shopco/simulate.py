"""Run the fixture for real: ShopCo's node server and PayCo's Python sender on loopback.

Both run as child processes. ShopCo binds port 0 and prints the port; PayCo sends the 60 events to
it. Each side writes its capture file into `workdir`.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.demo.payco_shopco.fixture import fixture_dir
from signoff.kernel.errors import UnavailableError

_START_TIMEOUT = 20.0


@dataclass
class SimulationResult:
    accepted: list[str]
    rejected: list[str]
    fixed_payco: bool
    fixed_shopco: bool
    workdir: Path
    shopco_port: int
    notes: list[str] = field(default_factory=list)

    @property
    def payco_capture(self) -> Path:
        return self.workdir / "payco-capture.jsonl"

    @property
    def shopco_capture(self) -> Path:
        return self.workdir / "shopco-capture.jsonl"

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": "measured",
            "events": len(self.accepted) + len(self.rejected),
            "accepted": len(self.accepted),
            "rejected": len(self.rejected),
            "rejected_ids": self.rejected,
            "accepted_ids": self.accepted,
            "fixed_payco": self.fixed_payco,
            "fixed_shopco": self.fixed_shopco,
            "shopco_port": self.shopco_port,
            "captures": {"payco": str(self.payco_capture), "shopco": str(self.shopco_capture)},
        }


def node_binary() -> str:
    node = shutil.which("node")
    if node is None:
        raise UnavailableError("node is not installed; ShopCo's side of the fixture is JavaScript",
                               "install Node.js (apt-get install -y nodejs)")
    return node


def _read_port(proc: subprocess.Popen[bytes]) -> int:
    assert proc.stdout is not None
    deadline = time.monotonic() + _START_TIMEOUT
    line = b""
    while time.monotonic() < deadline and not line.endswith(b"\n"):
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 256)
            if not chunk:
                break
            line += chunk
        elif proc.poll() is not None:
            break
    if not line.startswith(b"LISTENING "):
        err = proc.stderr.read().decode("utf-8", "replace")[-500:] if proc.stderr and proc.poll() is not None else ""
        raise UnavailableError(f"ShopCo's node server did not start: {err or line!r}",
                               "check that `node --version` works (Node 16 or newer)")
    return int(line.split()[1])


def simulate(workdir: Path, fixed_payco: bool = False, fixed_shopco: bool = False,
             fixture: Path | None = None) -> SimulationResult:
    """Send the 60 events from PayCo to ShopCo and return which were accepted and rejected."""
    root = fixture_dir(fixture)
    node = node_binary()
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_hex(16)  # shared webhook secret, fresh per run
    env = {**os.environ, "SHOPCO_SECRET": secret, "PAYCO_SECRET": secret}
    server_cmd = [node, str(root / "shopco" / "app" / "server.js"), "--capture", str(workdir / "shopco-capture.jsonl")]
    if fixed_shopco:
        server_cmd.append("--fixed")
    server = subprocess.Popen(server_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        port = _read_port(server)
        sender_cmd = [sys.executable, "-m", "payco.sender", "--url", f"http://127.0.0.1:{port}/webhooks",
                      "--capture", str(workdir / "payco-capture.jsonl")]
        if fixed_payco:
            sender_cmd.append("--fixed")
        env_payco = {**env, "PYTHONPATH": str(root / "payco")}
        done = subprocess.run(sender_cmd, capture_output=True, env=env_payco, timeout=120)
        if done.returncode != 0:
            raise UnavailableError(f"PayCo's sender failed: {done.stderr.decode('utf-8', 'replace')[-500:]}",
                                   "run it by hand: PYTHONPATH=examples/payco-shopco/payco python -m payco.sender")
        summary = json.loads(done.stdout)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()
    return SimulationResult(list(summary["accepted"]), list(summary["rejected"]), fixed_payco, fixed_shopco,
                            workdir, port)
