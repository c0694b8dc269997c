"""Token shapes of code lines, from a real lexer (Pygments).

A shape keeps what renaming cannot change (keywords, operators, punctuation) and replaces what it
can: identifiers become `N`, string literals `S`, numbers `0`. Whitespace and comments are dropped
and a trailing `;` or `,` is ignored, so reformatting does not change a shape either.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from pygments.lexer import Lexer
from pygments.lexers import JavascriptLexer, PythonLexer, get_lexer_by_name
from pygments.token import Comment, Keyword, Literal, Name, Number, String, Text, Token, _TokenType, is_token_subtype
from pygments.util import ClassNotFound

from signoff.kernel.errors import UsageError

LANGUAGES = ("python", "javascript")  # the fixture's; any language Pygments knows by name works too
Shape = tuple[str, ...]


@cache
def read_source(path: Path) -> str:
    """A code file's text for its guard: UTF-8, with any byte that is not (a Latin-1 comment, say)
    replaced, since shapes come from the tokens around it; a file holding NUL bytes is no source
    (a glob that caught a build output or an image) and is refused with its fix."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the code file {path} ({exc.strerror})", "fix the code globs") from exc
    if b"\0" in data:
        raise UsageError(f"{path} is not a source file (it holds NUL bytes)",
                         "narrow the organisation's code globs to its source files")
    return data.decode("utf-8", errors="replace")


def lexer(language: str) -> Lexer:
    if language == "python":
        lex: Lexer = PythonLexer(stripnl=False, ensurenl=False)
        return lex
    if language == "javascript":
        lex = JavascriptLexer(stripnl=False, ensurenl=False)
        return lex
    try:
        found: Lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        raise UsageError(f"no lexer for {language!r}", "name a language Pygments knows (python, javascript, go, "
                         "ruby, java, rust, php, c, ...)") from None
    return found


def _symbol(ttype: _TokenType, value: str) -> str | None:
    def sub(parent: _TokenType) -> bool:
        return bool(is_token_subtype(ttype, parent))

    if sub(Text) or sub(Comment) or ttype is Token.Whitespace or not value.strip():
        return None
    if sub(Keyword.Constant):
        return value
    if sub(Name) or sub(Keyword.Type):
        return "N"
    if sub(String) or sub(Literal.String):
        return "S"
    if sub(Number):
        return "0"
    return value.strip()


def without_trailing_commas(symbols: list[str] | tuple[str, ...]) -> list[str]:
    """Drop a comma right before a closing bracket: `f(a, b,)` has the shape of `f(a, b)`."""
    out: list[str] = []
    for sym in symbols:
        if sym in (")", "]", "}") and out and out[-1] == ",":
            out.pop()
        out.append(sym)
    return out


def _finish(symbols: list[str]) -> Shape:
    symbols = without_trailing_commas(symbols)
    while symbols and symbols[-1] in (";", ","):
        symbols.pop()
    return tuple(symbols)


def shapes_by_line(source: str, language: str, trim: bool = True) -> list[Shape]:
    """One shape per source line; the whole text is lexed at once so multi-line tokens are right.
    With `trim`, a trailing `;` or `,` is dropped from each line's shape."""
    def finish(symbols: list[str]) -> Shape:
        return _finish(symbols) if trim else tuple(symbols)
    lines: list[Shape] = []
    current: list[str] = []
    last_was_string = False
    for ttype, value in lexer(language).get_tokens(source):
        parts = value.split("\n")
        for k, part in enumerate(parts):
            if k > 0:
                lines.append(finish(current))
                current = []
                last_was_string = False
            sym = _symbol(ttype, part)
            if sym is None:
                if not is_token_subtype(ttype, String):
                    last_was_string = False
                continue
            if sym == "S" and last_was_string:
                continue  # one literal lexes as several string tokens; it is one `S`
            if current and current[-1] == "." and sym.isidentifier():
                sym = "N"  # `Buffer.from`: after a dot every word is an attribute name
            current.append(sym)
            last_was_string = sym == "S"
    lines.append(finish(current))
    return lines


def line_shape(line: str, language: str) -> Shape:
    shapes = shapes_by_line(line, language)
    return tuple(s for shape in shapes for s in shape)


def shape_key(shape: Iterable[str]) -> str:
    return hashlib.sha256("\x1f".join(shape).encode("utf-8")).hexdigest()
