"""The airlock verdict: quarantine (families fired, raw SHA-256, nothing else) or a redacted dossier.

Detection reads every sentence on its own and the whole text as one line, in the folded views of
`normalise`, then does the same for every decoded piece (base64, base32, hex, binary, `\\u` escapes,
URL, HTML, tag characters) and for two readings of the whole text (rot13 and backwards), which are
checked for unmistakable phrases only. Any hit quarantines the whole submission: the caller must
store only what `Verdict` carries, which never includes the text."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from signoff.airlock import (
    extraction,
    gitlog,
    intent,
    override,
    payloads,
    planted,
    poisoning,
    prerequisite,
    signals,
    structure,
    suffix,
    turns,
    wordsalad,
)
from signoff.airlock import families as fam
from signoff.airlock._re import Span
from signoff.airlock.decode import WHOLE_READINGS, decode_all
from signoff.airlock.dossier import Dossier, canonical_field, fields_from_mapping, split_fields
from signoff.airlock.limits import MAX_BYTES, check_text, decode_input
from signoff.airlock.normalise import Normalised, normalise, scan_views
from signoff.airlock.redact import DEFAULT_REGION, redact_text
from signoff.kernel import metrics

QUARANTINE_NOTICE = (
    "Your report was held and will not be shown to anyone or any automated tool: parts of it read as "
    "instructions to software ({families}). Its text was discarded; we kept only a fingerprint "
    "(SHA-256) so a repeat is recognised. A maintainer may contact you for the facts. To resubmit, "
    "describe what you did, what you expected and what happened, without instructions addressed to "
    "tools, agents or maintainers."
)
CLEAN_NOTICE = "Your report was accepted. Personal data and links were redacted before anyone reads it."


@dataclass(frozen=True, slots=True)
class Hit:
    family: str
    where: str  # "sentence 3", "whole text", "decoded base64", "invisible characters" -- never the text


JOINED = "joined"  # the key of `Verdict.by_field` for all fields read together


@dataclass(frozen=True)
class Verdict:
    quarantined: bool
    families: tuple[str, ...]
    hits: tuple[Hit, ...]
    raw_sha256: str
    dossier: Dossier | None
    message: str
    # scan_fields only: the families that fired on each field alone, and on all of them together
    # (key JOINED). A field that is not one of the dossier's names is keyed "field <n>", so no
    # submitted text ever appears here.
    by_field: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not self.quarantined

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "verdict": "quarantined" if self.quarantined else "clean",
            "raw_sha256": self.raw_sha256,
            "families": list(self.families),
            "hits": [{"family": hit.family, "where": hit.where} for hit in self.hits],
            "message": self.message,
        }
        if self.by_field:
            out["by_field"] = {name: list(found) for name, found in self.by_field.items()}
        if self.dossier is not None:
            out["dossier"] = self.dossier.to_dict()
        return out


def scan(text: str | bytes, *, region: str = DEFAULT_REGION, limit: int = MAX_BYTES) -> Verdict:
    """Scan a free-text submission. Raises UsageError for oversize or binary input."""
    raw, shown = _accept(text, limit)
    hits = detect(shown)
    digest = hashlib.sha256(raw).hexdigest()
    if hits:
        return _quarantine(hits, digest)
    normalised = normalise(shown)
    return _clean(split_fields(normalised.text), normalised, digest, region)


def scan_fields(fields: Mapping[str, str], *, region: str = DEFAULT_REGION, limit: int = MAX_BYTES) -> Verdict:
    """Scan a structured submission (form fields): every field alone, and all of them together.

    Together means twice: as labelled lines ("title: ...") and as one run of text with the values
    side by side, so that an instruction split across fields ("... please disregard the" in the
    title, "rules above and ..." in the steps) is read whole. Any hit holds the whole submission;
    `Verdict.by_field` says which families fired on which field and on the joined text."""
    for name, value in fields.items():
        if not isinstance(name, str) or not isinstance(value, str):
            from signoff.kernel.errors import UsageError

            raise UsageError("report fields must be text", "send every field as a string")
    raw = json.dumps(dict(fields), ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    labelled = "\n".join(f"{name}: {value}" for name, value in fields.items())
    _accept(labelled, limit)
    digest = hashlib.sha256(raw).hexdigest()
    run_on = " ".join(" ".join(value.split()) for value in fields.values())
    hits: dict[str, Hit] = {}
    by_field: dict[str, tuple[str, ...]] = {}
    for number, (name, value) in enumerate(fields.items(), start=1):
        key = name if canonical_field(name) == name else f"field {number}"
        found = detect(value)
        by_field[key] = tuple(hit.family for hit in found)
        for hit in found:
            hits.setdefault(hit.family, Hit(hit.family, f"{key}: {hit.where}"))
    joined = detect(labelled) + detect(run_on)
    by_field[JOINED] = tuple(name for name in fam.FAMILIES if any(hit.family == name for hit in joined))
    for hit in joined:
        hits.setdefault(hit.family, Hit(hit.family, f"{JOINED} fields: {hit.where}"))
    if hits:
        return replace(_quarantine(list(hits.values()), digest), by_field=by_field)
    shown = {name: normalise(value).text for name, value in fields_from_mapping(fields).items()}
    return replace(_clean(shown, normalise(labelled), digest, region), by_field=by_field)


def _accept(text: str | bytes, limit: int) -> tuple[bytes, str]:
    if isinstance(text, bytes | bytearray):
        data = bytes(text)
        return data, decode_input(data, limit)
    if not isinstance(text, str):
        from signoff.kernel.errors import UsageError

        raise UsageError(f"cannot scan a {type(text).__name__}", "pass text (str) or UTF-8 bytes")
    check_text(text, limit)
    return text.encode("utf-8"), text


def _quarantine(hits: list[Hit], digest: str) -> Verdict:
    names = tuple(name for name in fam.FAMILIES if any(hit.family == name for hit in hits))
    hits = [hit for name in names for hit in hits if hit.family == name]
    message = QUARANTINE_NOTICE.format(families=", ".join(name.replace("_", " ") for name in names))
    metrics.count("signoff_airlock_scans_total", result="quarantined")
    for name in names:
        metrics.count("signoff_airlock_quarantines_total", family=name)
    return Verdict(True, names, tuple(hits), digest, None, message)


def _clean(fields: Mapping[str, str], normalised: Normalised, digest: str, region: str) -> Verdict:
    counts: dict[str, int] = {}
    redacted: dict[str, str] = {}
    for name, value in fields.items():
        result = redact_text(value, region=region)
        redacted[name] = result.text
        for kind, count in result.counts.items():
            counts[kind] = counts.get(kind, 0) + count
    dossier = Dossier(
        fields=redacted,
        redactions=dict(sorted(counts.items())),
        raw_sha256=digest,
        hidden_removed=normalised.hidden_total,
    )
    metrics.count("signoff_airlock_scans_total", result="clean")
    return Verdict(False, (), (), digest, dossier, CLEAN_NOTICE)


def detect(text: str) -> list[Hit]:
    """Every family that fires on `text`, each with where it fired first."""
    # a pasted git log's merge subjects are records; a line set apart in brackets is read as its words
    normalised = normalise(structure.unwrap_asides(gitlog.settle_merges(text)))
    hits: dict[str, Hit] = {}
    # Places hidden from a human reader (a link's fragment, an HTML comment ...) are read on their
    # own, first, so a hit there says where it was hidden. Visible set-apart text (code, quoted mail)
    # is read as part of the report; a piece only names where a family the report fired on sits.
    visible: dict[str, str] = {}
    for part in structure.pieces(normalised.text):
        inner = normalise(part.text)
        hidden = part.kind in structure.HIDDEN_KINDS
        found = _scan_views(inner.plain, inner.folded, fam.RULES)
        # visible pieces are read whole with the report below; they only name where, so the
        # pattern rules are enough to place a hit in them
        for family, where in found + _score(inner) if hidden else found:
            if hidden:
                hits.setdefault(family, Hit(family, f"{part.kind} ({where})"))
            else:
                visible.setdefault(family, f"{part.kind} ({where})")
    if normalised.suspicious:
        hits[fam.HIDDEN_UNICODE] = Hit(fam.HIDDEN_UNICODE, "invisible characters: " + ", ".join(normalised.suspicious))
    for family, where in _scan_views(normalised.plain, normalised.folded, fam.RULES):
        hits.setdefault(family, Hit(family, where))
    for family, where in _score(normalised):
        hits.setdefault(family, Hit(family, where))
    # an optimiser's salad beside a request (a tool record's escapes read as what they stand for)
    unescaped, origin = structure.unescaped_values(normalised.text)
    salad = suffix.find(unescaped) or wordsalad.find(unescaped)
    if salad is not None:
        hits.setdefault(fam.ADVERSARIAL_SUFFIX, Hit(fam.ADVERSARIAL_SUFFIX, _salad_where(salad, origin)))
    for family, where in turns.find(normalised.text):  # an order behind a fake turn of the conversation
        hits.setdefault(family, Hit(family, where))
    for piece in decode_all(normalised.text, normalised.smuggled):
        inner = normalise(piece.text)
        whole_reading = piece.kind in WHOLE_READINGS  # rot13, backwards: unmistakable phrases only
        # (backwards, markup reads as markup: "</a>" turns into ">a/<", so only the override phrases)
        kept = fam.ROT13_FAMILIES if piece.kind == "rot13" else {fam.INSTRUCTION_OVERRIDE}
        rules = tuple(r for r in fam.RULES if not whole_reading or r.name in kept)
        found = list(_scan_views(inner.plain, inner.folded, rules))
        found += _score(inner, english_only=whole_reading)
        if inner.suspicious and piece.kind != "tag":
            found.append((fam.HIDDEN_UNICODE, "decoded"))
        for family, where in found:
            hits.setdefault(family, Hit(family, f"decoded {piece.kind} ({where})"))
            if piece.kind != "tag":
                hits.setdefault(fam.ENCODED_PAYLOAD, Hit(fam.ENCODED_PAYLOAD, f"{piece.kind}-encoded {family}"))
    for family, where in visible.items():
        if family in hits and not hits[family].where.startswith(structure.HIDDEN_KINDS):
            hits[family] = Hit(family, where)
    return [hits[name] for name in fam.FAMILIES if name in hits]


def _salad_where(salad: suffix.Salad, origin: list[int]) -> str:
    """Where a salad sits, in the lines of the text as given (a value's escaped lines are one line)."""
    first, last = origin[salad.first_line - 1], origin[salad.last_line - 1]
    if origin.count(first) == 1 and origin.count(last) == 1:  # lines of their own: words counted as given
        return replace(salad, first_line=first, last_line=last).where()
    return f"token salad, line {first} (a value's escaped lines)" if first == last else (
        f"token salad, lines {first}-{last} (a value's escaped lines)")


def _scan_views(plain: str, folded: str, rules: tuple[fam.Family, ...]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    sentences = {"plain": "\n".join(_segments(plain)), "folded": "\n".join(_segments(folded))}
    whole = {"plain": plain.replace("\n", " "), "folded": folded.replace("\n", " ")}
    for rule in rules:
        where = _first_hit(rule, whole[rule.view], sentences[rule.view])
        if where is not None:
            found.append((rule.name, where))
    return found


def _first_hit(rule: fam.Family, whole: str, sentences: str) -> str | None:
    """One pass over the sentences (one per line; the patterns are multi-line), then the whole text."""
    span = _search(rule, sentences)
    if span is not None:
        return f"sentence {sentences.count(chr(10), 0, span.start) + 1}"
    if _search(rule, whole) is not None:
        return "whole text"
    return None


def _search(rule: fam.Family, text: str) -> Span | None:
    """The first match of a rule that its `unless` does not excuse."""
    if rule.unless is None:
        return rule.pattern.search(text)
    return next((span for span in rule.pattern.finditer(text) if rule.unless.search(span.text) is None), None)


def sentence_views(normalised: Normalised) -> tuple[list[str], list[str]]:
    """The sentences of a text in its two scanning views, one list each, aligned."""
    plain, folded = _segments(normalised.plain), _segments(normalised.folded)
    if len(plain) != len(folded):  # folding moved a sentence boundary: derive both views per sentence
        known: dict[str, tuple[str, str]] = {}  # a repeated sentence is folded once
        views = [known.get(one) or known.setdefault(one, scan_views(one)) for one in _segments(normalised.text)]
        plain, folded = [view[0] for view in views], [view[1] for view in views]
    return plain, folded


def _score(normalised: Normalised, *, english_only: bool = False) -> list[tuple[str, str]]:
    """The weak-signal score over the sentences of the text, each read in both views, the orders
    planted for the reader (`planted`), then the learned detector over windows of them (neither for
    a rot13 reading: English patterns only)."""
    plain, folded = sentence_views(normalised)
    found = signals.score(plain, folded, english_only=english_only)
    if not english_only:  # a rot13 reading is checked for unmistakable phrases only
        shown = _segments(normalised.text)  # accents kept: the views strip them
        found += planted.find(plain, folded, shown=shown if len(shown) == len(plain) else None)
        found += planted.in_data(normalised.text) + payloads.find(plain, folded)
        found += override.find(plain)  # plain-word overrides and roles, by class, in many languages
        found += extraction.find(plain) + poisoning.find(plain)  # the reader's context asked back; tool poisoning
        found += prerequisite.find(plain)  # an order put before the reader's task, with a harm or the task named
    if not english_only and plain:
        current = intent.model()
        # only windows aimed at a reader: a bug title that shares an attack's words is no order
        aimed = signals.addressed(plain, folded)
        probability, first, last = intent.strongest(plain, folded, current, aimed=aimed)
        if first and probability >= current.threshold:  # first == 0: no window was aimed at a reader
            span = f"sentence {first}" if first == last else f"sentences {first}-{last}"
            found.append((fam.INSTRUCTION_INTENT, f"learned detector, {span}"))
    return found


def _segments(view: str) -> list[str]:
    """Sentences: split at line breaks, at . ! ? followed by a space, and after the ideographic full
    stop (Chinese and Japanese put no space after it). Linear, no regex."""
    for mark in ".!?":
        view = view.replace(mark + " ", mark + "\n")
    view = view.replace("\u3002", "\u3002\n")
    return [piece for piece in (line.strip() for line in view.split("\n")) if piece]
