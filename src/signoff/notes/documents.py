"""Reading and writing the versioned JSON artifacts of a notes run.

Every artifact carries a `schema` field (`signoff/<name>@<version>`). Readers check it before
anything else, so a file from another tool or another version is refused with a message naming the
file, what it holds and what was expected. Shape checks are written by hand rather than with a JSON
Schema engine: the snapshot of a long history holds tens of thousands of commits, and the checks run
on every one of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.kernel.replace import replace_text, staged

SNAPSHOT = "signoff/snapshot@1"
FACTS = "signoff/facts@1"
DRAFT = "signoff/draft@1"
VERDICT = "signoff/verdict@1"
REVIEW = "signoff/review@1"
REVIEW_ROUND = "signoff/review-round@1"
DECISION = "signoff/decision@1"
GRADE = "signoff/grade@1"


# One encoder for every line: `json.dumps` with options builds a new encoder per call, which was a
# tenth of a snapshot's Python time (tens of thousands of lines).
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def dumps_line(value: Any) -> str:
    """One compact JSON value on one line (used for streamed arrays and JSON Lines)."""
    return _LINE_ENCODER.encode(value)


def read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise NotFoundError(f"{what} not found: {path}", f"pass the path of an existing {what} file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 text ({exc.reason} at byte {exc.start})",
                         f"pass a {what} file written by signoff") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                         f"regenerate the {what} or fix the JSON syntax") from None


def check_schema(doc: Any, expected: str, path: Path | str, what: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise UsageError(f"{what} {path} is not a JSON object", f"a {what} is an object with schema {expected!r}")
    found = doc.get("schema")
    if found != expected:
        name = expected.split("@")[0]
        if isinstance(found, str) and found.split("@")[0] == name:
            raise UsageError(f"{what} {path} has schema version {found!r}; this signoff reads {expected!r}",
                             f"regenerate the {what} with this version of signoff")
        raise UsageError(f"{what} {path} has schema {found!r}, expected {expected!r}",
                         f"pass a {what} file (did you swap two file arguments?)")
    return doc


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Write atomically so a crash never leaves half an artifact behind."""
    replace_text(path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


class ShapeError(UsageError):
    pass


def need(cond: bool, where: str, expected: str, what: str, path: Path | str) -> None:
    if not cond:
        raise ShapeError(f"{what} {path}: {where} must be {expected}", f"regenerate the {what} or fix that field")


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


class StreamWriter:
    """Write `{header..., key: [items...], trailer...}` with one item per line, an item at a time.

    The layout is ordinary JSON, and `StreamedDoc` can read it back one item at a time. The file
    appears (atomically) only when `close` writes the trailer, which always carries `count`, so a
    truncated file is detected; leaving the `with` block by an exception leaves nothing behind.
    With `digest` (a hashlib object), each item's line is fed to it and the trailer gets `digest`.
    Lines are encoded once and written as bytes through a large buffer: a snapshot has one line
    per commit, and this runs while git is still printing the history.
    """

    def __init__(self, path: Path, header: dict[str, Any], key: str, digest: Any = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.digest, self.count, self._placed = path, digest, 0, False
        self._stage = staged(path, buffering=_WRITE_BUFFER)
        self._fh = self._stage.__enter__()
        head = dumps_line(header)
        self._fh.write((head[:-1] + ("," if header else "") + json.dumps(key) + ":[\n").encode("utf-8"))

    def __enter__(self) -> StreamWriter:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if not self._placed:  # left before `close` finished: an exception, or a stream that was cut
            self._stage.__exit__(Abandoned, Abandoned(), None)

    def add(self, item: Any) -> None:
        line = dumps_line(item).encode("utf-8")
        self._fh.write(b",\n" + line if self.count else line)
        if self.digest is not None:
            self.digest.update(line)
            self.digest.update(b"\n")
        self.count += 1

    def close(self, trailer: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write the trailer (adding `count`, and `digest` when hashing) and put the file in place."""
        trail = trailer if trailer is not None else {}
        trail["count"] = self.count
        if self.digest is not None:
            trail["digest"] = "sha256:" + self.digest.hexdigest()
        self._fh.write(("\n]," + dumps_line(trail)[1:] + "\n").encode("utf-8"))
        self._stage.__exit__(None, None, None)
        self._placed = True
        return trail


_WRITE_BUFFER = 1 << 20


class Abandoned(Exception):
    """Thrown into a staged file left before `StreamWriter.close`, so it is removed, not placed."""


def write_streamed(path: Path, header: dict[str, Any], key: str, items: Iterable[Any],
                   trailer: dict[str, Any] | None = None, digest: Any = None) -> dict[str, Any]:
    """`StreamWriter` over an iterable. The trailer is completed after the items (the iterator may
    update it while it runs)."""
    with StreamWriter(path, header, key, digest) as out:
        for item in items:
            out.add(item)
        return out.close(trailer)


class StreamedDoc:
    """Read a document written by `write_streamed` one item at a time (or any JSON layout of the
    same document, read whole: a hand-edited or pretty-printed file is still accepted)."""

    def __init__(self, path: Path, schema: str, key: str, what: str) -> None:
        self.path, self.schema, self.key, self.what = path, schema, key, what
        if not path.is_file():
            raise NotFoundError(f"{what} not found: {path}", f"pass the path of an existing {what} file")
        self.trailer: dict[str, Any] | None = None
        self._whole: dict[str, Any] | None = None
        marker = json.dumps(key) + ":["
        with path.open("rb") as fh:
            first = fh.readline()
        try:
            line = first.decode("utf-8").rstrip("\n")
        except UnicodeDecodeError:
            line = ""
        if line.startswith("{") and line.endswith(marker):
            body = line[: -len(marker)].rstrip(",")
            try:
                header = json.loads(body + "}")
            except json.JSONDecodeError:
                header = None
            if isinstance(header, dict):
                self.header = check_schema(header, schema, path, what)
                return
        whole = check_schema(read_json(path, what), schema, path, what)
        need(isinstance(whole.get(key), list), key, "a list", what, path)
        self._whole = whole
        self.header = {k: v for k, v in whole.items() if k != key}

    def items(self, digest: Any = None) -> Iterable[Any]:
        """Yield the items; with `digest` (a hashlib object), feed it each item's canonical line."""
        if self._whole is not None:
            for item in self._whole[self.key]:
                if digest is not None:
                    digest.update(dumps_line(item).encode("utf-8") + b"\n")
                yield item
            self.trailer = self.header
            return
        count = 0
        with self.path.open("rb") as fh:
            fh.readline()
            for lineno, raw in enumerate(fh, start=2):
                try:
                    line = raw.decode("utf-8").rstrip("\n")
                except UnicodeDecodeError:
                    raise UsageError(f"{self.what} {self.path} line {lineno} is not UTF-8 text",
                                     f"regenerate the {self.what}") from None
                if line.startswith("],"):
                    try:
                        trailer = json.loads("{" + line[2:])
                    except json.JSONDecodeError as exc:
                        raise UsageError(f"{self.what} {self.path} line {lineno}: bad trailer ({exc.msg})",
                                         f"regenerate the {self.what}") from None
                    if not isinstance(trailer, dict) or trailer.get("count") != count:
                        raise UsageError(f"{self.what} {self.path} says it holds {trailer.get('count')!r} items "
                                         f"but {count} were read", f"the file was cut or edited; regenerate the "
                                         f"{self.what}")
                    self.trailer = trailer
                    return
                if not line:
                    continue
                body = line.removesuffix(",")
                try:
                    item = json.loads(body)
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{self.what} {self.path} line {lineno} is not valid JSON: {exc.msg}",
                                     f"regenerate the {self.what}") from None
                if digest is not None:
                    # Over the line as written: any byte changed in an item is a change.
                    digest.update(body.encode("utf-8") + b"\n")
                count += 1
                yield item
        raise UsageError(f"{self.what} {self.path} ends before its closing trailer after {count} items",
                         f"the file was cut short; regenerate the {self.what}")
