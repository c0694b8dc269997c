"""The verifier: a sentence passes only if every hash and number in it is found in the facts it
cites, and those facts are recomputed from the snapshot first.

Error codes:
- FACT_UNKNOWN          a cited id is not in the facts file
- FACT_INVALID          a cited fact does not match what the snapshot says (recomputed)
- NO_FACTS              the sentence cites nothing
- CITATION_IN_TEXT      a `[F1]` tag inside the text (citations live in `facts` only)
- HASH_UNSUPPORTED      a 7-40 character hex token (with a letter a-f) that prefixes no cited commit
- NUMBER_UNSUPPORTED    a number equal to no cited count/derived value and in no cited subject or path
- PERCENT_UNSUPPORTED   a percentage equal to no cited derived fact
- NUMBER_WORD_UNSUPPORTED  a spelled-out quantity ("three", "a dozen", "twice", "dozens of") likewise
- VERSION_UNSUPPORTED   a version (`0.28.2`, read whole, never as numbers) that is neither the version of
                        a tag in the range nor one written in a cited commit's subject
Dates of cited commits are not claims. Claims git cannot check by their meaning (standards such as
`PEP 681` or `metadata version 2.3`, external ticket ids such as `ABC-123`) are listed under
`unchecked` with their kind instead of failing; a `#N` is supported by a cited commit that carries it
in its subject or body.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from signoff.kernel.errors import UsageError
from signoff.notes.claims import Claim, citation_tags, extract, numbers_in
from signoff.notes.documents import VERDICT
from signoff.notes.facts import Aggregate, FactsFile, commit_fact, derive, round_half_up
from signoff.notes.knowledge import carried_refs, version_of
from signoff.notes.meaning import read_claims
from signoff.notes.snapshot import Snapshot


@dataclass
class Support:
    """What a set of facts lets a sentence say."""

    hashes: list[str] = field(default_factory=list)
    exact: set[Decimal] = field(default_factory=set)  # counts, numbers in subjects and paths
    derived: list[float] = field(default_factory=list)  # ratio / pct_change values
    percents: list[float] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    versions: set[str] = field(default_factory=set)  # of the range's tags and of cited subjects
    refs: set[str] = field(default_factory=set)  # PR and issue numbers the cited commits carry

    def number_ok(self, c: Claim) -> bool:
        assert c.value is not None
        if c.value in self.exact:
            return True
        return any(Decimal(repr(round_half_up(v, c.places))) == c.value for v in self.derived)

    def percent_ok(self, c: Claim) -> bool:
        assert c.value is not None
        return any(Decimal(repr(round_half_up(v, c.places))) == c.value for v in self.percents)

    def word_ok(self, c: Claim) -> bool:
        if c.value is None:
            assert c.low is not None and c.high is not None
            return any(c.low <= v <= c.high for v in self.exact if v == int(v))
        return self.number_ok(c)

    def claim_ok(self, c: Claim) -> bool:
        if c.kind == "hash":
            return self.hash_ok(c.token)
        if c.kind == "percent":
            return self.percent_ok(c)
        if c.kind == "word":
            return self.word_ok(c)
        return self.number_ok(c)

    def hash_ok(self, token: str) -> bool:
        t = token.lower()
        return any(h.startswith(t) for h in self.hashes)

    def add_fact(self, f: dict[str, Any]) -> None:
        kind = f["kind"]
        if kind == "commit":
            self.hashes.append(f["hash"])
            self.exact |= numbers_in(f["author"])
            self.dates.append(f["date"])
            numbers, versions, refs = _said(f["subject"], f.get("title") or "")
            self.exact |= numbers
            self.versions |= versions
            self.refs |= refs
            if f.get("pr"):
                self.refs.add(str(f["pr"]))
        elif kind == "file":
            self.exact |= numbers_in(f["path"])
            self.exact |= {Decimal(f[k]) for k in ("added", "deleted", "commits") if isinstance(f.get(k), int)}
        elif kind == "count":
            self.exact.add(Decimal(f["value"]))
            if isinstance(f.get("author"), str):
                self.exact |= numbers_in(f["author"])
        elif kind == "derived":
            value = float(f["value"])
            self.derived.append(abs(value))
            self.percents.append(abs(value) if f["op"] == "pct_change" else abs(value) * 100)


@lru_cache(maxsize=4096)
def _said(subject: str, title: str) -> tuple[frozenset[Decimal], frozenset[str], frozenset[str]]:
    """The numbers, versions and references a commit's subject and title support (read once per
    commit: the same commit is cited by many sentences)."""
    said = subject + "\n" + title
    numbers = numbers_in(subject) | (numbers_in(title) if title else set())
    versions = {v for c in read_claims(said) if c.kind == "version" and (v := version_of(c.value)) is not None}
    return frozenset(numbers), frozenset(versions), frozenset(carried_refs(said))


_EXEMPT = ("standard or platform version", "external ticket id")


def check_claims(text: str, support: Support, unchecked: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The errors of one sentence's text against what its facts support. Claims git cannot check
    are appended to `unchecked` (when given) instead."""
    errors: list[dict[str, Any]] = []

    def err(code: str, token: str, pos: int, detail: str) -> None:
        errors.append({"code": code, "token": token, "position": pos, "detail": detail})

    for tag, pos in citation_tags(text):
        err("CITATION_IN_TEXT", tag, pos, "citations belong in the sentence's facts list, not in its text")
    # Read by meaning first: a version is one claim (never its numbers), a reference a cited commit
    # carries is supported, and standards and external ids are not claims about this history.
    work = text
    for m in read_claims(text):
        end = m.position + len(m.token)
        if text[m.position:end] != m.token:
            continue  # a claim read inside a link target: its numbers are checked below as written
        if m.kind == "version" and m.value.count(".") == 1 and not m.token.lower().startswith("v") \
                and m.value.replace(".", "").isdigit():
            continue  # `3.11`, `76.0`: a number as much as a version, checked as a number below
        if m.kind == "version":
            v = version_of(m.value)
            if v is None or v not in support.versions:
                err("VERSION_UNSUPPORTED", m.token, m.position,
                    "the version of no tag in the range and in no cited commit subject")
        elif m.kind == "ref" and m.value in support.refs:
            pass
        elif not m.checkable and m.why in _EXEMPT:
            if unchecked is not None:
                unchecked.append({"token": m.token, "position": m.position, "kind": m.why})
        else:
            continue
        work = work[:m.position] + " " * (end - m.position) + work[end:]
    for c in extract(work, support.dates):
        if c.kind == "hash" and not support.hash_ok(c.token):
            err("HASH_UNSUPPORTED", c.token, c.position, "prefixes no cited commit hash")
        elif c.kind == "number" and not support.number_ok(c):
            err("NUMBER_UNSUPPORTED", c.token, c.position,
                "equals no cited count or derived value and appears in no cited subject or path")
        elif c.kind == "percent" and not support.percent_ok(c):
            err("PERCENT_UNSUPPORTED", c.token, c.position, "equals no cited derived (ratio or pct_change) fact")
        elif c.kind == "word" and not support.word_ok(c):
            err("NUMBER_WORD_UNSUPPORTED", c.token, c.position, "the quantity matches no cited value")
    return sorted(errors, key=lambda e: (e["position"] is None, e["position"] or 0))


