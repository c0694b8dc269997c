"""Embedded encodings, decoded for scanning only: base64, base32, hex (also in spaced pairs, `69 67 6e`) and binary
(8-bit groups) runs, `\\u0069` escapes, URL and HTML escapes, rot13, the text read backwards, and ASCII smuggled in
Unicode tag characters.

Each decoder returns `Decoded(kind, text)` pieces; the scanner normalises and scans them like the
report itself. Nothing decoded is ever stored or shown. The work is bounded: at most
`MAX_PIECES` pieces per input, each no longer than the input, decoded to a depth of two."""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import itertools
import urllib.parse
from dataclasses import dataclass

from signoff.airlock._re import compile_re

MAX_PIECES = 64
MIN_DECODED_LETTERS = 6

_BASE64 = compile_re(r"[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9_\-]{16,}={0,2}")
_HEX = compile_re(r"(?:[0-9A-Fa-f]{2}){8,}")
_HEX_SPACED = compile_re(r"(?:\b[0-9A-Fa-f]{2}[ ,:]){8,}[0-9A-Fa-f]{2}\b")
_BASE32 = compile_re(r"\b[A-Z2-7]{24,}={0,6}")
_UNICODE_ESCAPED = compile_re(r"(?:(?:\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\})[ ,]?){6,}")
_HEX_ESCAPED = compile_re(r"(?:(?:\\x|0x|%)[0-9A-Fa-f]{2}[ ,]*){6,}")
_BINARY = compile_re(r"(?:[01]{8}[ ,;]?){6,}")
_URL_ESCAPE = compile_re(r"%[0-9A-Fa-f]{2}")
_HTML_ESCAPE = compile_re(r"&(?:#[0-9]{2,7}|#[xX][0-9A-Fa-f]{2,6}|[A-Za-z]{2,10});")


@dataclass(frozen=True, slots=True)
class Decoded:
    kind: str  # base64 | base32 | hex | binary | unicode escape | url | html | rot13 | reversed | tag
    text: str


def decode_all(text: str, smuggled: str = "") -> list[Decoded]:
    """Every decodable piece of `text` (case-preserved, normalised), outermost first."""
    pieces: list[Decoded] = []
    if smuggled.strip():
        pieces.append(Decoded("tag", smuggled))
    _decode_into(text, pieces, depth=0)
    return pieces[:MAX_PIECES]


def _decode_into(text: str, pieces: list[Decoded], depth: int) -> None:
    if depth >= 2 or len(pieces) >= MAX_PIECES:
        return
    found: list[Decoded] = []
    for span in _BASE64.finditer(text):
        decoded = _b64(span.text)
        if decoded is not None:
            found.append(Decoded("base64", decoded))
    for span in _HEX.finditer(text):
        decoded = _printable(_unhex(span.text))
        if decoded is not None:
            found.append(Decoded("hex", decoded))
    for span in _HEX_SPACED.finditer(text):
        decoded = _printable(_unhex("".join(ch for ch in span.text if ch in _HEXDIGITS)))
        if decoded is not None:
            found.append(Decoded("hex", decoded))
    for span in _BASE32.finditer(text):
        decoded = _b32(span.text)
        if decoded is not None:
            found.append(Decoded("base32", decoded))
    for span in _UNICODE_ESCAPED.finditer(text):
        decoded = _unescape_unicode(span.text)
        if decoded is not None:
            found.append(Decoded("unicode escape", decoded))
    for span in _HEX_ESCAPED.finditer(text):
        digits = "".join(ch for ch in span.text.replace("\\x", " ").replace("0x", " ") if ch in _HEXDIGITS)
        decoded = _printable(_unhex(digits))
        if decoded is not None:
            found.append(Decoded("hex", decoded))
    for span in _BINARY.finditer(text):
        bits = "".join(ch for ch in span.text if ch in "01")
        decoded = _printable(bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8)))
        if decoded is not None:
            found.append(Decoded("binary", decoded))
    if sum(1 for _ in itertools.islice(_URL_ESCAPE.finditer(text), 3)) >= 3:
        unquoted = urllib.parse.unquote_plus(text)
        if unquoted != text:
            found.append(Decoded("url", unquoted))
    if _HTML_ESCAPE.search(text) is not None:
        unescaped = html.unescape(text)
        if unescaped != text:
            found.append(Decoded("html", unescaped))
    if depth == 0:
        found.append(Decoded("rot13", codecs.encode(text, "rot13")))
        found.append(Decoded("reversed", text[::-1]))
    for piece in found:
        if len(pieces) >= MAX_PIECES:
            return
        pieces.append(piece)
        if piece.kind not in WHOLE_READINGS:
            _decode_into(piece.text, pieces, depth + 1)


_HEXDIGITS = frozenset("0123456789abcdefABCDEF")
# Readings of the whole text rather than decoded pieces: checked for unmistakable phrases only.
WHOLE_READINGS = frozenset({"rot13", "reversed"})


def _b32(run: str) -> str | None:
    core = run.rstrip("=")
    try:
        return _printable(base64.b32decode(core + "=" * (-len(core) % 8)))
    except (binascii.Error, ValueError):
        return None


def _unescape_unicode(run: str) -> str | None:
    out: list[str] = []
    for part in run.replace("{", "").replace("}", "").split("\\u")[1:]:
        digits = "".join(ch for ch in part if ch in _HEXDIGITS)
        try:
            out.append(chr(int(digits, 16)) + (" " if part.endswith((" ", ",")) else ""))
        except (ValueError, OverflowError):
            return None
    return _printable("".join(out).encode("utf-8", "replace"))


def _b64(run: str) -> str | None:
    core = run.rstrip("=")
    if len(core) % 4 == 1:
        core = core[:-1]
    padded = core + "=" * (-len(core) % 4)
    for decoder in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            raw = decoder(padded)
        except (binascii.Error, ValueError):
            continue
        decoded = _printable(raw)
        if decoded is not None:
            return decoded
    return None


def _unhex(digits: str) -> bytes:
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return bytes.fromhex(digits)
    except ValueError:
        return b""


def _printable(raw: bytes) -> str | None:
    """Decoded bytes count only when they read as text: valid UTF-8, mostly printable, with letters."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    printable = sum(1 for ch in text if ch.isprintable() or ch in "\n\t")
    letters = sum(1 for ch in text if ch.isalpha())
    if printable < 0.9 * len(text) or letters < MIN_DECODED_LETTERS:
        return None
    return text
