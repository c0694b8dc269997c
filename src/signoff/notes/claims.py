"""Checkable claims in a sentence: hashes, numbers, percentages, spelled-out quantities, dates.

The extraction is mechanical and shared by the verifier (which checks claims against cited facts)
and the grader (which checks them against every fact of a snapshot). Positions are character
offsets into the original text; spans already claimed are masked so a token is counted once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

CITATION_TAG = re.compile(r"\[F[0-9]+\]")
HEX = re.compile(r"(?<![0-9A-Za-z_])[0-9a-fA-F]{7,40}(?![0-9A-Za-z_])")
HEX_LETTER = re.compile(r"[a-fA-F]")
PERCENT = re.compile(r"(\d+(?:,\d{3})*(?:\.\d+)?)\s*(?:%|per ?cent\b)", re.IGNORECASE)
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")

_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
          "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
# Fixed phrases: value, or (low, high) for vague plurals, which must match a cited value in range.
_PHRASES: dict[str, Decimal | tuple[int, int]] = {
    "half a dozen": Decimal(6), "a dozen": Decimal(12), "dozens of": (24, 143), "dozen": Decimal(12),
    "hundreds of": (200, 1999), "thousands of": (2000, 19999), "a couple of": Decimal(2),
    "a pair of": Decimal(2), "twice": Decimal(2), "thrice": Decimal(3), "doubled": Decimal(2),
    "double": Decimal(2), "tripled": Decimal(3), "triple": Decimal(3), "quadrupled": Decimal(4),
    "halved": Decimal("0.5"), "half": Decimal("0.5"), "a hundred": Decimal(100), "one hundred": Decimal(100),
    "a thousand": Decimal(1000), "one thousand": Decimal(1000),
}
_CARDINAL = (r"(?:" + "|".join(_TENS) + r")(?:[- ](?:" + "|".join(k for k in _UNITS if _UNITS[k] and
             _UNITS[k] < 10) + r"))?|" + "|".join(sorted(_UNITS, key=len, reverse=True)))
_WORDS = re.compile(
    r"(?<![A-Za-z-])(" + "|".join(re.escape(p) for p in sorted(_PHRASES, key=len, reverse=True)) + "|"
    + _CARDINAL + r")(?![A-Za-z])", re.IGNORECASE)
# "one" in these idioms is not a quantity.
_IDIOM = re.compile(r"\b(?:no|any|some|every)\s*one\b|\bone another\b|\bone-(?:off|time|line|liner)\b",
                    re.IGNORECASE)

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


@dataclass(frozen=True)
class Claim:
    kind: str  # hash | number | percent | word
    token: str
    position: int
    value: Decimal | None = None
    places: int = 0
    low: int | None = None
    high: int | None = None


def to_decimal(token: str) -> Decimal | None:
    try:
        return Decimal(token.replace(",", ""))
    except InvalidOperation:
        return None


def _places(token: str) -> int:
    return len(token.split(".", 1)[1]) if "." in token else 0


def date_forms(iso: str) -> list[str]:
    """The ways a commit date may be written in a sentence, longest first."""
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return [iso]
    month = _MONTHS[when.month - 1]
    forms = [iso, when.strftime("%Y-%m-%d"), f"{month} {when.day}, {when.year}", f"{when.day} {month} {when.year}",
             f"{month[:3]} {when.day}, {when.year}", f"{when.day} {month[:3]} {when.year}", f"{month} {when.year}",
             f"{month} {when.day}"]
    return sorted(set(forms), key=len, reverse=True)


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def mask_dates(text: str, dates: list[str]) -> str:
    forms = sorted({f for d in dates for f in date_forms(d)}, key=len, reverse=True)
    for form in forms:
        pattern = re.compile(r"(?<![0-9A-Za-z])" + re.escape(form) + r"(?![0-9])", re.IGNORECASE)
        for m in list(pattern.finditer(text)):
            text = _mask(text, m.start(), m.end())
    return text


def citation_tags(text: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in CITATION_TAG.finditer(text)]


def extract(text: str, dates: list[str] | None = None) -> list[Claim]:
    """Every checkable claim in `text`, in order of position. Citation tags and the given dates are
    not claims."""
    work = text
    for _tag, pos in citation_tags(work):
        end = work.index("]", pos) + 1
        work = _mask(work, pos, end)
    work = mask_dates(work, dates or [])
    claims: list[Claim] = []
    for m in HEX.finditer(work):
        if HEX_LETTER.search(m.group(0)):
            claims.append(Claim("hash", m.group(0), m.start()))
            work = _mask(work, m.start(), m.end())
    for m in PERCENT.finditer(work):
        num = m.group(1)
        claims.append(Claim("percent", m.group(0), m.start(), to_decimal(num), _places(num)))
        work = _mask(work, m.start(), m.end())
    for m in NUMBER.finditer(work):
        claims.append(Claim("number", m.group(0), m.start(), to_decimal(m.group(0)), _places(m.group(0))))
    for m in _IDIOM.finditer(work):
        work = _mask(work, m.start(), m.end())
    for m in _WORDS.finditer(work):
        phrase = m.group(1)
        key = re.sub(r"\s+", " ", phrase.lower())
        found = _PHRASES.get(key)
        if isinstance(found, tuple):
            claims.append(Claim("word", phrase, m.start(), None, 0, found[0], found[1]))
        elif found is not None:
            claims.append(Claim("word", phrase, m.start(), found, 1))
        else:
            claims.append(Claim("word", phrase, m.start(), _cardinal(key), 1))
    return sorted(claims, key=lambda c: c.position)


def _cardinal(key: str) -> Decimal:
    parts = re.split(r"[- ]", key)
    return Decimal(sum(_TENS.get(p, _UNITS.get(p, 0)) for p in parts))


_DOTTED_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){2,}\S*")


def numbers_in(text: str) -> set[Decimal]:
    """Numbers a cited subject or path supports: digit tokens and spelled-out cardinals. A dotted
    version (`0.28.2`) is one version, not the numbers 0.28 and 2."""
    out: set[Decimal] = set()
    for c in extract(_DOTTED_VERSION.sub(" ", text)):
        if c.value is not None and c.kind in ("number", "percent", "word"):
            out.add(c.value)
    return out
