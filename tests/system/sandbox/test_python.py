"""Python tooling inside the sandbox: pytest with tmp_path, hypothesis, multiprocessing, subprocess,
on a venv the unprivileged uid can read, prepared once and cached."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from signoff.kernel.errors import UsageError
from signoff.sandbox import Mount, PythonEnv, SandboxUnavailable, prepare_python_env, run
from signoff.sandbox.access import blocker
from signoff.sandbox.pyenv import SYSTEM_CACHE

SUITE = '''
import multiprocessing
import subprocess
import sys

from hypothesis import given, strategies as st

from calc import add


def test_tmp_path(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    assert (tmp_path / "a.txt").read_text() == "x"


@given(st.integers(), st.integers())
def test_add_commutes(a, b):
    assert add(a, b) == add(b, a)


def _square(n):
    return n * n


def test_multiprocessing_pool():
    with multiprocessing.Pool(2) as pool:
        assert pool.map(_square, [1, 2, 3]) == [1, 4, 9]


def test_subprocess():
    out = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "42"
'''


def _suite(checkout: Path) -> Path:
    (checkout / "test_suite.py").write_text(SUITE)
    return checkout


def test_pytest_hypothesis_multiprocessing_subprocess_inside(pyenv: PythonEnv, checkout: Path) -> None:
    _suite(checkout)
    before = sorted(p.name for p in checkout.iterdir())
    ex = run(pyenv.pytest_command("-q", "/src"), [Mount(checkout, "/src"), *pyenv.mounts],
             env={**pyenv.env(), "PYTHONPATH": "/src"}, timeout=120)
    assert ex.exit_code == 0, ex.stdout + ex.stderr
    assert "4 passed" in ex.stdout
    assert sorted(p.name for p in checkout.iterdir()) == before  # nothing written into the checkout


def test_a_failing_test_is_reported_as_failure(pyenv: PythonEnv, checkout: Path) -> None:
    (checkout / "test_bad.py").write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 5\n")
    ex = run(pyenv.pytest_command("-q", "/src/test_bad.py"), [Mount(checkout, "/src"), *pyenv.mounts],
             env={**pyenv.env(), "PYTHONPATH": "/src"}, timeout=120)
    assert ex.exit_code == 1 and "1 failed" in ex.stdout


def test_env_is_cached_and_readable_by_the_sandbox_uid(pyenv: PythonEnv, tmp_path: Path) -> None:
    again = prepare_python_env(["hypothesis"], tmp_path)
    assert again.host_path == pyenv.host_path and again.digest == pyenv.digest
    assert (pyenv.host_path / ".complete").exists()
    assert blocker(pyenv.host_path / "pyvenv.cfg", 10001, 10001) is None
    # pytest's tmp_path is 0700: the environment went to the shared system cache instead
    assert pyenv.host_path.parent == SYSTEM_CACHE


def test_requirements_file_and_offline_refusal(sandbox: None, world_dir: Path) -> None:
    req = world_dir / "requirements.txt"
    req.write_text("signoff-no-such-package-for-tests==0.0.1\n")
    with pytest.raises(SandboxUnavailable) as info:
        prepare_python_env(req, world_dir / "cache", network=False)
    assert "pip could not install" in info.value.message and "network=True" in (info.value.fix or "")
    assert not list((world_dir / "cache").glob("venv-*"))  # nothing half-built is left as cached


def test_bad_requirements_are_usage_errors(sandbox: None, world_dir: Path) -> None:
    with pytest.raises(UsageError):
        prepare_python_env(["--index-url=http://evil"], world_dir)
    with pytest.raises(UsageError):
        prepare_python_env(world_dir / "missing.txt", world_dir)


def test_interpreter_the_sandbox_cannot_read_is_copied(sandbox: None, tmp_path: Path) -> None:
    """The running interpreter (under /root on our machines) works inside, copied when unreadable."""
    exe = str(Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}")
    env = prepare_python_env(None, tmp_path, base_python=exe)  # 0700: lands in the shared system cache
    if blocker(Path(exe), 10001, 10001) is not None:
        assert len(env.mounts) == 2 and env.mounts[1].dst == str(Path(exe).resolve().parent.parent)
    ex = run([env.python, "-c", "import sys, ssl, sqlite3; print(sys.version.split()[0])"], env.mounts, env=env.env())
    assert ex.exit_code == 0, ex.stderr
    assert ex.stdout.strip() == sys.version.split()[0]


def test_unreachable_mount_is_explained(sandbox: None, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir()
    os.chmod(tmp_path, 0o700)
    with pytest.raises(SandboxUnavailable) as info:
        run(["true"], [Mount(private, "/src")])
    assert "cannot be reached by the sandbox's unprivileged uid" in info.value.message
    assert "world-readable" in (info.value.fix or "")


def test_a_python_the_running_pip_no_longer_supports_gets_its_own(sandbox: None, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """pip 25+ cannot install into Python 3.9 or older with --python: such an environment is
    installed by its interpreter's own pip (ensurepip, upgraded to the newest it supports), which is
    then removed, so the environment holds what was asked for, as under the running pip. Here the
    running interpreter stands in for an old one."""
    from signoff.sandbox import pyenv

    assert pyenv._pip_supports("3.11") and not pyenv._pip_supports("3.2")
    monkeypatch.setattr(pyenv, "_pip_supports", lambda version: False)
    env = prepare_python_env(["iniconfig"], tmp_path / "cache")
    assert {"iniconfig", "pytest"} <= {str(i["name"]).lower() for i in env.installed}
    site = env.host_path / "lib" / f"python{env.python_version}" / "site-packages"
    assert not (site / "pip").exists() and (site / "iniconfig").is_dir()
    ex = run([env.python, "-c", "import pytest, iniconfig"], env.mounts, env=env.env())
    assert ex.exit_code == 0, ex.stderr
