"""One interpreter for the base's and the candidate's pytest executions, in one sandbox.

Starting Python and importing pytest and the guard is about two thirds of a small pytest run. The
verifier's two executions (the base's; the candidate's, which its two stages share) therefore run in
one sandbox, both checkouts mounted (the candidate's at /src, the base's at /base), from one
interpreter that imports pytest and the guard once, before any checkout is importable:

1. the base's execution runs in a forked child, with its own key (the parent scrubs it from the
   environment before forking, and has run no code of either checkout);
2. meanwhile the parent starts the candidate's pytest session up to the point where its checkout
   would join the import path (the guard's first hook), and waits there for the child;
3. the child's report, record, output, exit status and resource use go out of the sandbox as the
   first line of stdout; then every process it left is killed and reaped (the parent is their
   subreaper), and /work, /tmp and /dev/shm are emptied;
4. only then does the candidate's checkout join the path, in the parent itself, exactly as in a lone
   run: its exit status is the sandbox's own and its report and record are collected from /work.

The host reads the base's result only from that first line (so nothing the candidate writes later
can stand for it), and checks each execution's record against its own key as before. Both stages'
commands are recorded as each runs alone, so the fingerprint does not depend on this.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, replace
from typing import Any

from signoff.repair.guard import Plan
from signoff.repair.runners import Runner
from signoff.sandbox.model import Execution

BASE_MOUNT = "/base"
BASE_FRAME = "signoff-base-run "  # the guard writes it (runner_files/signoff_guard.py, BASE_FRAME)
BASE_KEY = "SIGNOFF_GUARD_KEY_BASE"
SIGKILL = 9


class Unsupported(Exception):
    """The sandbox could not run the two executions this way (then they run apart, as before)."""


@dataclass(frozen=True)
class Forked:
    argv: list[str]
    collect: list[str]
    env: dict[str, str]
    base_command: list[str]
    timeout: float  # the sandbox's wall clock: both executions, one after the other


def command(runner: Runner, base_tests: list[str], cand_tests: list[str], harness_files: tuple[str, ...],
            python: str, pythonpath: list[str], base_plan: Plan, cand_plan: Plan, timeout: float,
            plugins: dict[str, str] | None = None, variables: dict[str, str] | None = None) -> Forked:
    """The one sandbox command for both executions, each with its own plan (canary and key)."""
    base_argv, collect = runner.command(base_tests, harness_files, python, pythonpath, base_plan, src=BASE_MOUNT)
    cand_argv, _ = runner.command(cand_tests, harness_files, python, pythonpath, cand_plan)
    base_env = runner.env(python, pythonpath, src=BASE_MOUNT, plugins=plugins, variables=variables)
    cand_env = runner.env(python, pythonpath, plugins=plugins, variables=variables)
    spec = {"paths": [p for p in base_argv[4].split(":") if p], "args": base_argv[5:], "timeout": timeout,
            "env": {k: v for k, v in base_env.items() if cand_env.get(k) != v}, "collect": collect}
    argv = [*cand_argv[:4], "--base-first", json.dumps(spec, sort_keys=True, separators=(",", ":")), *cand_argv[4:]]
    env = cand_env | runner.guard_env(cand_plan, cand_tests) | {BASE_KEY: base_plan.key}
    return Forked(argv, collect, env, base_argv, 2 * timeout)


def split(execution: Execution, base_command: list[str], timeout: float) -> tuple[Execution, Execution]:
    """(the base's execution, the candidate's) from the sandbox's one execution. Without the base's
    line first on stdout, neither has a report: the candidate never ran, and what /work holds may
    be the base's. Unsupported when the sandbox said it could not fork so."""
    head, newline, rest = execution.stdout.partition("\n")
    frame = _frame(head) if newline else None
    if frame is not None and frame.get("unsupported"):
        raise Unsupported(str(frame["unsupported"]))
    if frame is None:
        return (replace(execution, command=base_command, files={}),
                replace(execution, files={}))
    isolation = execution.isolation | {"execution": "one interpreter: the base's in a forked child, then the "
                                                    "candidate's"}
    signal = frame.get("signal") if isinstance(frame.get("signal"), int) else None
    base = replace(
        execution, command=base_command, exit_code=_int(frame.get("exit_code")), signal=signal,
        timed_out=frame.get("timed_out") is True,
        # The sandbox's counters are the whole run's: a base killed outright while the memory limit
        # was hit counts as that; the process limit is the candidate's to answer for.
        oom_killed=execution.oom_killed and signal == SIGKILL, pids_limit_hit=False,
        duration=_float(frame.get("duration")), cpu_time=_float(frame.get("cpu_time")),
        peak_memory_bytes=_int(frame.get("peak_memory_bytes")),
        stdout=str(frame.get("stdout") or ""), stderr=str(frame.get("stderr") or ""),
        stdout_truncated=frame.get("stdout_truncated") is True, stderr_truncated=frame.get("stderr_truncated") is True,
        files=_files(frame.get("files")), isolation=isolation)
    took = max(0.0, execution.duration - _float(frame.get("at")))
    cand = replace(execution, stdout=rest, duration=took, cpu_time=max(0.0, execution.cpu_time - base.cpu_time),
                   timed_out=execution.timed_out or took > timeout, isolation=isolation)
    return base, cand


def _frame(line: str) -> dict[str, Any] | None:
    if not line.startswith(BASE_FRAME):
        return None
    try:
        value = json.loads(line[len(BASE_FRAME):])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _files(value: Any) -> dict[str, bytes]:
    if not isinstance(value, dict):
        return {}
    out = {}
    for name, data in value.items():
        try:
            out[str(name)] = base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            continue
    return out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
