"""The record of one execution: the guarantees every backend reports (the same keys, listed once),
and the Execution built from a finished process tree."""

from __future__ import annotations

import base64
import contextlib
import os
import signal
from typing import Any

from signoff.sandbox.model import Execution
from signoff.sandbox.supervise import Outcome

# Every isolation record carries exactly these, each True only when it held for this execution.
GUARANTEES = (
    "network_isolated", "outside_files_hidden", "read_only_root", "read_only_mounts", "private_tmp",
    "pid_namespace", "ipc_uts_namespaces", "no_capabilities", "no_new_privs", "seccomp", "unprivileged_uid",
    "clean_environment", "memory_limit", "pids_limit", "cpu_share", "file_size_limit", "open_files_limit",
    "wall_clock", "tree_killed",
)


def guarantees(held: dict[str, bool]) -> dict[str, bool]:
    """`held` in the fixed order, refusing a missing or unknown key (a backend cannot forget one)."""
    if set(held) != set(GUARANTEES):
        missing, unknown = set(GUARANTEES) - set(held), set(held) - set(GUARANTEES)
        raise ValueError(f"guarantees: missing {sorted(missing)}, unknown {sorted(unknown)}")
    return {name: bool(held[name]) for name in GUARANTEES}


def execution(cmd: list[str], outcome: Outcome, stats: dict[str, int | None], isolation: dict[str, Any],
              names: list[str], files: dict[str, bytes] | None = None) -> Execution:
    """The Execution of a finished tree; `files` collected by the backend, else read from the
    collect channel."""
    exit_code: int | None
    sig: int | None = None
    status = outcome.status
    if outcome.timed_out:
        exit_code, sig = None, int(signal.SIGKILL)
    elif status is None:
        exit_code = None
    elif os.WIFSIGNALED(status):
        exit_code, sig = None, os.WTERMSIG(status)
    else:
        exit_code = os.waitstatus_to_exitcode(status)
        if 128 < exit_code <= 128 + 64:
            sig = exit_code - 128  # the sandbox's pid 1 (and sh) report a death by signal N as 128+N
    if files is None:
        files = _parse_collect(outcome.channels.get("collect", b""), names)
        if names and outcome.channels_truncated.get("collect"):
            isolation["collect_truncated"] = True
    cpu_ns = stats.get("cpu_ns")
    return Execution(
        command=cmd,
        exit_code=exit_code,
        signal=sig,
        timed_out=outcome.timed_out,
        oom_killed=bool(stats.get("oom_kills")),
        pids_limit_hit=bool(stats.get("pids_max_hits")),
        duration=outcome.duration,
        cpu_time=cpu_ns / 1e9 if cpu_ns is not None else outcome.cpu_time,
        peak_memory_bytes=stats.get("peak_memory") or outcome.max_rss or None,
        stdout=outcome.stdout.decode(errors="replace"),
        stderr=outcome.stderr.decode(errors="replace"),
        stdout_truncated=outcome.stdout_truncated,
        stderr_truncated=outcome.stderr_truncated,
        files=files,
        isolation=isolation,
    )


def _parse_collect(raw: bytes, names: list[str]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    wanted = set(names)
    for line in raw.split(b"\n"):
        name_b, sep, data = line.partition(b"\t")
        name = name_b.decode(errors="replace")
        if not sep or name not in wanted or name in files:
            continue
        with contextlib.suppress(ValueError):
            files[name] = base64.b64decode(data, validate=True)
    return files
