"""Counting what a long-running process does, for Prometheus, at no cost anywhere else.

Code in any layer calls `count(...)` or `observe(...)` with a metric name declared in `METRICS`. Until
a process turns metrics on (`signoff serve` does, with `enable`), those calls do nothing: a CLI
command does not import the Prometheus client or pay for a counter it never exports.

The names follow Prometheus' conventions (`signoff_` prefix, `_total` for counters, base units). Labels
are closed sets (an outcome, a family, a route template), never ids or text from a request, so a
stranger cannot grow the series without bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

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
