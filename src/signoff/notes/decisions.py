"""Human decisions on a run, pure: `approve S1`, `approve all`, `reject S2`, `edit S3 <text>`, `ship`.

`decide(state, Decide) -> Decision` is the rule (no files, no ledger, no clock): the notes service
(`signoff.notes.service`) folds the run's ledger case (`notes.run.<digest of review.json>`) over
the reviewed sentences it read from the run folder, runs the verifier on the texts the decision
needs, and passes both in. Decisions are replayed in order with last-decision-wins: `approve all`,
then `edit S3 ...`, then `reject S3` leaves S3 rejected. An approval records the digest of the
exact text approved; an edit replaces the text and so voids any earlier approval of that sentence,
and the edited text is verified again. `ship` is decided only when every kept (not rejected)
sentence is approved and passes verification; otherwise it is refused with the reason for each
sentence, and nothing is written.

A decision names what the person saw (`#<digest>` after the id, `all`, or `ship`; see
`signoff.kernel.shown`): the sentence's text and citations for one sentence, every sentence's for
`approve all`, and every sentence with its status for `ship`. It is bound by the one approval
primitive (`signoff.ledger.approval.approve`) against the run as it is when the decision is
written: a decision that names no digest, or the digest of other content (a page loaded before
someone else's edit), is refused, never recorded against text the person did not see.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from signoff.kernel.errors import ConflictError, RefusedError, UsageError
from signoff.kernel.shown import short, shown_digest
from signoff.ledger.aggregate import NOTHING, Decision
from signoff.ledger.approval import Option, approve
from signoff.notes.draft import MAX_TEXT
from signoff.notes.model import DECISION, Decided, RoomRef, SentenceState, State, text_digest

_COMMAND = re.compile(r"^\s*(approve|reject|edit|ship)\b\s*(.*)$", re.IGNORECASE | re.DOTALL)
_SID = re.compile(r"^(S[1-9][0-9]*)\b\s*(.*)$", re.DOTALL)
_SHOWN = re.compile(r"^#(\S*)\s*(.*)$", re.DOTALL)  # `#<digest of what was shown>` before any text
USAGE = "use: approve S1 | approve all | reject S2 | edit S3 <new text> | ship (each may name #<digest shown>)"
RELOAD = "reload the page (or run `signoff notes status RUN`) and review the text as it is now"


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




# -- the decision ---------------------------------------------------------------------------------

# What each decision means, as `signoff.ledger.approval` records it.
OPTIONS = (Option(id="approve", label="Approve", meaning="approve"),
           Option(id="reject", label="Reject", meaning="refuse"),
           Option(id="edit", label="Edit", meaning="edit"),
           Option(id="ship", label="Ship", meaning="ship"))

Errors = Mapping[tuple[str, str], list[dict[str, Any]]]  # the verifier's errors per (sentence id, text)


@dataclass(frozen=True)
class Decide:
    """One person's decision, as the service hands it to `decide`: the command, who and when, the
    face it came through, where in a room (`ref`), and the verifier's errors on the texts the
    decision needs (`errors`, computed by the service from the run's snapshot and facts)."""

    command: Command
    by: str
    at: str
    via: str
    errors: Errors
    ref: RoomRef | None = None


def codes(errors: list[dict[str, Any]]) -> str:
    return "; ".join(f"{e['code']} {e['token']!r}" for e in errors)


def needs_checking(state: State, command: Command) -> list[SentenceState]:
    """The sentences whose current text the verifier must check before `command` is decided."""
    if command.action == "approve":
        return list(state.sentences) if command.target == "all" else [state.get(str(command.target))]
    if command.action == "ship":
        return [s for s in state.sentences if s.status != "rejected"]
    return []


def _errors(errors: Errors, s: SentenceState) -> list[dict[str, Any]]:
    found = errors.get((s.id, s.text))
    if found is None:  # the text changed after the service checked it: decide on what was checked only
        raise ConflictError(f"sentence {s.id} changed while the decision was made; nothing was recorded", RELOAD)
    return found


def blockers_of(state: State, errors: Errors) -> list[str]:
    """Why `state` may not ship (empty when it may), given the verifier's errors on its kept texts."""
    kept = [s for s in state.sentences if s.status != "rejected"]
    if not kept:
        return ["no sentence is kept: there is nothing to ship"]
    problems = []
    for s in kept:
        why = []
        if s.status != "approved":
            why.append("not approved" + (" since its edit" if s.edited else ""))
        why += [f"{e['code']} {e['token']!r}" for e in _errors(errors, s)]
        if why:
            problems.append(f"{s.id}: " + "; ".join(why))
    return problems


def decide(state: State, d: Decide) -> Decision:
    """The decision `d` on a run in `state`: a `notes.decided` event, NOTHING for a room message
    already decided on, or a refusal (nothing recorded). Pure: the verifier's results and the
    clock's time come in `d`. The content the person was shown is bound by `approve`: a decision
    whose digest names other content than the run holds now, or none, is refused."""
    cmd = d.command
    if d.ref is not None and d.ref.message_id in state.message_ids:
        return NOTHING  # a redelivered room message: already applied
    if state.shipped:
        raise RefusedError("this run has shipped; no more decisions are taken", "start a new run for further changes")
    what = ("set of sentences and their decisions" if cmd.action == "ship"
            else "set of sentences" if cmd.target == "all" else f"sentence {cmd.target}")
    approval = approve(shown_content(state, cmd.action, cmd.target), cmd.shown, what=what, by=d.by, at=d.at,
                       via=d.via, option=cmd.action, options=OPTIONS, fix=RELOAD)
    digests: dict[str, str] | None = None
    unverified: dict[str, str] | None = None
    if cmd.action == "approve":
        chosen = needs_checking(state, cmd)
        failing = {s.id: f"does not verify: {codes(_errors(d.errors, s))}" for s in chosen if _errors(d.errors, s)}
        if len(failing) == len(chosen):
            raise RefusedError("cannot approve: " + " | ".join(f"{sid} {why}" for sid, why in failing.items()),
                               "edit the sentence until it verifies, or reject it")
        digests = {s.id: text_digest(s.text) for s in chosen if s.id not in failing}
        unverified = failing or None
    if cmd.action == "ship":
        problems = blockers_of(state, d.errors)
        if problems:
            raise RefusedError("cannot ship: " + " | ".join(problems),
                               "approve, edit or reject those sentences, then ship again")
    return Decision.of(Decided.model_validate({
        "schema": DECISION, "seq": state.count + 1, "at": d.at, "by": d.by, "source": d.via, "action": cmd.action,
        "target": cmd.target, "shown": cmd.shown, "ref": d.ref, "digests": digests, "unverified": unverified,
        "text": cmd.text if cmd.action == "edit" else None, "approval": approval}))
