"""Progress of long commands, always on standard error (standard output stays the result, and with
`--json` only JSON).

On a (UTF-8) terminal each step is a line of rich's live display: a spinner while it runs, a bar
when the step has a count, a check when the next step starts. Anywhere else each report is one
plain line, `<command>: <step> (<done>/<total>)`, so that logs show what happened and when it stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from signoff.cli.output import err_console
from signoff.kernel.progress import Progress

if TYPE_CHECKING:
    from rich.progress import TaskID


def plain_line(command: str, step: str, done: int | None, total: int | None) -> str:
    if done is None:
        return f"{command}: {step}"
    return f"{command}: {step} ({done}/{total})" if total is not None else f"{command}: {step} ({done})"


@contextmanager
def reporting(command: str) -> Iterator[Progress]:
    """A progress callback for COMMAND, live on a terminal, plain lines otherwise."""
    # The live display draws with spinner and check glyphs: only on a terminal that can show them.
    if not (err_console.is_terminal and err_console.encoding.replace("-", "") == "utf8"):
        def plain(step: str, done: int | None = None, total: int | None = None) -> None:
            err_console.print(plain_line(command, step, done, total), markup=False, highlight=False)

        yield plain
        return
    # Only a terminal draws (rich's live display is most of what importing this module would cost).
    from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as LiveDisplay

    # Step names are data (a bug id, a path): never read as markup.
    display = LiveDisplay(SpinnerColumn(finished_text="[green]✓[/]"), TextColumn("{task.description}", markup=False),
                          BarColumn(), TextColumn("{task.fields[count]}"), TimeElapsedColumn(), console=err_console)
    steps: dict[str, TaskID] = {}
    totals: dict[TaskID, int | None] = {}
    running: list[TaskID] = []  # the step being worked on: the one most recently started

    def finish() -> None:
        for task in running:
            total = totals[task] or 1
            display.update(task, total=total, completed=total)
        running.clear()

    def live(step: str, done: int | None = None, total: int | None = None) -> None:
        if not steps:
            display.start()  # drawn from the first step on: a command that fails first shows nothing
        task = steps.get(step)
        if task is None:
            finish()
            task = steps[step] = display.add_task(f"{command}: {step}", total=total, count="")
            running.append(task)
        totals[task] = total if total is not None else totals.get(task)
        if done is not None:
            display.update(task, completed=done, total=total,
                           count=f"{done}/{total}" if total is not None else str(done))

    try:
        yield live
        finish()  # a step that ended in an error keeps no check mark; the error follows
    finally:
        display.stop()  # restores the cursor, also after an error
