"""How long-running work tells a face what it is doing, without knowing who listens.

A workflow takes an optional `progress` callback and calls it at each step: `progress("preparing the
environment")`, or with a count, `progress("execution base", done=1, total=3)`. Faces decide how to
show it (the CLI draws a live display on a terminal and plain lines elsewhere); the default says
nothing. A progress call never changes what the work does.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def __call__(self, step: str, done: int | None = None, total: int | None = None) -> None: ...


def silent(step: str, done: int | None = None, total: int | None = None) -> None:
    """The default: report nothing."""


def within(progress: Progress, prefix: str) -> Progress:
    """Report to PROGRESS with every step named `<prefix>: <step>` (one part of a larger piece of work)."""

    def report(step: str, done: int | None = None, total: int | None = None) -> None:
        progress(f"{prefix}: {step}", done, total)

    return report
