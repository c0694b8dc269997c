"""The one place the CLI's consoles are made, so that every line a person reads behaves the same.

On a terminal, rich draws at the terminal's width and the terminal wraps long lines itself. Anywhere
else (a pipe, a log, CI) nothing is wrapped or cut: a path or a fix must survive copy and paste, and
a test must not depend on the width of its temporary path. `COLUMNS` therefore only counts on a
terminal. Plain prints never insert line breaks (soft wrap), on a terminal or not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, ConsoleDimensions
from rich.text import Text

if TYPE_CHECKING:
    from rich.table import Table

# Wide enough that no table row or message is folded; rich only pads what asks to fill the width,
# and off a terminal the CLI prints nothing that does (see `heading`).
UNBOUNDED = 1 << 20


class PersonConsole(Console):
    """A rich console whose width is the terminal's on a terminal and unbounded otherwise."""

    @property
    def size(self) -> ConsoleDimensions:
        if not self.is_terminal:
            return ConsoleDimensions(UNBOUNDED, super().size.height)
        return super().size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def make_console(*, stderr: bool = False) -> PersonConsole:
    # No emoji codes: what the CLI prints is data (a test id `t.py::test_smile:` or a reason quoting
    # `:warning:` stays as written), and replacing them imported rich's table of 3,608 names (about 12 ms)
    # on the first line every command printed.
    return PersonConsole(stderr=stderr, soft_wrap=True, emoji=False)


console = make_console()
err_console = make_console(stderr=True)


def heading(text: str) -> None:
    """A section heading: a rule across a terminal, a plain line elsewhere."""
    if console.is_terminal:
        console.rule(text)
    else:
        console.print(f"== {text} ==", markup=False, highlight=False)


def data_table(*headers: str) -> Table:
    """A table of data (ids, paths, commands, payloads): a cell too wide for the terminal folds onto
    the next line instead of being cut with an ellipsis."""
    from rich.table import Column, Table  # on first use: most commands print no table (rich.table is slow to import)

    return Table(*(Column(h, overflow="fold") for h in headers))


def add_data_row(table: Table, *cells: str | Text) -> None:
    """A row whose text cells are shown exactly as given, never read as markup (a path may hold
    `[red]`); pass `Text.from_markup(...)` for a cell that is ours to style."""
    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))
