"""A unified diff as reviewers read it: one section per file, each line with its old and new line
numbers, the code highlighted on the server (Pygments, by the file's name), every line of the diff
shown once and in order (headers and hunk lines included).

Only the presentation: what a person approves is bound to the diff's text by the workflow's
digest (the repair review, the desk's exact head), never to this markup. Every character of
the text is escaped: a token's text goes through `Markup.escape` and only our own `<span
class>` wrappers are markup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fastapi import Request
from markupsafe import Markup
from pygments import lex
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
MAX_HIGHLIGHTED = 200_000  # characters of one file's lines: past it, the lines are shown plain (still escaped)


@dataclass(frozen=True)
class DiffLine:
    kind: str  # add | del | ctx | hunk | meta (a header line, "\ No newline at end of file")
    old: int | None  # its line number in the old file, if it has one
    new: int | None
    html: Markup  # the line without its +/-/space sign, escaped and highlighted

    @property
    def sign(self) -> str:
        return {"add": "+", "del": "-", "ctx": " "}.get(self.kind, "")


@dataclass(frozen=True)
class SplitRow:
    """A row of the side-by-side view: the old line on the left, the new on the right (a removed
    line beside the added line that replaced it), or one header or hunk line across both."""

    left: DiffLine | None
    right: DiffLine | None
    across: DiffLine | None = None


@dataclass
class DiffFile:
    path: str  # "" for a diff that names no file
    lines: list[DiffLine] = field(default_factory=list)
    added: int = 0
    deleted: int = 0

    def split(self) -> list[SplitRow]:
        """The same lines side by side: each run of removed lines paired with the added lines after it."""
        rows: list[SplitRow] = []
        removed: list[DiffLine] = []
        added: list[DiffLine] = []

        def flush() -> None:
            for n in range(max(len(removed), len(added))):
                rows.append(SplitRow(removed[n] if n < len(removed) else None, added[n] if n < len(added) else None))
            removed.clear()
            added.clear()

        for line in self.lines:
            if line.kind == "del" and not added:
                removed.append(line)
            elif line.kind == "add":
                added.append(line)
            else:
                flush()
                if line.kind == "del":
                    removed.append(line)
                elif line.kind == "ctx":
                    rows.append(SplitRow(line, line))
                else:
                    rows.append(SplitRow(None, None, line))
        flush()
        return rows


def _path_of(header: str) -> str:
    """The file a `diff --git a/X b/Y` header (or a `+++ b/Y` / `--- a/X` line) names."""
    if header.startswith("diff --git "):
        parts = header[len("diff --git "):].split(" b/", 1)
        return parts[1] if len(parts) == 2 else parts[0].removeprefix("a/")
    name = header[4:].split("\t", 1)[0]
    return "" if name == "/dev/null" else name.removeprefix("a/").removeprefix("b/")


def _lexer(path: str) -> Lexer:
    try:
        found: Lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False) if path else TextLexer()
    except ClassNotFound:
        found = TextLexer()
    return found


def _css(ttype: _TokenType) -> str:
    """The short class Pygments gives the token's type (or its nearest parent's): "k", "s2", ..."""
    found: _TokenType | None = ttype
    while found is not None and found not in STANDARD_TYPES:
        found = found.parent
    return STANDARD_TYPES[found] if found is not None else ""


def _highlighted(path: str, texts: list[str]) -> list[Markup]:
    """Each of `texts` (consecutive lines of one side of a hunk) as escaped, highlighted markup: the
    lines are lexed together, so a string or comment over several lines is coloured as one."""
    if not texts:
        return []
    source = "\n".join(texts)
    if len(source) > MAX_HIGHLIGHTED:
        return [Markup.escape(t) for t in texts]
    out: list[list[Markup]] = [[]]
    for ttype, value in lex(source, _lexer(path)):
        css = _css(ttype)
        for n, part in enumerate(value.split("\n")):
            if n:
                out.append([])
            if part:
                out[-1].append(Markup('<span class="{}">{}</span>').format(css, part) if css else Markup.escape(part))
    return [Markup("").join(parts) for parts in out[:len(texts)]] + [Markup("")] * (len(texts) - len(out))


def _highlight_file(f: DiffFile, raw: list[tuple[str, int | None, int | None, str]]) -> None:
    """Lex the old side (context and removed lines) and the new side (context and added lines) of
    the file, each as one text, so that the colours follow the code rather than the diff."""
    old_side = [text for kind, _, _, text in raw if kind in ("ctx", "del")]
    new_side = [text for kind, _, _, text in raw if kind in ("ctx", "add")]
    old_html, new_html = iter(_highlighted(f.path, old_side)), iter(_highlighted(f.path, new_side))
    for kind, old, new, text in raw:
        if kind == "ctx":
            next(old_html)
            html = next(new_html)
        elif kind == "del":
            html = next(old_html)
        elif kind == "add":
            html = next(new_html)
        else:
            html = Markup.escape(text)
        f.lines.append(DiffLine(kind, old, new, html))


def split_asked(request: Request) -> bool:
    """Whether the page was asked for the side-by-side view (`?diff=split`); unified otherwise."""
    return request.query_params.get("diff") == "split"


def diff_files(diff: str) -> list[DiffFile]:
    """The files of a unified diff (git's, or bare hunks), each with its lines numbered."""
    files: list[DiffFile] = []
    raws: list[list[tuple[str, int | None, int | None, str]]] = []
    old = new = 0
    in_hunk = False

    def start(path: str) -> None:
        files.append(DiffFile(path))
        raws.append([])

    for line in diff.splitlines():
        if line.startswith("diff --git ") or (line.startswith("--- ") and not in_hunk and
                                              (not files or any(k != "meta" for k, *_ in raws[-1]))):
            start(_path_of(line))
            in_hunk = False
        elif not files:
            start("")
        if line.startswith("+++ ") and not in_hunk:
            files[-1].path = _path_of(line) or files[-1].path
            raws[-1].append(("meta", None, None, line))
            continue
        hunk = HUNK.match(line)
        if hunk:
            old, new, in_hunk = int(hunk.group(1)), int(hunk.group(2)), True
            raws[-1].append(("hunk", None, None, line))
        elif not in_hunk:
            raws[-1].append(("meta", None, None, line))
        elif line.startswith("+"):
            raws[-1].append(("add", None, new, line[1:]))
            new += 1
            files[-1].added += 1
        elif line.startswith("-"):
            raws[-1].append(("del", old, None, line[1:]))
            old += 1
            files[-1].deleted += 1
        elif line.startswith("\\"):
            raws[-1].append(("meta", None, None, line))
        else:
            raws[-1].append(("ctx", old, new, line[1:]))
            old += 1
            new += 1
    for f, raw in zip(files, raws, strict=True):
        _highlight_file(f, raw)
    return files
