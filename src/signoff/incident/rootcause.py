"""The commander's reasoning over the notary's comparisons, for any number of organisations: which
pairs of disclosures to compare, and the root cause (and which organisations share a behaviour) once
every pair has been compared. Pure: no room, no server; the commander's playbook calls it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any


def pairs_to_compare(orgs: Sequence[str],
                     by_event: Mapping[str, Mapping[str, str]]) -> tuple[str, list[tuple[str, str]]] | None:
    """The first event (by id) every organisation disclosed a fingerprint of, with each pair of its
    disclosure ids in configured order; None until one event has all of them. `by_event`: event id
    -> organisation -> disclosure id."""
    events = events_to_compare(orgs, by_event)
    return events[0] if events else None


def events_to_compare(orgs: Sequence[str],
                      by_event: Mapping[str, Mapping[str, str]]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every event (by id) every organisation disclosed a fingerprint of, each with its pairs: when
    one event's bytes match on every side (people asked for one that did not fail), the next event
    asked for is compared too."""
    return [(event_id, [(ids[a], ids[b]) for a, b in combinations(orgs, 2)])
            for event_id, ids in sorted(by_event.items()) if set(orgs) <= set(ids)]


@dataclass(frozen=True)
class Finding:
    """What the commander proposes from every pair's comparison of one event."""

    hypotheses: list[str]  # the notary's measured findings (per pair when more than one pair)
    cause: str | None  # the proposed root cause; None when the comparisons do not point to one
    field: str | None


def _names(orgs: Sequence[str]) -> str:
    return orgs[0] if len(orgs) == 1 else ", ".join(orgs[:-1]) + " and " + orgs[-1]


def root_cause(orgs: Sequence[str], comparisons: Sequence[Mapping[str, Any]]) -> Finding | None:
    """The root cause once `comparisons` (the notary's `Comparison.as_json()` of one event) cover
    every pair of `orgs`; None while a pair is missing. A cause is proposed when the comparisons split
    the organisations in two: the ones whose bytes match each other, against the others, every pair
    across differing in the same fields. When those fields are escaped by one side only, the cause
    says so (the \\u-escaping bugs); otherwise it names the fields and what was measured (lengths,
    JSON type), which fits any other way of writing the same value (number formatting, Unicode
    normalisation, ...). Each group of two or more shares its behaviour (a `shared by` finding)."""
    wanted = {frozenset(p) for p in combinations(orgs, 2)}
    if {frozenset(c["orgs"]) for c in comparisons} != wanted or len(comparisons) != len(wanted):
        return None
    many = len(comparisons) > 1
    hypotheses = [f"{' vs '.join(c['orgs'])}: {f}" if many else f for c in comparisons for f in c["findings"]]
    rows = [r for c in comparisons for r in c["rows"] if r["status"] != "match"]
    escaping = [o for o in orgs if any(o in r["escaped_by"] for r in rows)]
    others = [o for o in orgs if o not in escaping]
    paths = {r["path"] for r in rows}
    if (len(paths) == 1 and escaping and others and len(rows) == len(escaping) * len(others)
            and all(len(r["escaped_by"]) == 1 and r["delta"] is not None for r in rows)):
        path, cause = rows[0]["path"], _escaping_cause(rows, escaping, others)
        groups = (escaping, others)
    else:
        split = _split(orgs, comparisons)
        if split is None:
            return Finding(hypotheses, None, None)
        groups = split
        path, cause = _measured_cause(split, comparisons)
    for group, rest in (groups, groups[::-1]):
        if len(group) > 1:
            hypotheses.append(f"{path}: shared by {_names(group)}: they match each other and each differs "
                              f"from {_names(rest)}")
    return Finding(hypotheses, cause, path)


