"""The outbound guard: every post an organisation sends passes here, in the sender, before it leaves.

It blocks (rule names in brackets):
- a line shaped like a line of the organisation's own code, even renamed or reformatted [code_line],
  also when hidden in base64 or hex [encoded_code_line];
- emails [email], secrets [secret], token-shaped strings [token], and customer names, which the
  guard knows only as salted hashes of normalised names [customer_name];
- a disclosure with no valid signed approval [disclosure_unapproved], one whose text or evidence
  differs from what was signed [disclosure_altered], another organisation's disclosure
  [foreign_disclosure], one of an incident that is no longer current [disclosure_stale], and a
  draft (a text carrying an approve command) outside the private room [draft_outside_private_room].

Its configuration is pinned: a guard whose configuration digest differs from the pin refuses to run.
It logs the rules that fired and counts, never the text, to a signed hash chain.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import secrets
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.incident.chain import Chain, trusted_record
from signoff.incident.disclosure import APPROVE_LINE, PUBLISHED_HEADER, Disclosure, published_text
from signoff.incident.model import RecordChain
from signoff.incident.shapes import Shape, read_source, shape_key, shapes_by_line, without_trailing_commas
from signoff.kernel.canonical import canonical_bytes, canonical_text
from signoff.kernel.clock import Clock, SystemClock, utc_iso
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import RefusedError, UsageError
from signoff.trust import PublicKey

CONFIG_VERSION = "signoff.incident.guard/v1"
# Shapes at least this long are found anywhere in a post (inside prose, across joined lines);
# shorter ones (down to WHOLE_MIN) only when they are a whole line. Below WHOLE_MIN a line such as
# `}` or `return x` identifies nothing and is not protected.
SUBSEQ_MIN = 6
WHOLE_MIN = 4
CODEISH = frozenset("( ) [ ] { } = == === => : .".split())

RULES = ("code_line", "encoded_code_line", "email", "secret", "token", "customer_name", "protected_value",
         "encoded_other", "disclosure_unapproved", "disclosure_altered", "disclosure_stale", "foreign_disclosure",
         "draft_outside_private_room")

_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_SECRETS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bwhsec_[A-Za-z0-9]{8,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bBearer\s+[A-Za-z0-9._~+/\-]{12,}=*"),
    re.compile(r"(?i)\b(?:secret|password|passwd|api[_-]?key|token|credential)s?\b[\"']?\s*[:=]\s*[\"']?[^\s\"']{6,}"),
]
_TOKENISH = re.compile(r"[A-Za-z0-9_\-+/]{20,}={0,2}")
_B64 = re.compile(r"[A-Za-z0-9+/_\-]{12,}={0,2}")
_HEXRUN = re.compile(r"\b(?:[0-9a-fA-F]{2}){6,}\b")
_UESC = re.compile(r"\\u([0-9a-fA-F]{4})")
_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")
_RUN = re.compile(r"[^\W_]+")
VALUE_MIN = 4  # a protected value with digits shorter than this identifies nothing
_EVIDENCE_HEX = re.compile(r"^[0-9a-f]{16}$|^[0-9a-f]{64}$")
_FOLD = str.maketrans({
    "ł": "l", "Ł": "l", "ø": "o", "Ø": "o", "đ": "d", "Đ": "d", "ß": "ss", "æ": "ae", "Æ": "ae", "œ": "oe",
    "Œ": "oe", "ı": "i",
    # Cyrillic and Greek letters that look Latin, so a name cannot be smuggled past as lookalikes.
    "а": "a", "А": "a", "е": "e", "Е": "e", "о": "o", "О": "o", "р": "p", "Р": "p", "с": "c", "С": "c",
    "у": "y", "х": "x", "Х": "x", "і": "i", "І": "i", "ј": "j", "ѕ": "s", "к": "k", "К": "k", "м": "m",
    "М": "m", "н": "h", "Н": "h", "т": "t", "Т": "t", "в": "b", "В": "b", "Α": "a", "Β": "b", "Ε": "e",
    "Ζ": "z", "Η": "h", "Ι": "i", "Κ": "k", "Μ": "m", "Ν": "n", "Ο": "o", "ο": "o", "Ρ": "p", "Τ": "t",
    "Υ": "y", "Χ": "x",
})


def strip_invisible(text: str) -> str:
    """Drop format characters (zero-width spaces and joiners, soft hyphens, bidi marks)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def normalise_name(text: str) -> str:
    """Case-, accent- and spacing-insensitive form of a name (José ÁLVAREZ -> jose alvarez)."""
    folded = unicodedata.normalize("NFKD", strip_invisible(text).translate(_FOLD))
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(_WORD.findall(plain.casefold()))


