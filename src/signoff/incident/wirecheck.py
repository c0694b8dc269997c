"""A position-tracking JSON scanner over raw bytes.

It never re-serialises: every leaf is reported with the byte offset and length of its value exactly
as it sits in the input, so a fingerprint describes the bytes that were signed. It follows RFC 8259
strictly (UTF-8 only, no NaN/Infinity, no raw control characters in strings) and reports the byte
offset of the first error. Duplicate keys are kept and flagged; lone surrogate escapes are accepted
like Python's and JavaScript's parsers accept them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from signoff.kernel.errors import UsageError

MAX_DEPTH = 256
_WS = frozenset(b" \t\n\r")
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SIMPLE_ESCAPES = {ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b", ord("f"): "\f",
                   ord("n"): "\n", ord("r"): "\r", ord("t"): "\t"}
_HEX = frozenset(b"0123456789abcdefABCDEF")

PathPart = str | int


class WireError(UsageError):
    """Malformed input, with the byte offset where scanning stopped."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"malformed JSON at byte {offset}: {message}",
                         "the bytes are not one RFC 8259 JSON document in UTF-8")
        self.offset = offset


@dataclass(frozen=True)
class Leaf:
    """One scalar (or empty container) and where its raw bytes are."""

    parts: tuple[PathPart, ...]
    offset: int
    length: int
    type: str  # string | number | true | false | null | object | array (the last two only when empty)
    non_ascii: bool  # the raw slice holds bytes >= 0x80
    escaped: bool  # the raw slice holds \u escapes
    duplicate: bool  # a key on the path repeats an earlier key of the same object
    value: Any

    @property
    def path(self) -> str:
        return render_path(self.parts)


