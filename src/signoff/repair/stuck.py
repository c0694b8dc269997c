"""Moving a stuck case, by its operator: resume it or abandon it.

A case can wait forever on something that will not come: a restart during a hand-off (a Switch
core's buffer lost the fixer's hand-off while the fixer was down) leaves it in FIX_REQUESTED, and a
room opens no other case while one is open. Its operator (the person the room's watch bound, by the
sender id the server writes, or a name that resolves to that sender under `[rooms.people]`) can:

- resume it: the verifier hands the open attempt to the fixer again, as a new message with a new
  receipt (the first hand-off's receipt no longer counts, so a late copy of it is refused);
- abandon it, with a reason: the case ends ABANDONED (final: nothing more is recorded on it, and
  the room can open another case).

Both are recorded on the case with who asked, why and how (`cli` or `room`), and said in the
room. In the room the operator writes `@<verifier> resume <case>` or `@<verifier> abandon <case>
<reason>`; on the command line `signoff repair resume|abandon CASE --operator NAME`.
"""

from __future__ import annotations

import re

from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger
from signoff.repair.case import FINAL, CaseState, case_key, folded, read_case
from signoff.repair.commands import Decision, say

VERBS = ("resume", "abandon")
RESUMABLE = "FIX_REQUESTED"  # waiting on the fixer, which may never have seen its hand-off
_STUCK = re.compile(r"^(resume|abandon)\s+([A-Za-z0-9][\w.-]*)(?:\s+(.+))?$", re.DOTALL)


def parse_stuck(body: str, verifier_name: str) -> tuple[str, str, str] | None:
    """(verb, case id, reason) for `@<verifier> resume|abandon <case> [reason]`, else None."""
    prefix = f"@{verifier_name} "
    if not body.startswith(prefix):
        return None
    m = _STUCK.match(body[len(prefix):].strip())
    if m is None:
        return None
    return m.group(1), m.group(2), (m.group(3) or "").strip()


def refusal(st: CaseState, verb: str, sender: str, reason: str, room_id: str | None = None) -> str | None:
    """Why `sender` may not `verb` the case as it is (asked in `room_id`; None: on the command
    line), or None."""
    case_id = st.case_id
    if verb not in VERBS:
        return f"{verb} refused: the operator can resume or abandon a case."
    if room_id is not None and room_id != st.room_id:
        return f"{verb} refused: commands for {case_id} count only in its case room."
    if sender != st.operator:
        return f"{verb} refused: only the linked operator can {verb} {case_id}."
    if st.state in FINAL:
        return f"{verb} refused: {case_id} is {st.state}, already closed."
    if verb == "abandon" and not reason:
        return f"abandon refused: say why {case_id} is abandoned (the reason is recorded)."
    if verb == "resume" and (st.state != RESUMABLE or not st.open_attempt(st.attempt)):
        return (f"resume refused: {case_id} is {st.state}; only a case waiting on the fixer's hand-off "
                f"({RESUMABLE}, the fixer not having acted) is resumed. Abandon it instead if it is stuck.")
    return None


def decision(st: CaseState, verb: str, sender: str, by_name: str, reason: str, via: str, key: str,
             room_id: str | None = None) -> Decision:
    """What the operator's resume or abandon does to the case: a refusal, or the move."""
    why = refusal(st, verb, sender, reason, room_id)
    who = by_name or sender
    if why is not None:
        return ([NewEvent("repair.command_refused", {"verb": verb, "sender": sender, "via": via, "reason": why,
                                                     "message_id": key})],
                [say(room_id or st.room_id, why, key)] if via == "room" else [])
    record = {"by": sender, "by_name": by_name, "reason": reason, "via": via, "key": key}
    if verb == "abandon":
        return ([NewEvent("repair.abandoned", record)],
                [say(st.room_id, f"{st.case_id} abandoned by {who}: {reason}", key)])
    attempt = st.attempt
    return ([NewEvent("repair.resumed", {**record, "attempt": attempt})],
            [NewJob(f"{st.case_id}:handoff:{attempt}:resume:{st.resumed + 1}", "repair.handoff",
                    {"case_id": st.case_id, "attempt": attempt}),
             say(st.room_id, f"{st.case_id} resumed by {who}: attempt {attempt} is handed to the fixer again.", key)])


def move(ledger: SqlLedger, case_id: str, verb: str, sender: str, by_name: str, reason: str, via: str,
         key: str) -> CaseState:
    """Resume or abandon from the command line: refused with RefusedError (nothing written) unless
    the rules allow it against the case as it is when the decision is written."""
    st = read_case(ledger, case_id)
    why = refusal(st, verb, sender, reason)
    if why is not None:
        fix = "ask the case's operator" if sender != st.operator else "see `signoff repair show " + case_id + "`"
        if verb == "abandon" and not reason:
            raise UsageError(why, "pass --reason TEXT")
        raise RefusedError(why, fix)

    def decide(history: list[Event]) -> Decision:
        now = folded(history)
        if refusal(now, verb, sender, reason) is not None:
            return [], []  # moved meanwhile: the caller reads the case again and says so
        return decision(now, verb, sender, by_name, reason, via, key)

    ledger.update(case_key(case_id), decide, idempotency_key=f"repair:{verb}:{key}")
    after = read_case(ledger, case_id)
    if (verb == "abandon" and after.state != "ABANDONED") or (verb == "resume" and after.resumed == st.resumed):
        raise RefusedError(f"{verb} refused: {case_id} moved meanwhile (now {after.state})",
                           "read it again with `signoff repair show` and decide on what it is now")
    return after
