"""Redaction of personal data and secrets in a clean report.

Each kind has a finder that returns candidate spans; candidates with a checksum (cards: Luhn,
IBANs: ISO 7064 mod 97, US SSNs and UK NINOs: issuing rules, Spanish DNIs: check letter, IPs:
octet ranges) are validated, so a number that only looks like one is left alone. Phone numbers come
from `phonenumbers` (Google's libphonenumber metadata), known key formats from `detect-secrets`'
plugin patterns compiled with RE2. Overlaps are resolved by kind priority, then length.

Every replacement is `[REDACTED:<kind>]`; `Redacted.counts` says how many of each kind went."""

from __future__ import annotations

import functools
import ipaddress
import math
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import phonenumbers

from signoff.airlock._re import Pattern, compile_re, try_compile

KINDS: tuple[str, ...] = (
    "secret",
    "url",
    "email",
    "iban",
    "card",
    "gov_id",
    "phone",
    "ip",
    "street_address",
    "mention",
    "token",
)
_PRIORITY = {kind: index for index, kind in enumerate(KINDS)}
DEFAULT_REGION = "US"  # how phone numbers without a +country prefix are read


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Redacted:
    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact_text(text: str, *, region: str = DEFAULT_REGION) -> Redacted:
    """Redact `text` as given (the caller normalised it); see `signoff.airlock.redact`."""
    chosen = _resolve(find(text, region=region))
    if not chosen:
        return Redacted(text, {})
    out: list[str] = []
    cursor = 0
    counts: Counter[str] = Counter()
    for finding in chosen:
        out.append(text[cursor : finding.start])
        out.append(f"[REDACTED:{finding.kind}]")
        cursor = finding.end
        counts[finding.kind] += 1
    out.append(text[cursor:])
    return Redacted("".join(out), dict(sorted(counts.items())))


def find(text: str, *, region: str = DEFAULT_REGION) -> list[Finding]:
    """Every candidate finding, overlapping ones included (the benchmark scores these)."""
    found: list[Finding] = []
    for finder in _FINDERS:
        found.extend(finder(text))
    found.extend(_phones(text, region))
    return found


def _resolve(found: list[Finding]) -> list[Finding]:
    ranked = sorted(found, key=lambda f: (_PRIORITY[f.kind], -(f.end - f.start), f.start))
    # Taken spans never overlap, so in (start, end) order their ends never decrease: a finding
    # overlaps one iff the last taken span starting before its end reaches past its start. A
    # bisection instead of a pass over everything taken keeps a report of thousands of addresses linear.
    spans: list[tuple[int, int]] = []
    taken: list[Finding] = []
    for finding in ranked:
        before = bisect_left(spans, (finding.end,)) - 1
        if before < 0 or spans[before][1] <= finding.start:
            insort(spans, (finding.start, finding.end))
            taken.append(finding)
    return sorted(taken, key=lambda f: f.start)


# --- finders -----------------------------------------------------------------------------------

