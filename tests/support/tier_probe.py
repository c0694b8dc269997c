"""Which tier a test belongs to, from what it does (docs/testing.md): a pytest plugin that records,
per test, every socket, process and database it (or a fixture it uses) opened.

    SIGNOFF_TIER_PROBE_OUT=probe.jsonl pytest -p tests.support.tier_probe -n 0 tests/<tier>/<area>

writes JSON lines: one `ran` line per test with its fixtures, and one line per act with the test's node
id, the kind (tests/support/tier_rules.py) and the test-suite functions on the stack (the fixture or
test that did it; a session or module fixture's acts are recorded under the first test that used it).
With SIGNOFF_TIER_PROBE_ABORT=1 a socket or a process, which only tests/system may open, raises at
once instead, so probing a slow system test costs only its setup up to the first act. The PostgreSQL
cluster the suite starts once (tests/support/pg.py) is infrastructure tests/integration may use: its
processes are recorded as `postgres` and never stopped.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.tier_rules import watching

_TESTS = str(Path(__file__).resolve().parents[1]) + os.sep
_current = [""]
_watch: list[Any] = []


class TierProbeAbort(BaseException):
    """Stops a probed test at its first socket or process (a BaseException, so that `except Exception`
    in the code under test does not swallow it and carry on)."""


def _write(entry: dict[str, Any]) -> None:
    out = os.environ.get("SIGNOFF_TIER_PROBE_OUT")
    if out:
        with open(out, "a", encoding="utf-8") as sink:
            sink.write(json.dumps(entry) + "\n")


def _suite_frames() -> list[str]:
    frames = []
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_TESTS) and not name.endswith(("tier_probe.py", "tier_rules.py")):
            frames.append(f"{os.path.relpath(name, _TESTS)}:{frame.f_code.co_name}")
        frame = frame.f_back
    return frames


def _record(kind: str, detail: str) -> None:
    frames = _suite_frames()
    if kind == "process" and any(f.startswith("support/pg.py:") for f in frames):
        kind = "postgres"
    _write({"test": _current[0], "kind": kind, "detail": detail[:300], "frames": frames})
    if kind in ("socket", "process") and os.environ.get("SIGNOFF_TIER_PROBE_ABORT"):
        raise TierProbeAbort(f"tier probe: {kind}: {detail[:200]}")


def pytest_configure(config: pytest.Config) -> None:
    watch = watching(_record)
    watch.__enter__()
    _watch.append(watch)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _watch:
        _watch.pop().__exit__(None, None, None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _current[0] = item.nodeid
    _write({"test": item.nodeid, "kind": "ran", "fixtures": list(getattr(item, "fixturenames", []))})
    try:
        return (yield)
    finally:
        _current[0] = ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped or report.failed:
        text = str(report.longrepr)
        _write({"test": report.nodeid, "kind": report.outcome, "phase": report.when,
                "aborted": TierProbeAbort.__name__ in text, "detail": text[-300:]})
