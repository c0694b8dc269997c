"""The one door to the regular-expression engine: RE2, which matches in time linear in the input
(no backtracking), so hostile text cannot make a pattern run for minutes.

Every airlock pattern is compiled here; a pattern RE2 cannot compile (lookaround, backreference)
is a programming error and fails at import, not at scan time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import re2  # type: ignore[import-untyped]

_OPTIONS: Any = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern raises; RE2's own stderr log would only add noise
_OPTIONS.max_mem = 64 << 20  # the alternations of a whole family fit comfortably


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    text: str


class Pattern:
    """A compiled RE2 pattern with the few operations the airlock needs."""

    __slots__ = ("_compiled", "source")

    def __init__(self, source: str, *, ignore_case: bool = False) -> None:
        self.source = source
        options: Any = re2.Options()
        options.log_errors = False
        options.max_mem = _OPTIONS.max_mem
        options.case_sensitive = not ignore_case
        try:
            self._compiled = re2.compile(source, options)
        except re2.error as exc:  # pragma: no cover - caught by the import of the module
            raise ValueError(f"pattern is not RE2-compatible: {exc}: {source[:80]!r}") from exc

    def search(self, text: str) -> Span | None:
        match = self._compiled.search(text)
        if match is None:
            return None
        return Span(match.start(), match.end(), match.group(0))

    def finditer(self, text: str) -> Iterator[Span]:
        for match in self._compiled.finditer(text):
            yield Span(match.start(), match.end(), match.group(0))

    def groups(self, text: str) -> Iterator[tuple[int, int, tuple[str | None, ...]]]:
        for match in self._compiled.finditer(text):
            yield match.start(), match.end(), tuple(match.groups())

    def sub(self, replacement: str, text: str) -> str:
        return str(self._compiled.sub(replacement, text))

    def sub_fn(self, replace: Callable[[str], str], text: str) -> str:
        """Replace every match with `replace(matched text)`."""
        out: list[str] = []
        cursor = 0
        for match in self._compiled.finditer(text):
            out.append(text[cursor : match.start()])
            out.append(replace(match.group(0)))
            cursor = match.end()
        out.append(text[cursor:])
        return "".join(out)


def compile_re(source: str, *, ignore_case: bool = False) -> Pattern:
    return Pattern(source, ignore_case=ignore_case)


def try_compile(source: str, *, ignore_case: bool = False) -> Pattern | None:
    """For patterns that come from a library (detect-secrets): None when RE2 cannot take them."""
    try:
        return Pattern(source, ignore_case=ignore_case)
    except ValueError:
        return None


def alternation(parts: list[str]) -> str:
    return "|".join(f"(?:{part})" for part in parts)
