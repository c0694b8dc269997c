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
    for event_id, ids in sorted(by_event.items()):
        if set(orgs) <= set(ids):
            return event_id, [(ids[a], ids[b]) for a, b in combinations(orgs, 2)]
    return None


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
    every pair of `orgs`; None while a pair is missing. A cause is proposed when every differing row
    is the same field, escaped by one side only, and the escaping organisations differ from exactly
    each of the others: they split into the ones that escape and the ones that do not, and each group
    of two or more shares its behaviour (named in a `shared by` finding)."""
    wanted = {frozenset(p) for p in combinations(orgs, 2)}
    if {frozenset(c["orgs"]) for c in comparisons} != wanted or len(comparisons) != len(wanted):
        return None
    many = len(comparisons) > 1
    hypotheses = [f"{' vs '.join(c['orgs'])}: {f}" if many else f for c in comparisons for f in c["findings"]]
    rows = [r for c in comparisons for r in c["rows"] if r["status"] != "match"]
    escaping = [o for o in orgs if any(o in r["escaped_by"] for r in rows)]
    others = [o for o in orgs if o not in escaping]
    paths = {r["path"] for r in rows}
    if (len(paths) != 1 or not escaping or not others or len(rows) != len(escaping) * len(others)
            or any(len(r["escaped_by"]) != 1 or r["delta"] is None for r in rows)):
        return Finding(hypotheses, None, None)
    path, delta = rows[0]["path"], abs(rows[0]["delta"])
    signs = "signs" if len(escaping) == 1 else "sign"
    verifies = "verifies" if len(others) == 1 else "verify"
    if any(r["non_ascii_by"] for r in rows):
        cause = (f"{path} is {delta} bytes longer as {_names(escaping)} signed it: {_names(escaping)} {signs} JSON "
                 f"with \\u-escaped non-ASCII characters and {_names(others)} {verifies} a re-serialised body with "
                 "raw UTF-8, so the HMACs differ for accented names.")
    else:  # ASCII characters written as \uXXXX by one side only (an HTML-safe encoder's <, >, &)
        cause = (f"{path} is {delta} bytes longer as {_names(escaping)} signed it: {_names(escaping)} {signs} JSON "
                 f"with ASCII characters written as \\uXXXX and {_names(others)} {verifies} a re-serialised body "
                 "that writes them as single bytes, so the HMACs differ for events holding those characters.")
    for group, rest in ((escaping, others), (others, escaping)):
        if len(group) > 1:
            hypotheses.append(f"{path}: shared by {_names(group)}: they match each other and each differs "
                              f"from {_names(rest)}")
    return Finding(hypotheses, cause, path)


__all__ = ["Finding", "pairs_to_compare", "root_cause"]