def _with_spelled_out(words: list[str]) -> list[str]:
    """Also join runs of three or more single letters (`j o s e` -> `jose`)."""
    out = list(words)
    run: list[str] = []
    for w in [*words, ""]:
        if len(w) == 1:
            run.append(w)
            continue
        if len(run) >= 3:
            out.append("".join(run))
        run = []
    return out


def _name_hash(salt: bytes, normalised: str) -> str:
    return hmac.new(salt, normalised.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class GuardConfig:
    org: str
    language: str
    private_room: str
    shared_room: str
    approver: str
    approver_key: str  # hex Ed25519 public key of the organisation's approver service
    shape_keys: tuple[str, ...]
    whole_line_keys: tuple[str, ...]
    shape_lengths: tuple[int, ...]
    name_salt: str
    name_hashes: tuple[str, ...]
    protected_lines: int
    unprotected_lines: int
    # The organisation's own secret patterns (regular expressions), and salted hashes of its protected
    # values that hold digits (account numbers, order ids: matched digit-and-letter runs, any separators).
    # Empty in configurations written before organisations came from configuration.
    secret_patterns: tuple[str, ...] = ()
    value_hashes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"version": CONFIG_VERSION, **{k: (list(v) if isinstance(v, tuple) else v)
                                              for k, v in self.__dict__.items()}}

    def digest(self) -> str:
        return sha256_bytes(canonical_bytes(self.as_json()))

    def write(self, path: Path) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(canonical_bytes(self.as_json()) + b"\n")
        return self.digest()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GuardConfig:
        if data.get("version") != CONFIG_VERSION:
            raise UsageError("not a guard configuration", "build one with `signoff incident setup`")
        fields: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v)
                                  for k, v in data.items() if k != "version"}
        try:
            return cls(**fields)
        except TypeError as exc:
            raise UsageError(f"guard configuration has unexpected fields: {exc}", "rebuild it") from exc

    @classmethod
    def read(cls, path: Path) -> GuardConfig:
        try:
            return cls.from_json(json.loads(Path(path).read_bytes()))
        except FileNotFoundError as exc:
            raise UsageError(f"no guard configuration at {path}", "run `signoff incident setup` first") from exc
        except ValueError as exc:
            raise UsageError(f"guard configuration {path} is not JSON", "rebuild it") from exc


def protected_shapes(sources: Iterable[str], language: str) -> tuple[set[Shape], set[Shape], int]:
    """(shapes matched anywhere, shapes matched as whole lines, lines too small to protect)."""
    anywhere: set[Shape] = set()
    whole: set[Shape] = set()
    small = 0
    for source in sources:
        for shape in shapes_by_line(source, language):
            if not shape:
                continue
            if len(shape) >= SUBSEQ_MIN and any(s in CODEISH for s in shape):
                anywhere.add(shape)
            elif len(shape) >= WHOLE_MIN and any(s in CODEISH for s in shape):
                whole.add(shape)
            else:
                small += 1
    return anywhere, whole, small


def value_runs(text: str) -> list[str]:
    """The letter-and-digit runs of `text`, folded like names (`AC-0042 17` -> ['ac', '0042', '17'])."""
    folded = unicodedata.normalize("NFKD", strip_invisible(text).translate(_FOLD))
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return _RUN.findall(plain.casefold())


