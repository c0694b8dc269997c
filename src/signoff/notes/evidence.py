"""Notes evidence: a signed in-toto statement that a run shipped notes whose every kept sentence
was approved and verified, and its offline check.

The statement names the published `final.md`, the snapshot, the facts and the decision log (the
export of the run's ledger case) by
SHA-256 (rechecked by `signoff evidence verify` when the files sit beside the evidence), and the
tip commit by gitCommit. Importing this module registers the predicate check, which, when the run
folder is beside the evidence, replays the decisions, verifies every kept sentence again from the
snapshot, renders the notes again and grades them, and fails closed on any difference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.kernel.digests import sha256_bytes, sha256_file
from signoff.kernel.errors import IntegrityError, RefusedError, SignoffError
from signoff.kernel.settings import Settings
from signoff.notes.checks import blockers, export_decisions, exported_state
from signoff.notes.grade import grade
from signoff.notes.model import State, text_digest
from signoff.notes.render import render
from signoff.notes.run import DECISIONS_FILE, FACTS_FILE, FINAL_FILE, SNAPSHOT_FILE, load_review
from signoff.notes.snapshot import Snapshot
from signoff.trust import KeyStore, register_predicate_check, statement, subject, write_evidence

PREDICATE_TYPE = "https://signoff.dev/notes/v1"
EVIDENCE_FILE = "notes.intoto.json"


def publish(state: State, folder: Path, settings: Settings, commit_url: str | None = None,
            pr_url: str | None = None) -> tuple[str, Path]:
    """Render a shipped run in `state` into `final.md` in its folder and sign the evidence over it
    and the decisions, exported beside it (`decisions.jsonl`)."""
    text = render(folder, state, commit_url, pr_url)
    final = folder / FINAL_FILE
    final.write_text(text, encoding="utf-8")
    exported = export_decisions(state.records, folder)
    snap = Snapshot(folder / SNAPSHOT_FILE)
    for _ in snap.commits():
        pass
    graded = grade(final, folder / SNAPSHOT_FILE)
    if not graded["ok"]:
        # Never sign a grade that `check` would reject: say what git contradicts instead.
        said = "; ".join(f"{u['token']!r}: {u['reason']}" for u in graded["unsupported"][:3])
        raise RefusedError(f"the rendered notes do not grade against the snapshot ({said})",
                           "edit the sentences git contradicts, then ship and render again")
    review = load_review(folder)
    approvals: dict[str, str] = {}
    for d in state.records:
        if d.action == "approve":
            for sid in d.digests or {}:
                approvals[sid] = d.by
    predicate = {
        "kind": "measured",
        "range": snap.range,
        "head": snap.head,
        "snapshot_digest": snap.digest,
        "commit_url": commit_url,
        **({"pr_url": pr_url} if pr_url else {}),
        "draft": review["draft"],
        "decisions": state.count,
        "verdict_ok": True,
        "sentences": [{"id": s.id, "facts": s.facts, "text_sha256": text_digest(s.text),
                       "approved_by": approvals.get(s.id)} for s in state.sentences if s.status == "approved"],
        "grade": {"claims": graded["claims"], "sentences": graded["sentences"]},
    }
    subjects = [subject(FINAL_FILE, sha256=sha256_bytes(text.encode("utf-8"))),
                subject(SNAPSHOT_FILE, sha256=sha256_file(folder / SNAPSHOT_FILE)),
                subject(FACTS_FILE, sha256=sha256_file(folder / FACTS_FILE)),
                subject(DECISIONS_FILE, sha256=sha256_file(exported))]
    if snap.head:
        subjects.append(subject(f"git:{snap.range}", gitCommit=snap.head))
    st = statement(subjects, PREDICATE_TYPE, predicate)
    key = KeyStore(settings.keys_dir).ensure("verifier")
    path = write_evidence(st, key, settings.evidence_dir, path=folder / EVIDENCE_FILE)
    return text, path


def check(st: dict[str, Any], base: Path) -> list[str]:
    p = st["predicate"]
    if p.get("kind") != "measured" or p.get("verdict_ok") is not True:
        raise IntegrityError("notes evidence does not record a passing verification",
                             "only shipped, verified notes carry this evidence")
    if not isinstance(p.get("sentences"), list) or not p["sentences"]:
        raise IntegrityError("notes evidence lists no sentences", "the statement was altered")
    needed = [base / n for n in (SNAPSHOT_FILE, FACTS_FILE, DECISIONS_FILE, FINAL_FILE, "review.json")]
    if not all(n.is_file() for n in needed):
        return ["notes run files are not beside the evidence: signatures and digests checked, "
                "the notes were not re-verified"]
    try:
        state = exported_state(base)
        problems = blockers(base, state)
        text = render(base, state, p.get("commit_url"), p.get("pr_url"))
        graded = grade(base / FINAL_FILE, base / SNAPSHOT_FILE)
    except SignoffError as exc:
        raise IntegrityError(f"notes run could not be re-verified: {exc.message}",
                             "the run files beside the evidence are damaged") from exc
    if not state.shipped or problems:
        raise IntegrityError("notes run does not ship on replay: " + " | ".join(problems or ["no ship decision"]),
                             "the decision log or the run files changed after signing")
    kept = [{"id": s.id, "facts": s.facts, "text_sha256": text_digest(s.text)}
            for s in state.sentences if s.status == "approved"]
    if kept != [{k: v for k, v in s.items() if k != "approved_by"} for s in p["sentences"]]:
        raise IntegrityError("the approved sentences on replay differ from the signed ones",
                             "the run files changed after signing")
    final_digest = next((s["digest"].get("sha256") for s in st["subject"] if s.get("name") == FINAL_FILE), None)
    if sha256_bytes(text.encode("utf-8")) != final_digest:
        raise IntegrityError("rendering the run again gives other Markdown than the signed final.md",
                             "the run files changed after signing")
    if not graded["ok"] or {"claims": graded["claims"], "sentences": graded["sentences"]} != p.get("grade"):
        raise IntegrityError("grading final.md again gives another result than the signed one",
                             "the snapshot or final.md changed after signing")
    return [f"re-verified {len(kept)} sentences from the snapshot; rendered and graded again: identical"]


register_predicate_check(PREDICATE_TYPE, check)
