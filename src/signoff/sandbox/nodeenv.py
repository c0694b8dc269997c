"""A project's node_modules, installed from its lock file before the sandbox starts, cached, readable.

`npm ci` installs exactly what `package-lock.json` names (it refuses a lock that disagrees with
`package.json`), on the host with the network, and with `--ignore-scripts`: no package's install
script runs here (as Python environments take wheels only). The tests then run in the sandbox with
no network and this folder mounted read-only at /deps (`/deps/node_modules`).

The cache key is the digest of node's version and the two files' bytes; a finished folder carries a
`.complete` marker, so the fast path is one stat.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.filelock import exclusive
from signoff.kernel.ids import new_id
from signoff.sandbox.bwrap import SANDBOX_GID, SANDBOX_UID
from signoff.sandbox.model import Mount, SandboxUnavailable
from signoff.sandbox.pyenv import cache_root, publish

DEPS_DST = "/deps"
_FORMAT = 1


class NpmError(SandboxUnavailable):
    """npm could not install the lock file's packages: `message` names npm's error, `log` holds all of it."""

    def __init__(self, message: str, fix: str | None, log: str) -> None:
        super().__init__(message, fix)
        self.log = log


@dataclass(frozen=True)
class NodeEnv:
    """Installed packages the sandbox's uid can read, and where they appear inside (`/deps/node_modules`)."""

    digest: str
    host_path: Path
    node_version: str
    lock_sha256: str
    packages: int
    mounts: list[Mount] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"kind": "node", "digest": self.digest, "node_version": self.node_version,
                "lock_sha256": self.lock_sha256, "packages": self.packages}


@functools.lru_cache(maxsize=1)
def node_version() -> str:
    """This machine's node (`v20.19.2`); SandboxUnavailable when there is none."""
    node = shutil.which("node")
    if node is None:
        raise SandboxUnavailable("node is not installed, so a JavaScript or TypeScript project cannot be tested",
                                 "apt-get install -y nodejs npm")
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return out.stdout.strip() or "unknown"


def prepare_node_env(package_json: bytes, lock: bytes, cache_dir: Path) -> NodeEnv:
    """The packages `lock` (package-lock.json) names for `package_json`, installed once by `npm ci`
    and cached by the digest of both files and node's version."""
    version = node_version()
    if shutil.which("npm") is None:
        raise SandboxUnavailable("npm is not installed, so the project's lock file cannot be installed",
                                 "apt-get install -y npm")
    uid, gid = (SANDBOX_UID, SANDBOX_GID) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    root = cache_root(Path(cache_dir), uid, gid)
    lock_sha = sha256_bytes(lock)
    digest = canonical_digest({"format": _FORMAT, "node": version, "package_json": sha256_bytes(package_json),
                               "lock": lock_sha})
    env_dir = root / f"node-{digest[:24]}"
    if not (env_dir / ".complete").exists():
        with exclusive(root / f".lock-node-{digest[:24]}"):
            if not (env_dir / ".complete").exists():
                _build(env_dir, package_json, lock)
    try:
        packages = int(json.loads((env_dir / ".complete").read_text()).get("packages") or 0)
    except (OSError, ValueError, AttributeError):
        packages = 0
    return NodeEnv(digest, env_dir, version, lock_sha, packages, [Mount(env_dir, DEPS_DST)])


def _build(env_dir: Path, package_json: bytes, lock: bytes) -> None:
    tmp = env_dir.parent / f".tmp-node-{new_id()}"
    try:
        tmp.mkdir(parents=True)
        (tmp / "package.json").write_bytes(package_json)
        (tmp / "package-lock.json").write_bytes(lock)
        # Nothing of the caller's node configuration applies (NODE_OPTIONS could preload a module).
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NODE_", "npm_config_"))}
        out = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier",
                              "--loglevel=error"], cwd=tmp, capture_output=True, text=True, timeout=900,
                             check=False, env=env)
        if out.returncode != 0:
            log = "\n".join(p for p in (out.stdout.strip(), out.stderr.strip()) if p)
            errors = [ln.split("ERR!", 1)[1].strip() for ln in log.splitlines() if "ERR!" in ln]
            cause = next((e for e in errors if e and not e.startswith(("A complete log", "code "))), log[-300:])
            raise NpmError(f"npm ci could not install the project's lock file: {cause[:400]}",
                           "check that package-lock.json was written by `npm install` for this package.json "
                           "and that the npm registry is reachable", log[-20000:])
        (tmp / "node_modules").mkdir(exist_ok=True)
        (tmp / "package.json").unlink()
        (tmp / "package-lock.json").unlink()
        publish(tmp, env_dir, {"packages": _count(lock)})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _count(lock: bytes) -> int:
    """How many packages the lock file installs (its `packages` entries besides the project's own)."""
    try:
        entries = json.loads(lock).get("packages") or {}
    except (ValueError, AttributeError):
        return 0
    return sum(1 for k in entries if k)