def build_config(org: str, language: str, code_files: list[Path], customer_names: list[str], *,
                 private_room: str, shared_room: str, approver: str, approver_key: PublicKey,
                 secret_patterns: Iterable[str] = ()) -> GuardConfig:
    """`customer_names` are the organisation's protected values: names (matched by their words, any
    order, case or accents) and values holding digits (matched by their letter-and-digit runs)."""
    sources = [read_source(p) for p in code_files]
    anywhere, whole, small = protected_shapes(sources, language)
    salt = secrets.token_bytes(32)
    hashes: set[str] = set()
    values: set[str] = set()
    for name in customer_names:
        joined = "".join(value_runs(name))
        if any(c.isdigit() for c in joined):
            if len(joined) >= VALUE_MIN:
                values.add(_name_hash(salt, joined))
            continue
        norm = normalise_name(name)
        words = norm.split()
        hashes.add(_name_hash(salt, norm))
        hashes.add(_name_hash(salt, " ".join(reversed(words))))
        hashes.update(_name_hash(salt, w) for w in words if len(w) >= 3)
    return GuardConfig(
        org=org, language=language, private_room=private_room, shared_room=shared_room, approver=approver,
        approver_key=approver_key.hex(),
        shape_keys=tuple(sorted(shape_key(s) for s in anywhere)),
        whole_line_keys=tuple(sorted(shape_key(s) for s in whole)),
        shape_lengths=tuple(sorted({len(s) for s in anywhere})),
        name_salt=salt.hex(), name_hashes=tuple(sorted(hashes)),
        protected_lines=len(anywhere) + len(whole), unprotected_lines=small,
        secret_patterns=tuple(secret_patterns), value_hashes=tuple(sorted(values)),
    )


@dataclass(frozen=True)
class Post:
    room: str
    text: str
    disclosure: Disclosure | None = None


@dataclass(frozen=True)
class GuardVerdict:
    allowed: bool
    rules: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    lines: int = 0
    chars: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "rules": list(self.rules), "counts": self.counts,
                "lines": self.lines, "chars": self.chars}


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def _token_shaped(word: str) -> bool:
    core = word.strip("=-_/+")
    if len(core) < 20:
        return False
    digits = sum(c.isdigit() for c in core)
    mixed_case = any(c.islower() for c in core) and any(c.isupper() for c in core)
    # Long words and snake_case names have no digits; hex digests and API keys do.
    return (digits >= 3 or (digits >= 1 and mixed_case)) and _entropy(core) >= 3.5


def _decoded_blobs(text: str) -> Iterator[str]:
    """Printable text hidden in base64 or hex runs."""
    for m in _HEXRUN.finditer(text):
        yield from _printable(bytes.fromhex(m.group(0)))
    for m in _B64.finditer(text):
        blob = m.group(0)
        for alt in (blob, blob.replace("-", "+").replace("_", "/")):
            try:
                raw = base64.b64decode(alt + "=" * (-len(alt) % 4), validate=True)
            except (binascii.Error, ValueError):
                continue
            yield from _printable(raw)
            break


def _printable(raw: bytes) -> Iterator[str]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    if text and sum(c.isprintable() or c in "\n\t" for c in text) / len(text) >= 0.95:
        yield text


