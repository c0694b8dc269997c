"""Counting what a long-running process does, for Prometheus, at no cost anywhere else.

Code in any layer calls `count(...)` or `observe(...)` with a metric name declared in `METRICS`. Until
a process turns metrics on, those calls do nothing. `signoff serve` turns them on (`enable`) and
exports them. A CLI command (the workers: `signoff desk work`, `signoff repair run`, ...) keeps its
counts in memory (`count_for_command`) and, when it ends, adds them to its home's shared totals
(`add_command_counts`, `<home>/metrics/commands.json`), which `signoff serve` exports beside its own:
the sandbox runs, verdicts and checkpoints of the workers would otherwise never reach a scrape. A
command does not import the Prometheus client.

The names follow Prometheus' conventions (`signoff_` prefix, `_total` for counters, base units). Labels
are closed sets (an outcome, a family, a route template), never ids or text from a request, so a
stranger cannot grow the series without bound.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from signoff.kernel.filelock import exclusive
from signoff.kernel.replace import replace_text

Kind = Literal["counter", "histogram"]


@dataclass(frozen=True)
class Metric:
    kind: Kind
    help: str
    labels: tuple[str, ...] = ()


METRICS: dict[str, Metric] = {
    "signoff_http_requests_total": Metric("counter", "HTTP requests answered, by route template, method and "
                                          "status class.", ("route", "method", "status")),
    "signoff_http_request_seconds": Metric("histogram", "Seconds from a request's arrival to its response's "
                                           "start (a stream counts until its headers).", ("route",)),
    "signoff_rooms_deliveries_total": Metric("counter", "Room events streamed to connected agents.", ("transport",)),
    "signoff_sandbox_runs_total": Metric("counter", "Sandboxed runs, by backend and how they ended.",
                                         ("backend", "outcome")),
    "signoff_verdicts_total": Metric("counter", "Verdicts reached, by workflow and verdict.", ("workflow", "verdict")),
    "signoff_ledger_checkpoints_total": Metric("counter", "Signed checkpoints of the ledger's chain head."),
    "signoff_airlock_scans_total": Metric("counter", "Texts the airlock scanned, by result.", ("result",)),
    "signoff_airlock_quarantines_total": Metric("counter", "Airlock quarantines, by family that fired "
                                                "(one text can count under several).", ("family",)),
}

Sink = Callable[[str, float, dict[str, str]], None]
_sinks: dict[Kind, Sink] = {}


def enable(counter: Sink, histogram: Sink) -> None:
    """Send every later `count` and `observe` to these (the Prometheus side sets them)."""
    _sinks["counter"] = counter
    _sinks["histogram"] = histogram


def disable() -> None:
    _sinks.clear()


def count(name: str, amount: float = 1.0, **labels: str) -> None:
    """Add `amount` to the counter `name` (a key of METRICS), when metrics are on."""
    sink = _sinks.get("counter")
    if sink is not None:
        sink(name, amount, labels)


def observe(name: str, value: float, **labels: str) -> None:
    """Record one observation in the histogram `name`, when metrics are on."""
    sink = _sinks.get("histogram")
    if sink is not None:
        sink(name, value, labels)


Series = tuple[str, tuple[tuple[str, str], ...]]  # a counter's name and its labels, sorted
COMMAND_TOTALS = Path("metrics") / "commands.json"  # under the home


class Tally:
    """Counter values kept in memory by one process (any thread may count)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[Series, float] = {}

    def add(self, name: str, amount: float, labels: dict[str, str]) -> None:
        key = (name, tuple(sorted(labels.items())))
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def values(self) -> dict[Series, float]:
        with self._lock:
            return dict(self._values)


_command: list[tuple[Tally, dict[Kind, Sink]]] = []


def count_for_command() -> None:
    """Count this command's work in memory, for `add_command_counts` when it ends."""
    tally = Tally()
    _command.append((tally, dict(_sinks)))
    enable(tally.add, lambda name, value, labels: None)  # histograms are a server's (request times)


def add_command_counts(home: Callable[[], Path | None]) -> None:
    """Add what this command counted to the totals under `home()` (asked only when it counted
    something; None: the command used no home, as a one-off `airlock scan`, and its counts go
    nowhere), and put back whatever counting was on before it."""
    if not _command:
        return
    tally, before = _command.pop()
    _sinks.clear()
    _sinks.update(before)
    counted = tally.values()
    if not counted:
        return
    where = home()
    if where is None:
        return
    path = where / COMMAND_TOTALS
    path.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(path.with_name(path.name + ".lock")):  # commands ending at once each add their own, none lost
        totals = command_totals(path)
        for key, amount in counted.items():
            totals[key] = totals.get(key, 0.0) + amount
        rows = [{"name": name, "labels": dict(labels), "value": value}
                for (name, labels), value in sorted(totals.items())]
        replace_text(path, json.dumps({"counters": rows}, indent=1) + "\n")  # never half a file


def command_totals(path: Path) -> dict[Series, float]:
    """The totals the commands sharing a home counted (none when nothing was written yet). Names this
    build does not declare, and malformed rows, are left out: the file is ours, but not trusted blindly."""
    with contextlib.suppress(FileNotFoundError, ValueError, AttributeError):
        rows = json.loads(path.read_text()).get("counters", [])
        out: dict[Series, float] = {}
        for row in rows if isinstance(rows, list) else []:
            name, labels, value = row.get("name"), row.get("labels"), row.get("value")
            metric = METRICS.get(name) if isinstance(name, str) else None
            if (metric is None or metric.kind != "counter" or not isinstance(labels, dict)
                    or set(labels) != set(metric.labels) or isinstance(value, bool)
                    or not isinstance(value, int | float)):
                continue
            out[(name, tuple(sorted((str(k), str(v)) for k, v in labels.items())))] = float(value)
        return out
    return {}