_URL = compile_re(r"(?i)\b(?:https?|ftp|wss?|file)://[^\s<>\"'`]+|\bwww\.[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s<>\"'`]*")
_EMAIL = compile_re(r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})*\.[A-Za-z]{2,24}")
_MENTION = compile_re(r"(?:^|[^A-Za-z0-9_.@/])(@[A-Za-z0-9_](?:[A-Za-z0-9_\-]{0,38}))")
_CARD = compile_re(r"\b[0-9](?:[ \-]?[0-9]){12,18}\b")
_IBAN = compile_re(r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b")
_SSN = compile_re(r"\b([0-9]{3})-([0-9]{2})-([0-9]{4})\b")
_NINO = compile_re(r"\b([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]\b")
_DNI = compile_re(r"\b([0-9]{8})-?([A-Z])\b")
_IPV4 = compile_re(r"\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b")
_IPV6 = compile_re(r"(?i)(?:^|[^0-9a-f:])((?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4})")
_STREET = compile_re(
    r"\b[0-9]{1,6}[A-Za-z]?(?: [A-Z][a-z]+){1,4} (?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|"
    r"Dr|Court|Ct|Way|Place|Pl|Terrace|Circle|Parkway|Pkwy|Highway|Hwy|Square|Sq|Close|Crescent)\b\.?"
    r"|\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|weg|gasse|allee|platz|ring) [0-9]{1,4}[a-z]?\b"
    r"|(?i:\b[0-9]{1,4}(?: bis| ter)?,? (?:rue|avenue|boulevard|bd|chemin|allée|allee|place|impasse|quai) "
    r"(?:de la |du |des |de l'|d'|de )?[A-Za-zÀ-ÿ\-]+(?: [A-Za-zÀ-ÿ\-]+){0,2})"
    r"|(?i:\bp\.? ?o\.? box [0-9]{1,8}\b)"
)
_KEYWORD_SECRET = compile_re(
    r"(?i)\b(?:password|passwd|pwd|secret|client[_\-]?secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"auth[_\-]?token|private[_\-]?key)[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{6,})"
    r"|(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{10,}=*)"
)
_TOKEN = compile_re(r"[A-Za-z0-9+/_\-=]{24,}")
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21, "CY": 28, "CZ": 24,
    "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23, "GR": 27, "HR": 21,
    "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "KW": 30, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
    "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "QA": 29, "RO": 24, "SA": 24, "SE": 24,
    "SI": 19, "SK": 24, "SM": 27, "TR": 26, "UA": 29,
}  # fmt: skip


def _urls(text: str) -> Iterator[Finding]:
    for span in _URL.finditer(text):
        end = span.end
        while end > span.start and text[end - 1] in ".,;:!?)]}":
            end -= 1  # sentence punctuation after a link is not part of it
        yield Finding("url", span.start, end)


def _emails(text: str) -> Iterator[Finding]:
    for span in _EMAIL.finditer(text):
        yield Finding("email", span.start, span.end)


def _mentions(text: str) -> Iterator[Finding]:
    for start, end, groups in _MENTION.groups(text):
        handle = groups[0] or ""
        begin = end - len(handle)
        if end < len(text) and text[end] in ".(":
            continue  # "@app.route(" and "@pytest.fixture" are code, not people
        yield Finding("mention", begin, end)
        del start


def _cards(text: str) -> Iterator[Finding]:
    for span in _CARD.finditer(text):
        digits = [int(ch) for ch in span.text if ch.isdigit()]
        if 13 <= len(digits) <= 19 and digits[0] in (2, 3, 4, 5, 6) and luhn_valid(digits):
            yield Finding("card", span.start, span.end)


def luhn_valid(digits: list[int]) -> bool:
    total = 0
    for index, digit in enumerate(reversed(digits)):
        if index % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def _ibans(text: str) -> Iterator[Finding]:
    for span in _IBAN.finditer(text):
        compact = span.text.replace(" ", "")
        expected = _IBAN_LENGTHS.get(compact[:2])
        if expected is None or len(compact) < expected:
            continue
        compact = compact[:expected]
        if iban_valid(compact):
            # the span covers exactly `expected` significant characters
            seen, end = 0, span.start
            while seen < expected:
                if text[end] != " ":
                    seen += 1
                end += 1
            yield Finding("iban", span.start, end)


def iban_valid(compact: str) -> bool:
    if not compact[2:4].isdigit() or not 2 <= int(compact[2:4]) <= 98:
        return False  # ISO 13616 check digits are 02..98; "00" passes mod 97 by chance one time in 97
    rearranged = compact[4:] + compact[:4]
    try:
        number = int("".join(str(int(ch, 36)) for ch in rearranged))
    except ValueError:
        return False
    return number % 97 == 1


def _gov_ids(text: str) -> Iterator[Finding]:
    for start, end, groups in _SSN.groups(text):
        area, group, serial = groups[0] or "", groups[1] or "", groups[2] or ""
        if area in ("000", "666") or area.startswith("9") or group == "00" or serial == "0000":
            continue  # never issued: a near miss, not an SSN
        yield Finding("gov_id", start, end)
    for start, end, groups in _NINO.groups(text):
        if (groups[0] or "") in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"):
            continue
        yield Finding("gov_id", start, end)
    for start, end, groups in _DNI.groups(text):
        number, letter = int(groups[0] or "0"), groups[1] or ""
        if "TRWAGMYFPDXBNJZSQVHLCKE"[number % 23] == letter:
            yield Finding("gov_id", start, end)


