"""Human decisions on a run: `approve S1`, `approve all`, `reject S2`, `edit S3 <text>`, `ship`.

Decisions are events of the run's ledger case (`notes.run.<digest of review.json>`, so they bind
the reviewed sentences they were made on), decided with `Ledger.update`, and replayed in order with
last-decision-wins: `approve all`, then `edit S3 ...`, then `reject S3` leaves S3 rejected. An
approval records the digest of the exact text approved; an edit replaces the text and so voids any
earlier approval of that sentence, and the edited text is verified again. `ship` is recorded only
when every kept (not rejected) sentence is approved and passes verification; otherwise it is refused
with the reason for each sentence, and nothing is written.

A decision names what the person saw (`#<digest>` after the id, `all`, or `ship`; see
`signoff.kernel.shown`): the sentence's text and citations for one sentence, every sentence's for
`approve all`, and every sentence with its status for `ship`. The digest is checked against the run
as it is when the decision is written, so an approval of a page that loaded before someone else's
edit is refused, never recorded against text the person did not see. Every face sends it: the pages
from what they rendered, the CLI from what it prints.

`decisions.jsonl` in the run folder is an export of that case (written when the run is published),
so that the signed evidence can be re-checked offline; it is never read back as the record.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.clock import Clock, utc_iso
from signoff.kernel.errors import RefusedError, UsageError
from signoff.kernel.shown import check_shown, short, shown_digest
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger
from signoff.notes.documents import DECISION, dumps_line
from signoff.notes.draft import MAX_TEXT
from signoff.notes.run import DECISIONS_FILE, FACTS_FILE, SNAPSHOT_FILE, case_of, current_sentences
from signoff.notes.verify import Verifier

_COMMAND = re.compile(r"^\s*(approve|reject|edit|ship)\b\s*(.*)$", re.IGNORECASE | re.DOTALL)
_SID = re.compile(r"^(S[1-9][0-9]*)\b\s*(.*)$", re.DOTALL)
_SHOWN = re.compile(r"^#(\S*)\s*(.*)$", re.DOTALL)  # `#<digest of what was shown>` before any text
USAGE = "use: approve S1 | approve all | reject S2 | edit S3 <new text> | ship (each may name #<digest shown>)"
RELOAD = "reload the page (or run `signoff notes status RUN`) and review the text as it is now"


def text_digest(text: str) -> str:
    return canonical_digest({"text": text})


@dataclass
class Command:
    action: str
    target: str | None = None
    text: str | None = None
    shown: str | None = None  # the digest (or its first 12+ hex digits) of what the person saw


def _shown(rest: str) -> tuple[str | None, str]:
    """The `#<digest>` at the start of `rest`, if any, and what follows it."""
    m = _SHOWN.match(rest)
    return (m.group(1), m.group(2).strip()) if m else (None, rest)


def parse(command: str, known: list[str]) -> Command:
    m = _COMMAND.match(command)
    if not m:
        raise UsageError(f"not a decision: {command!r}", USAGE)
    action, rest = m.group(1).lower(), m.group(2).strip()
    if action == "ship":
        shown, rest = _shown(rest)
        if rest:
            raise UsageError(f"ship takes no argument, got {rest!r}", USAGE)
        return Command("ship", shown=shown)
    if action == "approve" and rest.lower().split(maxsplit=1)[:1] == ["all"]:
        shown, rest = _shown(rest[3:].strip())
        if rest:
            raise UsageError(f"approve all takes nothing after it, got {rest!r}", USAGE)
        return Command("approve", "all", shown=shown)
    sm = _SID.match(rest)
    if not sm:
        raise UsageError(f"{action} needs a sentence id like S1, got {rest!r}", USAGE)
    sid, (shown, tail) = sm.group(1), _shown(sm.group(2).strip())
    if sid not in known:
        raise UsageError(f"no sentence {sid} in this run (it has {', '.join(known) or 'none'})",
                         "check the ids with `signoff notes review RUN` or the review.json file")
    if action == "edit":
        if not tail:
            raise UsageError(f"edit {sid} needs the new text", "use: edit S3 <new text>")
        if "\n" in tail or "\r" in tail:
            raise UsageError(f"the new text of {sid} has a line break", "a sentence is one line of text")
        if len(tail) > MAX_TEXT:
            raise UsageError(f"the new text of {sid} is longer than {MAX_TEXT} characters", "shorten it")
        return Command("edit", sid, tail, shown)
    if tail:
        raise UsageError(f"{action} {sid} takes nothing after the id, got {tail!r}", USAGE)
    return Command(action, sid, shown=shown)


@dataclass
class SentenceState:
    id: str
    text: str
    facts: list[str]
    status: str = "pending"  # pending | approved | rejected
    edited: bool = False
    by: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class State:
    sentences: list[SentenceState]
    shipped: bool = False
    count: int = 0

    def get(self, sid: str) -> SentenceState:
        return next(s for s in self.sentences if s.id == sid)

    def as_json(self) -> dict[str, Any]:
        return {"shipped": self.shipped, "decisions": self.count,
                "sentences": [s.__dict__ for s in self.sentences]}


DECIDED = "notes.decided"


def shown_content(state: State, action: str, target: str | None) -> Any:
    """What a face shows for a decision, as the digest covers it: one sentence's text and citations;
    every sentence's for `approve all`; every sentence with its status for `ship`."""
    if action == "ship":
        return [{"id": s.id, "text": s.text, "facts": s.facts, "status": s.status} for s in state.sentences]
    chosen = state.sentences if target == "all" else [state.get(str(target))]
    return [{"id": s.id, "text": s.text, "facts": s.facts} for s in chosen]


