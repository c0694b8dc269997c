"""How the sandbox's one execution of base and candidate is read back (repair/forked.py; no sandbox here)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from signoff.kernel.errors import UsageError
from signoff.repair import forked, verifier
from signoff.sandbox.model import Execution

BASE_COMMAND = ["python", "-I", "-B", "/runner/run_pytest.py", "/base", "/harness/t.py::fix"]


def _execution(stdout: str, duration: float = 3.0, timed_out: bool = False) -> Execution:
    return Execution(command=["python", "--base-first", "{}"], exit_code=1, signal=None, timed_out=timed_out,
                     oom_killed=False, pids_limit_hit=False, duration=duration, cpu_time=1.0,
                     peak_memory_bytes=None, stdout=stdout, stderr="", stdout_truncated=False,
                     stderr_truncated=False, files={"junit.xml": b"<candidate/>"}, isolation={"backend": "bwrap"})


def _frame(**extra: Any) -> str:
    frame = {"v": 1, "exit_code": 1, "signal": None, "timed_out": False, "duration": 1.0, "cpu_time": 0.25,
             "at": 1.5, "stdout": "base said", "stderr": "",
             "files": {"junit.xml": base64.b64encode(b"<base/>").decode()}}
    return forked.BASE_FRAME + json.dumps(frame | extra) + "\n"


def test_the_bases_result_is_the_first_line_and_the_rest_is_the_candidates() -> None:
    forged = _frame(exit_code=0, files={})
    base, cand = forked.split(_execution(_frame() + "candidate said\n" + forged), BASE_COMMAND, 60.0)
    assert (base.command, base.exit_code, base.files, base.stdout) == (BASE_COMMAND, 1, {"junit.xml": b"<base/>"},
                                                                      "base said")
    # A line of the same form written later (by the candidate) is the candidate's output, nothing more.
    assert cand.files == {"junit.xml": b"<candidate/>"} and cand.stdout == "candidate said\n" + forged
    assert cand.duration == pytest.approx(1.5) and cand.cpu_time == pytest.approx(0.75) and not cand.timed_out


@pytest.mark.parametrize("stdout", ["", "candidate said\n" + _frame(), _frame().rstrip("\n"),
                                    forked.BASE_FRAME + "{not json\n"])
def test_without_the_bases_line_first_neither_execution_has_a_report(stdout: str) -> None:
    # The interpreter writes the base's line before anything of the candidate runs: without it, the
    # candidate never ran, and what /work held may be the base's report.
    base, cand = forked.split(_execution(stdout), BASE_COMMAND, 60.0)
    assert base.files == {} and cand.files == {} and base.command == BASE_COMMAND


def test_a_candidate_over_its_own_time_is_a_timeout_though_the_sandbox_allowed_both() -> None:
    _base, cand = forked.split(_execution(_frame(at=1.0), duration=62.0), BASE_COMMAND, 60.0)
    assert cand.timed_out


def test_a_sandbox_that_cannot_fork_so_says_it_and_the_executions_run_apart() -> None:
    with pytest.raises(forked.Unsupported, match="subreaper"):
        forked.split(_execution(forked.BASE_FRAME + json.dumps({"v": 1, "unsupported": "no subreaper"}) + "\n"),
                     BASE_COMMAND, 60.0)


@pytest.mark.parametrize(("cpus", "load", "shared"), [(2, 0.2, False), (2, 0.6, True), (8, 6.0, False),
                                                      (8, 6.7, True), (1, 0.0, True)])
def test_auto_shares_one_interpreter_unless_more_than_a_core_and_a_half_are_idle(
        monkeypatch: pytest.MonkeyPatch, cpus: int, load: float, shared: bool) -> None:
    monkeypatch.setattr(verifier.os, "sched_getaffinity", lambda _pid: set(range(cpus)))
    monkeypatch.setattr(verifier.os, "getloadavg", lambda: (load, load, load))
    assert verifier._shares_interpreter("auto") is shared
    assert verifier._shares_interpreter("shared") and not verifier._shares_interpreter("apart")


def test_an_unknown_executions_choice_is_refused_with_the_choices() -> None:
    req = verifier.VerifyRequest(repo=Path("."), base="a", candidate="b", harness=Path("h"), expect="t",
                                 executions="fast")
    with pytest.raises(UsageError, match="auto, shared, apart"):
        verifier._validate(req)
