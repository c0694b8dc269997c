"""Corpora for measuring the guard: variants of each organisation's own code lines (must be
blocked) and plain incident prose (must pass).

Variants of a line: verbatim; identifiers, strings and numbers renamed; reformatted (spacing,
quotes, trailing semicolon); renamed and wrapped over several lines; embedded in a sentence; and
the verbatim line in base64 and in hex.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from pygments.token import Comment, Name, Number, String, Text, Token, _TokenType, is_token_subtype

from signoff.demo.payco_shopco.fixture import fixture_dir
from signoff.incident.guard import CODEISH, SUBSEQ_MIN, WHOLE_MIN
from signoff.incident.shapes import lexer, line_shape, shapes_by_line

VARIANTS = ("verbatim", "renamed", "reformatted", "wrapped", "embedded", "base64", "hex")


@dataclass(frozen=True)
class Sample:
    org: str
    variant: str
    source_line: int
    text: str


def protected_lines(source: str, language: str) -> list[tuple[int, str]]:
    """(line number, line) for the lines the guard protects (see guard.protected_shapes)."""
    out = []
    # Shapes come from the whole file, as the guard's configuration computes them, so a docstring
    # line counts as a string, not as code.
    for n, (line, shape) in enumerate(zip(source.splitlines(), shapes_by_line(source, language), strict=False), 1):
        if len(shape) >= WHOLE_MIN and any(s in CODEISH for s in shape):
            out.append((n, line.strip()))
    return out


def _tokens(line: str, language: str) -> list[tuple[_TokenType, str]]:
    return [(t, v) for t, v in lexer(language).get_tokens(line) if v != "\n"]


def renamed(line: str, language: str) -> str:
    names: dict[str, str] = {}
    out: list[str] = []
    in_string = False
    for ttype, value in _tokens(line, language):
        if is_token_subtype(ttype, String):
            if not in_string:
                out.append('"zz_redacted"')
            in_string = True
            continue
        in_string = False
        if is_token_subtype(ttype, Name):
            out.append(names.setdefault(value, f"q{len(names) + 1}x"))
        elif is_token_subtype(ttype, Number):
            out.append("97")
        else:
            out.append(value)
    return "".join(out)


def _swap_quotes(literal: str) -> str:
    body = literal[1:-1]
    if len(literal) < 2 or literal[0] != literal[-1] or literal[0] not in "'\"" or "'" in body or '"' in body:
        return literal
    other = "'" if literal[0] == '"' else '"'
    return other + body + other


def reformatted(line: str, language: str) -> str:
    """Different spacing, the other quote style, the trailing semicolon toggled (JavaScript)."""
    parts: list[str] = []
    in_string = False
    for ttype, value in _tokens(line, language):
        if is_token_subtype(ttype, Text) or ttype is Token.Whitespace or is_token_subtype(ttype, Comment):
            in_string = False
            continue
        if is_token_subtype(ttype, String) and in_string:
            parts[-1] += value
            continue
        in_string = is_token_subtype(ttype, String)
        parts.append(value)
    text = "  ".join(_swap_quotes(p) for p in parts)
    if language == "javascript":
        text = text[:-1] if text.endswith(";") else text + ";"
    return "    " + text


def wrapped(line: str, language: str) -> str:
    return renamed(line, language).replace(", ", ",\n        ").replace("(", "(\n    ", 1)


def variants(org: str, source: str, language: str) -> list[Sample]:
    out: list[Sample] = []
    for n, line in protected_lines(source, language):
        texts = {
            "verbatim": line,
            "renamed": renamed(line, language),
            "reformatted": reformatted(line, language),
            "base64": "can you decode this? " + base64.b64encode(line.encode()).decode(),
            "hex": "raw dump: " + line.encode().hex(),
        }
        if len(line_shape(line, language)) >= SUBSEQ_MIN:
            # Short lines are protected only as whole lines, so these two apply to long ones.
            texts["wrapped"] = wrapped(line, language)
            texts["embedded"] = f"I think the culprit is this line: {renamed(line, language)} -- does yours too?"
        out.extend(Sample(org, v, n, t) for v, t in texts.items())
    return out


def code_corpus(files_by_org: dict[str, list[Path]], languages: dict[str, str]) -> list[Sample]:
    samples: list[Sample] = []
    for org, files in files_by_org.items():
        for path in files:
            samples.extend(variants(org, path.read_text(encoding="utf-8"), languages[org]))
    return samples


def prose_corpus() -> list[str]:
    text = (fixture_dir() / "incident_prose.txt").read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