def shown_of(state: State, action: str, target: str | None = None) -> str:
    """The digest a face sends with a decision on what it rendered from `state`."""
    return shown_digest(shown_content(state, action, target))


def bound(command: str, state: State) -> str:
    """`command` naming the digest of what it decides on in `state` (for a face that has just shown
    that content): `approve S1` -> `approve S1 #3fa9c2d1e0b7`."""
    cmd = parse(command, [s.id for s in state.sentences])
    if cmd.shown:
        return command.strip()
    digest = short(shown_of(state, cmd.action, cmd.target))
    if cmd.action == "ship":
        return f"ship #{digest}"
    head = f"{cmd.action} {cmd.target} #{digest}"
    return f"{head} {cmd.text}" if cmd.action == "edit" else head


def asks_for_shown(state: State, command: str, prefix: str = "") -> str | None:
    """For a decision that names no digest (typed where nothing was shown, e.g. in a room): what it
    would decide on and the exact command that decides on exactly that; None when it names one."""
    if parse(command, [s.id for s in state.sentences]).shown:
        return None
    return ("not recorded: it names no text. It would decide on: " + " | ".join(what_is_decided(state, command))
            + f". To decide on exactly this, send `{prefix}{bound(command, state)}`.")


def what_is_decided(state: State, command: str) -> list[str]:
    """The lines a face prints before deciding: exactly the content the decision's digest covers."""
    cmd = parse(command, [s.id for s in state.sentences])
    rows = shown_content(state, cmd.action, cmd.target)
    return [f"{r['id']}{' (' + r['status'] + ')' if 'status' in r else ''}: {r['text']} "
            + "".join(f"[{f}]" for f in r["facts"]) for r in rows]


def decisions(ledger: SqlLedger, folder: Path) -> list[dict[str, Any]]:
    """The run's decisions, from its ledger case, in order."""
    return [e.payload for e in ledger.read(case_of(folder)) if e.type == DECIDED]


def export_decisions(ledger: SqlLedger, folder: Path) -> Path:
    """Write the run's decisions to `decisions.jsonl` beside its other files (for offline checks)."""
    path = folder / DECISIONS_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(dumps_line(d) + "\n" for d in decisions(ledger, folder)), encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_decisions(folder: Path) -> list[dict[str, Any]]:
    """The decisions in an exported `decisions.jsonl` (checked line by line: the file may have been
    edited by anyone who could write the folder)."""
    path = folder / DECISIONS_FILE
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{n} is not valid JSON: {exc.msg}",
                             "decisions are append-only; restore the file from its last good copy") from None
        if not isinstance(rec, dict) or rec.get("schema") != DECISION:
            found = rec.get("schema") if isinstance(rec, dict) else None
            raise UsageError(f"{path}:{n} has schema {found!r}, expected {DECISION!r}",
                             "decisions.jsonl must hold only signoff decisions")
        if rec.get("action") not in ("approve", "reject", "edit", "ship"):
            raise UsageError(f"{path}:{n} has unknown action {rec.get('action')!r}", "restore the file")
        out.append(rec)
    return out


