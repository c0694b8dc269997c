"""The verifier: true sentences pass, every mutant is flagged with the right code and position."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from signoff.kernel.errors import UsageError
from signoff.notes.claims import extract
from signoff.notes.facts import FactsFile
from signoff.notes.verify import Verifier, verify
from signoff.notes.writer import write_default


def _facts(built: tuple[Path, Path]) -> list[dict[str, Any]]:
    return FactsFile(built[1]).facts()


def _find(facts: list[dict[str, Any]], **want: Any) -> dict[str, Any]:
    return next(f for f in facts if all(f.get(k) == v for k, v in want.items()))


def true_corpus(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sentences a careful writer would produce: the scripted writer's and hand-written ones."""
    written = write_default({"range": "HEAD", "facts": facts})["sentences"]
    out = [{"id": f"S{i}", "text": s["text"], "facts": s["cites"]} for i, s in enumerate(written, 1)]
    logo = _find(facts, kind="commit", subject="Add binary logo")
    issue = _find(facts, kind="commit", subject="Double every constant in app.py for issue 42")
    people = _find(facts, kind="count", metric="contributors", scope="range")
    commits = _find(facts, kind="count", metric="commits", scope="range")
    added = _find(facts, kind="count", metric="lines_added", scope="range")
    deleted = _find(facts, kind="count", metric="lines_deleted", scope="range")
    pct = _find(facts, kind="derived", op="pct_change")
    core = _find(facts, kind="file", path="src/core.py")
    n = len(out)
    hand = [
        (f"Chen 陈 added a binary logo in {logo['hash'][:7]} on {logo['date'][:10]}.", [logo["id"]]),
        (f"Commit {issue['hash'][:12]} doubles every constant for issue 42.", [issue["id"]]),
        ("Three people contributed to this range.", [people["id"]]),
        (f"In total {commits['value']} commits added {added['value']:,} lines and removed {deleted['value']}.",
         [commits["id"], added["id"], deleted["id"]]),
        (f"Lines added exceed lines deleted by {pct['value']:.1f}%.", [pct["id"], added["id"], deleted["id"]]),
        (f"src/core.py gained {core['added']} lines.", [core["id"]]) if core["added"] in (
            added["value"],) else (f"The file src/core.py changed in {core['commits']} commits.", [core["id"]]),
    ]
    for i, (text, cited) in enumerate(hand, n + 1):
        out.append({"id": f"S{i}", "text": text, "facts": cited})
    return out


def test_true_sentences_all_pass(built: tuple[Path, Path]) -> None:
    corpus = true_corpus(_facts(built))
    verdict = verify(built[0], built[1], corpus)
    assert [s["errors"] for s in verdict["sentences"] if not s["ok"]] == []
    assert verdict["ok"] and len(corpus) >= 10


_WORDS = ["seventeen", "eleven", "forty-two"]