def _ips(text: str) -> Iterator[Finding]:
    for span in _IPV4.finditer(text):
        if span.start > 0 and text[span.start - 1] in ".0123456789":
            continue  # part of a longer dotted number (a version string)
        if span.end < len(text) and text[span.end] == "." and span.end + 1 < len(text) and text[span.end + 1].isdigit():
            continue
        try:
            ipaddress.IPv4Address(span.text)
        except ValueError:
            continue
        yield Finding("ip", span.start, span.end)
    for start, end, groups in _IPV6.groups(text):
        candidate = groups[0] or ""
        if candidate.count(":") < 2 or ("::" not in candidate and candidate.count(":") < 7):
            continue  # "12:30:45" is a time, not an address
        try:
            ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        yield Finding("ip", end - len(candidate), end)
        del start


def _streets(text: str) -> Iterator[Finding]:
    for span in _STREET.finditer(text):
        yield Finding("street_address", span.start, span.end)


@functools.cache
def secret_patterns() -> list[Pattern]:
    """detect-secrets' plugin patterns, made RE2-compatible where a lookaround only marked a boundary.
    Compiled on first use, not at import: that cost every process importing the airlock a quarter of
    a second, most of which never redact."""
    from detect_secrets.core.plugins.util import (  # type: ignore[import-untyped]
        get_mapping_from_secret_type_to_class,
    )
    from detect_secrets.plugins.base import RegexBasedDetector  # type: ignore[import-untyped]

    skip = {"Public IP (ipv4)"}  # IPs are their own kind here
    patterns: list[Pattern] = []
    mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
    for name, plugin in mapping.items():
        if name in skip or not issubclass(plugin, RegexBasedDetector):
            continue
        for regex in plugin().denylist:
            source = str(regex.pattern)
            source = source.replace("(?:(?<=\\W)|(?<=^))", "").replace("(?!\\w)", "").replace("{50,1024}", "{50,}")
            compiled = try_compile(source, ignore_case=bool(regex.flags & 2))
            if compiled is not None:
                patterns.append(compiled)
    return patterns


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=")


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """A key pattern may match only a prefix of the token; take the whole token."""
    while start > 0 and text[start - 1] in _TOKEN_CHARS:
        start -= 1
    while end < len(text) and text[end] in _TOKEN_CHARS:
        end += 1
    return start, end


def _secrets(text: str) -> Iterator[Finding]:
    for pattern in secret_patterns():
        for span in pattern.finditer(text):
            core = span.text.strip(" \t\n=:\"'")
            if not core:
                continue
            offset = span.text.find(core)
            start, end = _widen(text, span.start + offset, span.start + offset + len(core))
            yield Finding("secret", start, end)
    for start, end, groups in _KEYWORD_SECRET.groups(text):
        value = groups[0] or groups[1] or ""
        if not value or value.lower() in ("required", "redacted", "invalid", "expired", "<redacted>"):
            continue
        yield Finding("secret", end - len(value), end)
        del start


def _tokens(text: str) -> Iterator[Finding]:
    """Token-shaped strings: long, mixed letters and digits, high entropy. Hex-only strings (commit
    hashes, digests) are left alone: they identify code, they do not unlock anything."""
    for span in _TOKEN.finditer(text):
        token = span.text
        if all(ch in "0123456789abcdefABCDEF" for ch in token):
            continue
        mixed = any(ch.isdigit() for ch in token) and any(ch.isupper() for ch in token)
        if not (mixed and any(ch.islower() for ch in token)):
            continue
        if shannon_entropy(token) >= 4.0:
            yield Finding("token", span.start, span.end)


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    total = len(value)
    return -sum(count / total * math.log2(count / total) for count in counts.values())


def _phones(text: str, region: str) -> Iterator[Finding]:
    matcher = phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID, max_tries=2000)
    for match in matcher:
        yield Finding("phone", match.start, match.end)


_FINDERS: tuple[Callable[[str], Iterator[Finding]], ...] = (
    _secrets,
    _urls,
    _emails,
    _ibans,
    _cards,
    _gov_ids,
    _ips,
    _streets,
    _mentions,
    _tokens,
)