def replay(sentences: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> State:
    state = State([SentenceState(s["id"], s["text"], list(s["facts"])) for s in sentences])
    ids = {s.id for s in state.sentences}
    for rec in decisions:
        state.count += 1
        action, target = rec["action"], rec.get("target")
        if action == "ship":
            state.shipped = True
            continue
        targets = sorted(ids, key=lambda x: int(x[1:])) if target == "all" else [target]
        for sid in targets:
            if sid not in ids:
                continue
            s = state.get(sid)
            if action == "approve" and sid in (rec.get("unverified") or {}):
                s.notes.append(f"decision {rec.get('seq')}: not approved: {rec['unverified'][sid]}")
                continue
            if action == "approve":
                digest = (rec.get("digests") or {}).get(sid)
                if digest != text_digest(s.text):
                    # The approval names other text than this sentence has at this point: it binds nothing.
                    s.notes.append(f"decision {rec.get('seq')}: approval was for other text; ignored")
                    continue
                s.status, s.by = "approved", rec.get("by")
            elif action == "reject":
                s.status, s.by = "rejected", rec.get("by")
            elif action == "edit":
                s.text, s.edited, s.status, s.by = str(rec.get("text")), True, "pending", rec.get("by")
    return state


def verifier_errors(folder: Path, sentences: list[SentenceState]) -> dict[str, list[dict[str, Any]]]:
    """The verifier's errors for each sentence's current text (edits included), facts recomputed first."""
    verifier = Verifier(folder / SNAPSHOT_FILE, folder / FACTS_FILE, {f for s in sentences for f in s.facts})
    return {s.id: verifier.check({"id": s.id, "text": s.text, "facts": s.facts})["errors"] for s in sentences}


def codes(errors: list[dict[str, Any]]) -> str:
    return "; ".join(f"{e['code']} {e['token']!r}" for e in errors)


def blockers(folder: Path, state: State) -> list[str]:
    """Why this state may not ship (empty when it may)."""
    kept = [s for s in state.sentences if s.status != "rejected"]
    if not kept:
        return ["no sentence is kept: there is nothing to ship"]
    errors = verifier_errors(folder, kept)
    problems = []
    for s in kept:
        why = []
        if s.status != "approved":
            why.append("not approved" + (" since its edit" if s.edited else ""))
        why += [f"{e['code']} {e['token']!r}" for e in errors[s.id]]
        if why:
            problems.append(f"{s.id}: " + "; ".join(why))
    return problems


def decide(ledger: SqlLedger, folder: Path, command: str, by: str, clock: Clock | None = None, source: str = "cli",
           ref: dict[str, Any] | None = None, require_shown: bool = False) -> State:
    """Check and record one decision; returns the state after it. `ref` records where the decision
    came from (a room message: room_id, message_id, sender); a decision whose message_id is already
    recorded is not applied twice. A decision that names `#<digest>` is refused unless that is the
    digest of what it decides on as the run is now; with `require_shown` (every face), one that
    names none is refused too."""
    if not by or len(by) > 200:
        raise UsageError("a decision needs the name of the person making it", "pass --by NAME")
    sentences = current_sentences(folder)
    cmd = parse(command, [s["id"] for s in sentences])
    case = case_of(folder)
    now = utc_iso((clock or ledger.clock).now())

    def decide_on(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
        earlier = [e.payload for e in history if e.type == DECIDED]
        if ref and any(d.get("ref", {}).get("message_id") == ref.get("message_id") for d in earlier):
            return [], []  # redelivered message: already applied
        state = replay(sentences, earlier)
        if state.shipped:
            raise RefusedError("this run has shipped; no more decisions are taken",
                               "start a new run for further changes")
        if cmd.shown is not None or require_shown:
            what = ("set of sentences and their decisions" if cmd.action == "ship"
                    else "set of sentences" if cmd.target == "all" else f"sentence {cmd.target}")
            check_shown(cmd.shown, shown_content(state, cmd.action, cmd.target), what, RELOAD)
        rec: dict[str, Any] = {"schema": DECISION, "seq": len(earlier) + 1, "at": now, "by": by, "source": source,
                               "action": cmd.action, "target": cmd.target}
        if cmd.shown is not None:
            rec["shown"] = cmd.shown
        if ref:
            rec["ref"] = dict(ref)
        if cmd.action == "approve":
            chosen = state.sentences if cmd.target == "all" else [state.get(str(cmd.target))]
            errors = verifier_errors(folder, chosen)
            unverified = {s.id: f"does not verify: {codes(errors[s.id])}" for s in chosen if errors[s.id]}
            if len(unverified) == len(chosen):
                raise RefusedError("cannot approve: " + " | ".join(f"{sid} {why}" for sid, why in unverified.items()),
                                   "edit the sentence until it verifies, or reject it")
            rec["digests"] = {s.id: text_digest(s.text) for s in chosen if s.id not in unverified}
            if unverified:
                rec["unverified"] = unverified
        if cmd.action == "edit":
            rec["text"] = cmd.text
        if cmd.action == "ship":
            problems = blockers(folder, state)
            if problems:
                raise RefusedError("cannot ship: " + " | ".join(problems),
                                   "approve, edit or reject those sentences, then ship again")
        return [NewEvent(DECIDED, rec)], []

    ledger.update(case, decide_on)
    return state_of(ledger, folder)


def state_of(ledger: SqlLedger, folder: Path) -> State:
    """The run's state from its decisions in the ledger."""
    return replay(current_sentences(folder), decisions(ledger, folder))


def exported_state(folder: Path) -> State:
    """The run's state from the exported `decisions.jsonl` beside it (offline checks)."""
    return replay(current_sentences(folder), read_decisions(folder))