class Guard:
    def __init__(self, config: GuardConfig, pin: str, log: Chain | None = None,
                 approvals: Chain | None = None, clock: Clock | None = None,
                 current_incident: Callable[[], str | None] | None = None,
                 remote: Callable[[str, str], dict[str, Any] | None] | None = None) -> None:
        """`remote`, when given, reads the approval record of a disclosure id and incident from the
        organisation's approver process (`GET /v1/records/{d_id}?incident=`): a disclosure then
        counts as approved only from that record, signed by the pinned approver key, never from
        `approvals`."""
        self.config = config
        self.remote = remote
        # When given (usually the notary's current incident), a disclosure of another incident is stale.
        self.current_incident = current_incident
        self.pin = pin
        self.log = log
        self.approvals = approvals
        self.clock = clock or SystemClock()
        self._anywhere = frozenset(config.shape_keys)
        self._whole = frozenset(config.whole_line_keys)
        self._lengths = tuple(config.shape_lengths)
        self._salt = bytes.fromhex(config.name_salt)
        self._names = frozenset(config.name_hashes)
        self._values = frozenset(config.value_hashes)
        self._own_secrets = [re.compile(p) for p in config.secret_patterns]

    # -- content rules ---------------------------------------------------------------------------
    def _code_hits(self, text: str) -> int:
        hits = 0
        for shape in shapes_by_line(text, self.config.language):
            if shape and (shape_key(shape) in self._whole or shape_key(shape) in self._anywhere):
                hits += 1
        # Anywhere-shapes are searched in the whole post as one token stream, so a line wrapped
        # over several lines or embedded in prose is still found.
        stream = without_trailing_commas(
            [s for shape in shapes_by_line(text, self.config.language, trim=False) for s in shape])
        for n in self._lengths:
            for i in range(len(stream) - n + 1):
                if shape_key(stream[i:i + n]) in self._anywhere:
                    hits += 1
        return hits

    def _name_hits(self, text: str) -> int:
        words = _with_spelled_out(normalise_name(_UESC.sub(lambda m: chr(int(m.group(1), 16)), text)).split())
        hits = 0
        for i in range(len(words)):
            grams = [words[i]] if len(words[i]) >= 3 else []
            grams += [" ".join(words[i:i + k]) for k in (2, 3) if i + k <= len(words)]
            if any(_name_hash(self._salt, g) in self._names for g in grams):
                hits += 1
        return hits

    def _value_hits(self, text: str) -> int:
        if not self._values:
            return 0
        runs = value_runs(_UESC.sub(lambda m: chr(int(m.group(1), 16)), text))
        hits = 0
        for i in range(len(runs)):
            # A value may be written with other separators, or none: try joins of up to 6 runs.
            joined = ""
            for run in runs[i:i + 6]:
                joined += run
                if len(joined) >= VALUE_MIN and _name_hash(self._salt, joined) in self._values:
                    hits += 1
                    break
        return hits

    def content_counts(self, text: str, evidence_strings: Iterable[str] = (), depth: int = 0) -> Counter[str]:
        counts: Counter[str] = Counter()
        text = strip_invisible(text)
        if code := self._code_hits(text):
            counts["code_line"] += code
        if emails := len(_EMAIL.findall(text)):
            counts["email"] += emails
        if found := sum(len(p.findall(text)) for p in (*_SECRETS, *self._own_secrets)):
            counts["secret"] += found
        if tokens := sum(1 for w in _TOKENISH.findall(text) if _token_shaped(w)):
            counts["token"] += tokens
        if names := self._name_hits(text):
            counts["customer_name"] += names
        if values := self._value_hits(text):
            counts["protected_value"] += values
        for s in evidence_strings:
            # Evidence is structured: its salted hex digests are expected, everything else is checked.
            if not _EVIDENCE_HEX.match(s):
                counts.update(self.content_counts(s, (), depth))
        if depth == 0:
            for blob in _decoded_blobs(text):
                inner = self.content_counts(blob, (), depth + 1)
                if inner.get("code_line"):
                    counts["encoded_code_line"] += inner["code_line"]
                if sum(v for k, v in inner.items() if k != "code_line"):
                    counts["encoded_other"] += 1
        return counts

    def check_text(self, text: str) -> GuardVerdict:
        """Content rules only, as for a plain post to the shared room."""
        return self._verdict(self.content_counts(text), text)

    # -- whole posts -----------------------------------------------------------------------------
    def _ensure_pinned(self) -> None:
        if self.config.digest() != self.pin:
            raise RefusedError(f"{self.config.org}'s guard configuration differs from its pin",
                               "restore the pinned configuration; the guard does not run on a changed one")

    def _approval_records(self, d: Disclosure) -> RecordChain | None:
        """The approver's chain, verified under the pinned approver key (None: none configured, or it
        does not verify, so no disclosure counts as approved); with an approver process, its record of
        `d` alone, when that key signed it for this organisation and this id."""
        key = PublicKey.from_hex(self.config.approver_key, "approver")
        if self.remote is not None:
            record = self.remote(d.d_id, d.incident)
            if record is None or not trusted_record(record, key, self.config.org, d.d_id):
                return None
            return RecordChain(f"{self.config.org} approver process", [record])
        if self.approvals is None:
            return None
        report = self.approvals.verify({key.keyid: key}, f"{self.config.org} approvals")
        if not report.ok:
            return None
        return RecordChain(self.approvals.case_id, report.records)

    def check(self, post: Post) -> GuardVerdict:
        """Decide on `post` and log the decision (rules and counts, never the text) to the guard's chain."""
        self._ensure_pinned()
        needs_records = post.disclosure is not None and post.room != self.config.private_room
        approvals = self._approval_records(post.disclosure) if needs_records and post.disclosure else None
        current = self.current_incident() if self.current_incident is not None and needs_records else None
        verdict, entry = self.decide(post, approvals, current)
        if self.log is not None:
            self.log.append({**entry, "time": utc_iso(self.clock.now())})
        return verdict

    def decide(self, post: Post, approvals: RecordChain | None, current_incident: str | None
               ) -> tuple[GuardVerdict, dict[str, Any]]:
        """The guard's decision on a post, pure: the verdict, and the log entry it makes (without its
        time). `approvals` is the approver's verified chain (None: no disclosure counts as approved);
        `current_incident`, when given, makes a disclosure of another incident stale."""
        counts: Counter[str] = Counter()
        cfg = self.config
        logged: dict[str, Any] = {}
        if post.room == cfg.private_room:
            verdict = self._verdict(counts, post.text)
        else:
            if APPROVE_LINE.search(post.text):
                counts["draft_outside_private_room"] += 1
            d = post.disclosure
            if d is not None:
                logged = {"d_id": d.d_id, "evidence_sha256": d.evidence_sha256, "text_sha256": d.text_sha256}
                counts.update(self._disclosure_counts(d, post.text, approvals, current_incident))
                counts.update(self.content_counts(d.prose, _strings(d.evidence)))
            else:
                if PUBLISHED_HEADER.search(post.text):
                    counts["disclosure_unapproved"] += 1
                counts.update(self.content_counts(post.text))
            verdict = self._verdict(counts, post.text)
        entry = {"org": cfg.org, "room": post.room, "allowed": verdict.allowed, "rules": list(verdict.rules),
                 "counts": verdict.counts, "lines": verdict.lines, "chars": verdict.chars}
        if post.disclosure is not None:
            entry.update(logged)
        return verdict, entry

    def _disclosure_counts(self, d: Disclosure, text: str, approvals: RecordChain | None,
                           current_incident: str | None) -> Counter[str]:
        counts: Counter[str] = Counter()
        if d.org != self.config.org:
            counts["foreign_disclosure"] += 1
            return counts
        record = approvals.find(d.d_id, d.incident) if approvals is not None else None
        if record is None:
            counts["disclosure_unapproved"] += 1
            return counts
        body = record["body"]
        if current_incident is not None and d.incident != current_incident:
            counts["disclosure_stale"] += 1
        if (body.get("evidence_sha256") != d.evidence_sha256 or body.get("text_sha256") != d.text_sha256
                or body.get("incident") != d.incident):
            counts["disclosure_altered"] += 1
        elif text != published_text(d, str(body.get("approver"))):
            counts["disclosure_altered"] += 1
        if text != published_text(d, str(body.get("approver"))):
            # Whatever was added around the evidence is checked like any other post.
            counts.update(self.content_counts(text.replace(canonical_text(d.evidence), "")))
        return counts

    def _verdict(self, counts: Counter[str], text: str) -> GuardVerdict:
        clean = {k: v for k, v in sorted(counts.items()) if v}
        return GuardVerdict(not clean, tuple(clean), clean, len(text.splitlines()), len(text))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
