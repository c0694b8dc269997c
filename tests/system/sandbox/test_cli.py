"""`signoff sandbox check|run` and the doctor checks, through the real CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from signoff.cli.main import main
from signoff.kernel.settings import Settings
from signoff.sandbox.doctor import doctor_checks


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_proves_every_guarantee(sandbox: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "sandbox", "check", "--json")
    report = json.loads(out)
    names = {c["name"] for c in report["checks"]}
    assert {"network", "outside files hidden", "read-only root and checkout", "process limit", "memory limit",
            "CPU share", "timeout kills the tree", "unprivileged uid", "no capabilities", "seccomp",
            "/dev and /dev/shm bounded"} <= names
    failed = [c for c in report["checks"] if not c["ok"]]
    assert code == 0 and report["ok"] and not failed, failed


def test_run_prints_the_execution(sandbox: None, checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "sandbox", "run", "--mount", f"{checkout}:/src", "--memory", "256m", "--pids", "32",
                       "--cpus", "1", "--tmpfs", "64m", "--env", "GREETING=hi", "--json", "--",
                       "sh", "-c", "ls /src; echo $GREETING; exit 4")
    record = json.loads(out)
    assert code == 4 and record["exit_code"] == 4
    assert "calc.py" in record["stdout"] and "hi" in record["stdout"]
    assert record["isolation"]["enforced"]["memory_bytes"] == 256 << 20
    assert record["isolation"]["limits"]["pids"] == 32 and len(record["digest"]) == 64
    code, out, _ = cli(capsys, "sandbox", "run", "--", "sh", "-c", "echo plain")
    assert code == 0 and "plain" in out and "held:" in out


def test_run_timeout_exit_status(sandbox: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "sandbox", "run", "--timeout", "0.5", "--", "sleep", "30")
    assert code == 124 and "timeout" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--mount", "nocolon"], "--mount 'nocolon' is not SRC:DST[:rw]"),
        (["--memory", "lots"], "--memory 'lots' is not a size"),
        (["--env", "NOEQUALS"], "is not NAME=VALUE"),
        (["--mount", "/root:/src"], "cannot be reached by the sandbox's unprivileged uid"),
    ],
)
def test_run_bad_input(sandbox: None, capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    code, _, err = cli(capsys, "sandbox", "run", *args, "--", "true")
    flat = " ".join(err.split())
    assert code in (2, 3) and needle in flat and "fix:" in flat and "Traceback" not in err


def test_doctor_checks(sandbox: None, home: Path) -> None:
    checks = {c.name: c for c in doctor_checks(Settings.load())}
    assert checks["sandbox: bubblewrap"].ok and checks["sandbox: namespaces"].ok
    assert checks["sandbox: cgroups"].ok and checks["sandbox: seccomp"].ok
    assert "uid 10001" in checks["sandbox: namespaces"].detail
