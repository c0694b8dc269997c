"""A throwaway Synapse (the reference Matrix homeserver) for tests and benchmarks.

Synapse is never a project dependency: it is installed with pip into a venv of its own, cached
under ~/.cache/signoff-test-synapse/<version> (SIGNOFF_SYNAPSE_CACHE overrides the folder) so that
later runs on the same machine skip the install, and created afresh on a machine that has none.
Each server runs on SQLite in its own folder, bound to 127.0.0.1 on a free port, with every rate
limit lifted and no federation key servers."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx

from signoff.kernel.tls import tls_context
from tests.support.net import free_port

SYNAPSE_VERSION = "1.163.2"

# Every rc_* limit Synapse applies to clients, lifted: tests and the benchmark send in bursts.
_UNLIMITED = "{per_second: 100000, burst_count: 100000}"
SYNAPSE_OVERRIDES = f"""
rc_message: {_UNLIMITED}
rc_joins: {{local: {_UNLIMITED}, remote: {_UNLIMITED}}}
rc_joins_per_room: {_UNLIMITED}
rc_invites: {{per_room: {_UNLIMITED}, per_user: {_UNLIMITED}, per_issuer: {_UNLIMITED}}}
rc_registration: {_UNLIMITED}
rc_room_creation: {_UNLIMITED}
rc_admin_redaction: {_UNLIMITED}
rc_3pid_validation: {_UNLIMITED}
rc_login:
  address: {_UNLIMITED}
  account: {_UNLIMITED}
  failed_attempts: {_UNLIMITED}
rc_presence:
  per_user: {_UNLIMITED}
rc_delayed_event_mgmt: {_UNLIMITED}
presence: {{enabled: false}}
enable_registration: false
suppress_key_server_warning: true
trusted_key_servers: []
report_stats: false
"""


class ServerFailed(RuntimeError):
    """A helper server exited or did not answer in time (its log says why)."""


def wait_http(url: str, proc: subprocess.Popen[bytes], what: str, timeout: float = 120) -> None:
    """Poll `url` until it answers below 500; fail early when the process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerFailed(f"{what} exited with code {proc.returncode} before it answered (see its log)")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2, verify=tls_context()).status_code < 500:
                return
        time.sleep(0.2)  # polling a server that is starting up, not synchronising with an event
    raise ServerFailed(f"{what} did not answer {url} within {timeout} s")


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cache_root() -> Path:
    given = os.environ.get("SIGNOFF_SYNAPSE_CACHE")
    return Path(given) if given else Path.home() / ".cache" / "signoff-test-synapse"


def installed_python(root: Path | None = None, version: str = SYNAPSE_VERSION) -> Path | None:
    """The cached venv's Python, or None when this machine has none yet."""
    python = (root or cache_root()) / version / "bin" / "python"
    return python if (python.parent.parent / "ok").exists() else None


def synapse_python(root: Path | None = None, version: str = SYNAPSE_VERSION) -> Path:
    """The Python of a venv with matrix-synapse==`version`, installing it when absent.

    The venv is built beside its final place and renamed into it, under a lock, so that a run
    killed halfway or two runs at once never leave a half-installed venv that looks finished."""
    root = root or cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = installed_python(root, version)
        if found is not None:
            return found
        final = root / version
        shutil.rmtree(final, ignore_errors=True)
        building = Path(tempfile.mkdtemp(prefix=f"{version}-", dir=root))
        try:
            subprocess.run([sys.executable, "-m", "venv", str(building)], check=True, capture_output=True)
            done = subprocess.run([str(building / "bin" / "python"), "-m", "pip", "install", "-q",
                                   f"matrix-synapse=={version}"], capture_output=True, text=True)
            if done.returncode != 0:
                raise ServerFailed(f"pip install matrix-synapse=={version} failed:\n{done.stderr[-2000:]}")
            (building / "ok").write_text(version + "\n")
            building.rename(final)
        finally:
            shutil.rmtree(building, ignore_errors=True)
        found = installed_python(root, version)
        assert found is not None
        return found


@dataclass(frozen=True)
class MatrixAccount:
    user_id: str
    access_token: str
    password: str
    device_id: str


class Synapse:
    """One homeserver in `folder`; `start` may be called again after `stop` (same data, same port)."""

    def __init__(self, folder: Path, python: Path, server_name: str = "signoff.test") -> None:
        self.folder = folder
        self.python = python
        self.server_name = server_name
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.secret = uuid.uuid4().hex
        self.config = folder / "homeserver.yaml"
        self.proc: subprocess.Popen[bytes] | None = None

    def _configure(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(self.python), "-m", "synapse.app.homeserver", "--server-name", self.server_name,
                        "--config-path", str(self.config), "--data-directory", str(self.folder),
                        "--generate-config", "--report-stats=no"], cwd=self.folder, check=True,
                       capture_output=True)
        with self.config.open("a") as fh:
            fh.write(SYNAPSE_OVERRIDES)
            fh.write(f'registration_shared_secret: "{self.secret}"\n')
            fh.write(f"listeners:\n  - port: {self.port}\n    type: http\n    tls: false\n"
                     "    bind_addresses: ['127.0.0.1']\n    x_forwarded: false\n"
                     "    resources:\n      - names: [client]\n        compress: false\n")

    def add_config(self, text: str) -> None:
        """Append YAML to the configuration (takes effect at the next start)."""
        if not self.config.exists():
            self._configure()
        with self.config.open("a") as fh:
            fh.write(text)

    def start(self) -> None:
        if not self.config.exists():
            self._configure()
        log = (self.folder / "stderr.log").open("a")
        self.proc = subprocess.Popen([str(self.python), "-m", "synapse.app.homeserver", "-c", str(self.config)],
                                     cwd=self.folder, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        try:
            wait_http(f"{self.base}/health", self.proc, "synapse")
        except ServerFailed:
            self.stop()
            raise

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None

    def register(self, name: str, admin: bool = False) -> MatrixAccount:
        """A new account through the shared-secret admin API (registration is otherwise closed)."""
        with httpx.Client(base_url=self.base, timeout=30, verify=tls_context()) as http:
            nonce = http.get("/_synapse/admin/v1/register").json()["nonce"]
            password = uuid.uuid4().hex
            mac = hmac.new(self.secret.encode(), b"\x00".join(
                [nonce.encode(), name.encode(), password.encode(), b"admin" if admin else b"notadmin"]),
                hashlib.sha1).hexdigest()
            reply = http.post("/_synapse/admin/v1/register", json={
                "nonce": nonce, "username": name, "password": password, "admin": admin, "mac": mac})
            reply.raise_for_status()
            body = reply.json()
        return MatrixAccount(str(body["user_id"]), str(body["access_token"]), password, str(body["device_id"]))