def _escaping_cause(rows: Sequence[Mapping[str, Any]], escaping: Sequence[str], others: Sequence[str]) -> str:
    path, delta = rows[0]["path"], abs(rows[0]["delta"])
    signs = "signs" if len(escaping) == 1 else "sign"
    verifies = "verifies" if len(others) == 1 else "verify"
    if any(r["non_ascii_by"] for r in rows):
        return (f"{path} is {delta} bytes longer as {_names(escaping)} signed it: {_names(escaping)} {signs} JSON "
                f"with \\u-escaped non-ASCII characters and {_names(others)} {verifies} a re-serialised body with "
                "raw UTF-8, so the HMACs differ for accented names.")
    # ASCII characters written as \uXXXX by one side only (an HTML-safe encoder's <, >, &)
    return (f"{path} is {delta} bytes longer as {_names(escaping)} signed it: {_names(escaping)} {signs} JSON "
            f"with ASCII characters written as \\uXXXX and {_names(others)} {verifies} a re-serialised body "
            "that writes them as single bytes, so the HMACs differ for events holding those characters.")


def _differs(c: Mapping[str, Any]) -> bool:
    """Whether the two bodies differ at all (in a field, or only between fields: whitespace, line
    endings, a byte order mark)."""
    return not c["digest_match"]


def _split(orgs: Sequence[str], comparisons: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]] | None:
    """The two groups the comparisons put the organisations in (whose bytes match each other), or
    None: more or fewer than two groups, a pair inside a group that differs, or pairs across the
    groups that differ in other fields."""
    group = {o: {o} for o in orgs}
    for c in comparisons:
        if not _differs(c):
            a, b = c["orgs"]
            merged = group[a] | group[b]
            for o in merged:
                group[o] = merged
    found: list[list[str]] = []
    for o in orgs:
        if not any(o in g for g in found):
            found.append([x for x in orgs if x in group[o]])
    if len(found) != 2:
        return None
    across = [c for c in comparisons if (c["orgs"][0] in found[0]) != (c["orgs"][1] in found[0])]
    fields = {tuple(r["path"] for r in c["rows"] if r["status"] != "match") for c in across}
    if len(fields) != 1 or not all(_differs(c) for c in across):
        return None
    return found[0], found[1]


def _measured_cause(split: tuple[list[str], list[str]],
                    comparisons: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The differing fields and a cause that says only what was measured: which side writes them with
    how many bytes, and their JSON type."""
    first, second = split
    c = next(c for c in comparisons if (c["orgs"][0] in first) != (c["orgs"][1] in first))
    a = c["orgs"][0] if c["orgs"][0] in first else c["orgs"][1]
    b = c["orgs"][1] if a == c["orgs"][0] else c["orgs"][0]
    rows = [r for r in c["rows"] if r["status"] != "match"]
    if not rows:  # every field matches: the bytes between them differ
        totals = c["total_bytes"]
        return "(between the fields)", (
            f"every field matches, but the whole body is {totals[a]} bytes as {_names(first)} "
            f"{'has' if len(first) == 1 else 'have'} it and {totals[b]} as {_names(second)} "
            f"{'has' if len(second) == 1 else 'have'} it: the bytes between the fields differ (whitespace, line "
            "endings, a byte order mark, a trailing newline), so a signature over one side's bytes does not "
            "verify over the other's.")
    sizes = []
    for r in rows:
        if r["delta"] is None:
            sizes.append(f"{r['path']} only on {r['status'].removeprefix('only_')}'s side")
            continue
        kind = f"a {r['type']}, " if r.get("type") else ""
        sizes.append(f"{r['path']}: {kind}{r[a]} bytes as {_names(first)} {'has' if len(first) == 1 else 'have'} "
                     f"it, {r[b]} as {_names(second)} {'has' if len(second) == 1 else 'have'} it")
    path = ", ".join(r["path"] for r in rows)
    noun = "this field" if len(rows) == 1 else "these fields"
    cause = (f"{'; '.join(sizes)}. {_names(first)} {'writes' if len(first) == 1 else 'write'} {noun} with other "
             f"bytes than {_names(second)} for the same event, so a signature over one side's bytes does not "
             "verify over the other's.")
    return path, cause


__all__ = ["Finding", "events_to_compare", "pairs_to_compare", "root_cause"]