def render_path(parts: tuple[PathPart, ...], key_label: Any = None) -> str:
    """`data.customer.name`, `items[2].sku`; keys that are not identifiers are quoted, or passed
    through `key_label` (the fingerprint uses it to salt them, since such keys may be data)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}" if out else part
        else:
            label = key_label(part) if key_label is not None else _quote(part)
            out += f"[{label}]"
    return out or "$"


def _quote(key: str) -> str:
    import json

    return json.dumps(key, ensure_ascii=False)


class _Scanner:
    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.n = len(raw)
        self.leaves: list[Leaf] = []

    def fail(self, message: str, at: int) -> WireError:
        return WireError(message, at)

    def ws(self, i: int) -> int:
        raw, n = self.raw, self.n
        while i < n and raw[i] in _WS:
            i += 1
        return i

    def run(self) -> list[Leaf]:
        if self.raw.startswith(b"\xef\xbb\xbf"):
            raise self.fail("byte order mark before the document", 0)
        i = self.ws(0)
        if i >= self.n:
            raise self.fail("empty document", i)
        i = self.value(i, (), False, 0)
        i = self.ws(i)
        if i != self.n:
            raise self.fail("extra data after the document", i)
        return self.leaves

    def value(self, i: int, parts: tuple[PathPart, ...], dup: bool, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting deeper than {MAX_DEPTH}", i)
        raw = self.raw
        if i >= self.n:
            raise self.fail("unexpected end of input, expected a value", i)
        c = raw[i]
        if c == 0x7B:  # {
            return self.obj(i, parts, dup, depth)
        if c == 0x5B:  # [
            return self.arr(i, parts, dup, depth)
        if c == 0x22:  # "
            end, text, non_ascii, escaped = self.string(i)
            self.leaves.append(Leaf(parts, i, end - i, "string", non_ascii, escaped, dup, text))
            return end
        for word, kind, val in ((b"true", "true", True), (b"false", "false", False), (b"null", "null", None)):
            if raw.startswith(word, i):
                self.leaves.append(Leaf(parts, i, len(word), kind, False, False, dup, val))
                return i + len(word)
        m = _NUMBER.match(raw, i)
        if m and m.end() > i:
            literal = m.group(0)
            num: int | float = float(literal) if (m.group(1) or m.group(2)) else int(literal)
            self.leaves.append(Leaf(parts, i, m.end() - i, "number", False, False, dup, num))
            return m.end()
        raise self.fail(f"unexpected byte {raw[i:i + 1]!r}, expected a value", i)

    def obj(self, start: int, parts: tuple[PathPart, ...], dup: bool, depth: int) -> int:
        raw = self.raw
        i = self.ws(start + 1)
        if i < self.n and raw[i] == 0x7D:
            self.leaves.append(Leaf(parts, start, i + 1 - start, "object", False, False, dup, {}))
            return i + 1
        seen: set[str] = set()
        while True:
            if i >= self.n or raw[i] != 0x22:
                raise self.fail("expected a string key", i)
            i, key, _, _ = self.string(i)
            repeated = key in seen
            seen.add(key)
            i = self.ws(i)
            if i >= self.n or raw[i] != 0x3A:
                raise self.fail("expected ':' after a key", i)
            i = self.value(self.ws(i + 1), (*parts, key), dup or repeated, depth + 1)
            i = self.ws(i)
            if i < self.n and raw[i] == 0x2C:
                i = self.ws(i + 1)
                continue
            if i < self.n and raw[i] == 0x7D:
                return i + 1
            raise self.fail("expected ',' or '}' in an object", i)

    def arr(self, start: int, parts: tuple[PathPart, ...], dup: bool, depth: int) -> int:
        raw = self.raw
        i = self.ws(start + 1)
        if i < self.n and raw[i] == 0x5D:
            self.leaves.append(Leaf(parts, start, i + 1 - start, "array", False, False, dup, []))
            return i + 1
        index = 0
        while True:
            i = self.value(i, (*parts, index), dup, depth + 1)
            index += 1
            i = self.ws(i)
            if i < self.n and raw[i] == 0x2C:
                i = self.ws(i + 1)
                continue
            if i < self.n and raw[i] == 0x5D:
                return i + 1
            raise self.fail("expected ',' or ']' in an array", i)

    def string(self, start: int) -> tuple[int, str, bool, bool]:
        """Scan a string starting at its opening quote; return (end, decoded, non_ascii, escaped)."""
        raw, n = self.raw, self.n
        i = start + 1
        pieces: list[str] = []
        run_start = i
        non_ascii = escaped = False
        while True:
            if i >= n:
                raise self.fail("unterminated string", start)
            c = raw[i]
            if c == 0x22:
                pieces.append(self._utf8(run_start, i))
                return i + 1, "".join(pieces), non_ascii, escaped
            if c < 0x20:
                raise self.fail("raw control character in a string", i)
            if c >= 0x80:
                non_ascii = True
                i += 1
                continue
            if c != 0x5C:
                i += 1
                continue
            pieces.append(self._utf8(run_start, i))
            if i + 1 >= n:
                raise self.fail("unterminated escape", i)
            e = raw[i + 1]
            if e in _SIMPLE_ESCAPES:
                pieces.append(_SIMPLE_ESCAPES[e])
                i += 2
            elif e == 0x75:  # \uXXXX
                escaped = True
                code = self._hex4(i)
                i += 6
                if 0xD800 <= code <= 0xDBFF and raw.startswith(b"\\u", i):
                    low = self._hex4(i)
                    if 0xDC00 <= low <= 0xDFFF:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                pieces.append(chr(code))
            else:
                raise self.fail(f"invalid escape \\{chr(e)}", i)
            run_start = i

    def _hex4(self, i: int) -> int:
        digits = self.raw[i + 2:i + 6]
        if len(digits) != 4 or not set(digits) <= _HEX:
            raise self.fail("\\u needs four hex digits", i)
        return int(digits, 16)

    def _utf8(self, a: int, b: int) -> str:
        try:
            return self.raw[a:b].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail("invalid UTF-8", a + exc.start) from None


def scan(raw: bytes) -> list[Leaf]:
    """Every leaf of the JSON document in `raw`, in document order."""
    if not isinstance(raw, bytes | bytearray):
        raise UsageError("wirecheck scans bytes", "pass the raw request body, not a decoded string")
    return _Scanner(bytes(raw)).run()