def mutants(sentence: dict[str, Any], facts: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """(what, mutated sentence, expected code) for every claim in the sentence, plus additions."""
    out: list[tuple[str, dict[str, Any], str]] = []
    text = sentence["text"]
    dates = [f["date"] for f in facts if f["id"] in sentence["facts"] and f["kind"] == "commit"]
    for c in extract(text, dates):
        head, tail = text[:c.position], text[c.position + len(c.token):]
        if c.kind == "number":
            digits = c.token.replace(",", "")
            bumped = str(int(digits) + 1) if "." not in digits else digits[:-1] + str((int(digits[-1]) + 1) % 10)
            out.append(("number off by one", {**sentence, "text": head + bumped + tail}, "NUMBER_UNSUPPORTED"))
        elif c.kind == "percent":
            num = re.match(r"[\d.,]+", c.token)
            assert num
            bumped = num.group(0)[:-1] + str((int(num.group(0)[-1]) + 3) % 10)
            out.append(("percent changed", {**sentence, "text": head + bumped + "%" + tail}, "PERCENT_UNSUPPORTED"))
        elif c.kind == "hash":
            first = "0" if c.token[0] != "0" else "f"
            out.append(("hash changed", {**sentence, "text": head + first + c.token[1:] + tail}, "HASH_UNSUPPORTED"))
        elif c.kind == "word":
            word = next(w for w in _WORDS if w != c.token.lower())
            out.append(("word changed", {**sentence, "text": head + word + tail}, "NUMBER_WORD_UNSUPPORTED"))
    base = text.rstrip(".")
    out.append(("percentage added", {**sentence, "text": base + ", 37.5% more than before."}, "PERCENT_UNSUPPORTED"))
    out.append(("spelled-out number added", {**sentence, "text": base + " after a dozen reviews."},
                "NUMBER_WORD_UNSUPPORTED"))
    out.append(("vague quantity added", {**sentence, "text": base + ", closing thousands of bugs."},
                "NUMBER_WORD_UNSUPPORTED"))
    cited = [f for f in facts if f["id"] in sentence["facts"]]
    twos = any(f.get("value") == 2 or f.get("commits") == 2 or "doubl" in f.get("subject", "").lower()
               for f in cited)
    if not twos:  # "twice" is a quantity 2: only a mutant when nothing cited says 2
        out.append(("twice added", {**sentence, "text": base + ", twice as fast as before."},
                    "NUMBER_WORD_UNSUPPORTED"))
    out.append(("invented hash", {**sentence, "text": base + " (see deadbeef1)."}, "HASH_UNSUPPORTED"))
    out.append(("citation in text", {**sentence, "text": base + " [F1]."}, "CITATION_IN_TEXT"))
    return out


def test_every_mutant_is_flagged(built: tuple[Path, Path]) -> None:
    facts = _facts(built)
    corpus = true_corpus(facts)
    cases = [(s["id"], what, m, code) for s in corpus for what, m, code in mutants(s, facts)]
    verifier = Verifier(built[0], built[1], {f["id"] for f in facts})
    missed = []
    kinds = set()
    for sid, what, mutant, code in cases:
        result = verifier.check(mutant)
        codes = {e["code"] for e in result["errors"]}
        kinds.add(what)
        if code not in codes:
            missed.append((sid, what, mutant["text"], codes))
    assert missed == []
    assert {"number off by one", "hash changed", "percent changed", "word changed"} <= kinds
    assert len(cases) > 60


def test_swapped_fact_id_is_flagged(built: tuple[Path, Path]) -> None:
    facts = _facts(built)
    by_id = {f["id"]: f for f in facts}
    counts = [f for f in facts if f["kind"] == "count" and f["scope"] == "range"]
    commit_facts = [f for f in facts if f["kind"] == "commit"]
    verifier = Verifier(built[0], built[1], set(by_id))
    swapped = 0
    for s in true_corpus(facts):
        for fid in s["facts"]:
            f = by_id[fid]
            others = [by_id[x] for x in s["facts"] if x != fid]
            stated = re.search(rf"(?<![\d.,]){f.get('value')}(?![\d.,]\d)", s["text"])
            if f["kind"] == "count" and stated and all(o.get("value") != f["value"] for o in others):
                target = next(c for c in counts if c["value"] != f["value"] and str(c["value"]) not in s["text"])
            elif f["kind"] == "commit" and f["hash"][:7] in s["text"]:
                target = next(c for c in commit_facts if c["id"] != fid)
            else:
                continue
            mutant = {**s, "facts": [target["id"] if x == fid else x for x in s["facts"]]}
            assert not verifier.check(mutant)["ok"], (s["text"], fid, target["id"])
            swapped += 1
    assert swapped >= 5


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def _tampered_facts(built: tuple[Path, Path], tmp_path: Path, fid: str, **change: Any) -> Path:
    doc = json.loads(built[1].read_text(encoding="utf-8"))
    for f in doc["facts"]:
        if f["id"] == fid:
            f.update(change)
    return _write(tmp_path / "facts.json", doc)


def test_fact_invalid_when_facts_do_not_match_the_snapshot(built: tuple[Path, Path], tmp_path: Path) -> None:
    facts = _facts(built)
    commits = _find(facts, kind="count", metric="commits", scope="range")
    commit = _find(facts, kind="commit", subject="Add binary logo")
    core = _find(facts, kind="file", path="src/core.py")
    derived = _find(facts, kind="derived", op="pct_change")
    cases = [
        (commits["id"], {"value": commits["value"] + 1}, f"This range has {commits['value'] + 1} commits."),
        (commit["id"], {"subject": "Add binary logo, 3x faster"}, f"Commit {commit['hash'][:8]} adds a logo."),
        (commit["id"], {"hash": "0" * 40}, "A logo was added."),
        (core["id"], {"added": core["added"] + 10}, "src/core.py changed."),
        (derived["id"], {"value": 99.0}, "Lines added went up 99%."),
    ]
    for fid, change, text in cases:
        path = _tampered_facts(built, tmp_path, fid, **change)
        verdict = verify(built[0], path, [{"id": "S1", "text": text, "facts": [fid]}])
        codes = [e["code"] for e in verdict["sentences"][0]["errors"]]
        assert "FACT_INVALID" in codes, (fid, change, codes)
        assert verdict["facts_checked"][fid] != "ok"


def test_fact_unknown_no_facts_and_positions(built: tuple[Path, Path]) -> None:
    facts = _facts(built)
    people = _find(facts, kind="count", metric="contributors", scope="range")
    verdict = verify(built[0], built[1], [
        {"id": "S1", "text": "Nothing to see.", "facts": ["F9999"]},
        {"id": "S2", "text": "Nothing to see.", "facts": []},
        {"id": "S3", "text": f"{people['value']} people, 7 days.", "facts": [people["id"]]},
    ])
    s1, s2, s3 = verdict["sentences"]
    assert [e["code"] for e in s1["errors"]] == ["FACT_UNKNOWN"] and s1["errors"][0]["token"] == "F9999"
    assert [e["code"] for e in s2["errors"]] == ["NO_FACTS"]
    assert s3["errors"] == [{"code": "NUMBER_UNSUPPORTED", "token": "7", "position": s3["text"].index("7"),
                             "detail": s3["errors"][0]["detail"]}]
    assert not verdict["ok"]


def test_dates_of_cited_commits_are_allowed_but_not_others(built: tuple[Path, Path]) -> None:
    facts = _facts(built)
    logo = _find(facts, kind="commit", subject="Add binary logo")
    other = _find(facts, kind="commit", subject="Trim readme")
    day = logo["date"][:10]
    ok = verify(built[0], built[1], [{"id": "S1", "text": f"The logo landed on {day}.", "facts": [logo["id"]]}])
    assert ok["ok"]
    bad = verify(built[0], built[1], [{"id": "S1", "text": f"The logo landed on {other['date'][:10]}.",
                                       "facts": [logo["id"]]}])
    assert not bad["ok"] or other["date"][:10] == day


def test_facts_from_another_snapshot_are_refused(built: tuple[Path, Path], history: Any, tmp_path: Path) -> None:
    from signoff.notes.snapshot import take_snapshot

    take_snapshot(history.path, "v0.1.0..v0.2.0", tmp_path / "other.json")
    with pytest.raises(UsageError, match="different snapshot"):
        verify(tmp_path / "other.json", built[1], [{"id": "S1", "text": "x", "facts": ["F1"]}])