class Verifier:
    """Recompute the cited facts from the snapshot once, then check any number of sentences."""

    def __init__(self, snapshot_path: Path, facts_path: Path, cited: Iterable[str]) -> None:
        cited = set(cited)
        self.cited = frozenset(cited)
        self.facts = FactsFile(facts_path, wanted=cited)
        wanted_hashes = {f["hash"] for f in self.facts.by_id.values() if f["kind"] == "commit"}
        snap = Snapshot(snapshot_path)
        agg = Aggregate()
        commits: dict[str, dict[str, Any]] = {}
        for commit in snap.commits():
            agg.add(commit)
            if commit["hash"] in wanted_hashes:
                commits[commit["hash"]] = commit
        if self.facts.snapshot_digest is not None and self.facts.snapshot_digest != snap.digest:
            raise UsageError(f"facts {facts_path} were computed from a different snapshot than {snapshot_path}",
                             "pass the snapshot the facts were made from, or run `signoff notes facts` again")
        self.snapshot_digest = snap.digest
        self.commits = commits
        in_range = {c for c in commits} | ({snap.head} if snap.head else set())
        sides = [x for x in snap.range.split("..") if x]
        self.range_versions = {v for t in snap.tags if t["commit"] in in_range or t["name"] in sides
                               if (v := version_of(t["name"])) is not None}
        self.range_versions |= {v for x in sides if (v := version_of(x)) is not None}
        self.status: dict[str, str | None] = {}
        for fid in sorted(cited & self.facts.ids, key=lambda x: int(x[1:])):
            self.status[fid] = self._recompute(self.facts.by_id[fid], agg, commits)

    def _recompute(self, f: dict[str, Any], agg: Aggregate, commits: dict[str, dict[str, Any]],
                   depth: int = 0) -> str | None:
        """None when the fact matches the snapshot, else what differs."""
        kind = f["kind"]
        if kind == "commit":
            commit = commits.get(f["hash"])
            if commit is None:
                return f"no commit {f['hash']} in the snapshot"
            true = commit_fact(commit)
            for k in true:
                if k in f and f[k] != true[k]:
                    return f"{k} is {f[k]!r} but the commit says {true[k]!r}"
            return None
        if kind == "file":
            truth = agg.file_fact(f["path"])
            if truth is None:
                return f"path {f['path']!r} is not touched in the snapshot"
            for k in ("added", "deleted", "binary", "commits"):
                if k in f and f[k] != truth[k]:
                    return f"{k} is {f[k]!r} but the snapshot gives {truth[k]!r}"
            return None
        if kind == "count":
            value = agg.count(f["metric"], f["scope"])
            if value is None:
                return f"metric {f['metric']} has no scope {f['scope']!r}"
            return None if value == f["value"] else f"value is {f['value']} but the snapshot gives {value}"
        # derived: both operands must be valid count facts of this file.
        values: list[int] = []
        for ref in f["of"]:
            other = self.facts.by_id.get(ref)
            if other is None or other["kind"] != "count":
                return f"operand {ref} is not a count fact in the facts file"
            problem = self._recompute(other, agg, commits, depth + 1)
            if problem is not None:
                return f"operand {ref} is invalid: {problem}"
            values.append(other["value"])
        derived = derive(f["op"], values[0], values[1])
        if derived is None:
            return f"{f['op']} of {f['of'][0]} and {f['of'][1]} is undefined (division by zero)"
        return None if derived == f["value"] else f"value is {f['value']} but {f['op']} gives {derived}"

    def check(self, sentence: dict[str, Any]) -> dict[str, Any]:
        errors: list[dict[str, Any]] = []
        support = Support(versions=set(self.range_versions))
        if not sentence["facts"]:
            errors.append({"code": "NO_FACTS", "token": "", "position": 0,
                           "detail": "every sentence must cite at least one fact"})
        for fid in sentence["facts"]:
            if fid not in self.facts.ids:
                errors.append({"code": "FACT_UNKNOWN", "token": fid, "position": None,
                               "detail": "no fact with this id in the facts file"})
                continue
            problem = self.status.get(fid)
            if problem is not None:
                errors.append({"code": "FACT_INVALID", "token": fid, "position": None, "detail": problem})
                continue
            fact = self.facts.by_id[fid]
            support.add_fact(fact)
            if fact["kind"] == "commit" and fact["hash"] in self.commits:
                support.refs |= carried_refs(self.commits[fact["hash"]]["body"])
        unchecked: list[dict[str, Any]] = []
        errors += check_claims(sentence["text"], support, unchecked)
        result = {"id": sentence["id"], "text": sentence["text"], "facts": sentence["facts"], "ok": not errors,
                  "errors": errors}
        if unchecked:
            result["unchecked"] = unchecked
        return result

    def verdict(self, sentences: list[dict[str, Any]]) -> dict[str, Any]:
        results = [self.check(s) for s in sentences]
        return {"schema": VERDICT, "ok": all(r["ok"] for r in results), "snapshot_digest": self.snapshot_digest,
                "facts_checked": {k: ("ok" if v is None else v) for k, v in self.status.items()},
                "sentences": results}


def verify(snapshot_path: Path, facts_path: Path, sentences: list[dict[str, Any]]) -> dict[str, Any]:
    verifier = Verifier(snapshot_path, facts_path, {f for s in sentences for f in s["facts"]})
    return verifier.verdict(sentences)
