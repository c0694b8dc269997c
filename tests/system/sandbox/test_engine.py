"""The Docker/Podman backend: the reference flags, and a clear refusal when no engine answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.sandbox import Limits, Mount, SandboxUnavailable, run
from signoff.sandbox.engine import _remove, engine_answers, engine_argv


def test_engine_argv_carries_the_reference_flags() -> None:
    argv = engine_argv("docker", "signoff-x", "python:3.11-slim", ["pytest", "-q"],
                       [Mount(Path("/co"), "/src"), Mount(Path("/out"), "/out", writable=True)],
                       Limits(), {"A": "1"}, "/work", network=False)
    text = " ".join(argv)
    for flag in ("--network none", "--read-only", "--cap-drop ALL", "--security-opt no-new-privileges",
                 "--user 10001:10001", "--memory 384m", "--memory-swap 384m", "--cpus 0.75", "--pids-limit 96",
                 "--tmpfs /work:rw,size=256m", "--volume /co:/src:ro", "--volume /out:/out:rw", "--env A=1",
                 "--pull never"):
        assert flag in text, flag
    assert argv[-3:] == ["python:3.11-slim", "pytest", "-q"]


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_engine_runs_when_it_answers_and_is_refused_otherwise(engine: str) -> None:
    if engine_answers(engine):  # a machine with an engine (and the image): the backend must work
        ex = run(["sh", "-c", "id -u"], backend=engine)
        assert ex.exit_code == 0 and ex.stdout.strip() == "10001" and ex.isolation["backend"] == engine
        return
    with pytest.raises(SandboxUnavailable) as info:
        run(["true"], backend=engine)
    assert "does not answer" in info.value.message and info.value.fix


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_engine_refuses_deny_inet_rather_than_dropping_it(engine: str) -> None:
    with pytest.raises(SandboxUnavailable) as info:
        run(["true"], backend=engine, network=True, deny_inet=True)
    assert "deny_inet" in info.value.message and "bwrap" in (info.value.fix or "")


def test_container_removal_counts_only_when_the_engine_confirms_it() -> None:
    # Real executables standing in for the engine CLI: one that succeeds, one that fails, one absent.
    assert _remove("/bin/true", "signoff-x") is True
    assert _remove("/bin/false", "signoff-x") is False
    assert _remove("/nonexistent/signoff-engine", "signoff-x") is False
