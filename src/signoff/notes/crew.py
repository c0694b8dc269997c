"""Notes' scout, writer and editor as room agents, each its own process on the agent runtime
(`signoff.rooms.client.AgentLoop`), handing work over by addressed, receipt-checked messages.

    person  -> @notes-scout notes v1.0..v1.1
    scout   -> @notes-writer draft RUN facts.json sha256:...       (snapshot and facts from git)
    writer  -> @notes-editor review RUN draft.json sha256:...
    editor  -> @notes-writer revise RUN review.r0.json sha256:...   (only when a sentence was rejected)
    writer  -> @notes-editor review RUN draft.r1.json sha256:...
    editor  -> the room: RUN is reviewed; people decide through the listener (`signoff notes room`)

A hand-off counts only when the message an agent received is exactly the one its sender recorded
(case `notes.handoffs.<run>`): the server-assigned id, the addressed flag, the room, the sender as
the server wrote it and the text (`handoff_matches`). The sender records what it is about to hand
over before it posts (so a receiver that sees the post first waits for the receipt instead of
refusing it) and the receipt right after. A command typed or copied by anybody else has another
message id and sender and is refused in its thread. The text names only which file to work from
and its digest; the numbers are recomputed (see `signoff.notes.steps`). Who may ask the scout for
notes is the server's authenticated sender, bound to a person (`Identities`), never a name in a
message.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import SignoffError, UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import Ledger
from signoff.notes.model import HandedOff, HandingOff, Handoffs, ReceiptBody, handoffs_fold
from signoff.notes.run import DRAFT_FILE, FACTS_FILE, REVISED_FILE
from signoff.notes.steps import (
    FIRST_ROUND_FILE,
    Handoff,
    edit,
    handoff_of,
    revise,
    run_folder,
    scout,
    write_draft,
)
from signoff.rooms.client import AgentLoop, Identities
from signoff.rooms.domain.receipts import Receipt, handoff_matches

SCOUT, WRITER, EDITOR = "notes-scout", "notes-writer", "notes-editor"
ROLES = (SCOUT, WRITER, EDITOR)
# Who hands each verb to whom.
ROUTE = {"draft": (SCOUT, WRITER), "review": (WRITER, EDITOR), "revise": (EDITOR, WRITER)}
_TAG = re.compile(r" \[ref [0-9a-f]{10}\]$")
_REQUEST = re.compile(r"^notes(?: (\S+))?$")
RECEIPT_WAIT = 30.0  # seconds a receiver waits for a receipt its sender announced


@dataclass(frozen=True)
class Crew:
    """The agents' names on the server, by role (`[rooms.roles.notes-scout] name = ...`)."""

    names: Mapping[str, str]

    def name(self, role: str) -> str:
        return self.names.get(role, role)


def check_options(role: str, repo: Path | None) -> None:
    if role not in ROLES:
        raise UsageError(f"unknown notes agent {role!r}", f"use one of: {', '.join(ROLES)}")
    if role in (SCOUT, EDITOR) and repo is None:
        raise UsageError(f"the {role} reads git", "pass --repo PATH")
    if repo is not None and not repo.is_dir():
        raise UsageError(f"repository not found: {repo}", "pass --repo with the path of a git work tree")


def handoffs_case(run: str) -> str:
    return f"notes.handoffs.{run}"


def command_of(body: str, name: str) -> str | None:
    """The command after the leading mention of `name`, without the runtime's send tag."""
    prefix = f"@{name} "
    if not body.startswith(prefix):
        return None
    return _TAG.sub("", body[len(prefix):]).strip()


def handoffs(ledger: Ledger, run: str) -> list[dict[str, Any]]:
    """Every hand-off of a run, announced or sent: `{key, from, to, text, receipt?}` in order."""
    return list(handoffs_fold.over(Handoffs(run), ledger.read(handoffs_case(run))).by_key.values())


def _record(ledger: Ledger, run: str, event: HandingOff | HandedOff) -> None:
    case = handoffs_case(run)
    ledger.append(case, None, [event.new_event()], idempotency_key=f"{case}:{event.TYPE}:{event.key}")


class NotesAgent:
    """One of the three; `handle` is the runtime's handler."""

    def __init__(self, role: str, settings: Settings, ledger: Ledger, room_id: str, crew: Crew,
                 identities: Identities | None = None, repo: Path | None = None, writer_role: str = "writer",
                 script: str = "default") -> None:
        check_options(role, repo)
        if role == SCOUT and identities is None:
            raise UsageError("the scout needs to know who may ask for notes", "bind people under [rooms.people]")
        self.role, self.settings, self.ledger, self.room_id, self.crew = role, settings, ledger, room_id, crew
        self.identities, self.repo, self.writer_role, self.script = identities, repo, writer_role, script
        self.name = crew.name(role)
        self.done: list[str] = []  # runs this process finished its part of (for callers and tests)

    async def handle(self, loop: AgentLoop, env: dict[str, Any]) -> None:
        p = env.get("payload") or {}
        if env.get("type") != "message" or env.get("room_id") != self.room_id or p.get("addressed") is not True:
            return
        command = command_of(str(p.get("body", "")), self.name)
        if command is None:
            return
        message_id = str(p.get("message_id"))
        try:
            if self.role == SCOUT:
                await self._request(loop, env, command)
            else:
                await self._handoff(loop, env, command)
        except SignoffError as exc:
            await self._reply(loop, message_id, f"not done ({command[:200]}): {exc.message}")
            raise

    # -- the scout: a person asks -------------------------------------------------------------

    async def _request(self, loop: AgentLoop, env: dict[str, Any], command: str) -> None:
        p = env["payload"]
        assert self.identities is not None and self.repo is not None
        person = self.identities.who(str(p.get("sender", "")))
        if person is None or person.kind != "user":
            raise UsageError("only a person bound to this workflow may ask for release notes",
                             "bind them under [rooms.people]")
        m = _REQUEST.match(command)
        if m is None:
            raise UsageError("not a request", "write: notes A..B (a range of this repository)")
        rev_range = m.group(1)  # checked by git (`rev-parse`, after --end-of-options) in the snapshot
        # Named by the request it answers: a redelivered request finds its run again.
        run = "notes-" + canonical_digest({"room": self.room_id, "message": str(p["message_id"])})[:12]
        folder = run_folder(self.settings, run)
        if self._sent("draft", run) is None:
            await asyncio.to_thread(scout, self.repo, rev_range, folder, self.settings)
        await self._hand(loop, handoff_of("draft", folder, FACTS_FILE), str(p["message_id"]))
        await self._reply(loop, str(p["message_id"]), f"run {run}: snapshot and facts taken from git; "
                                                       f"the writer has them")
        self.done.append(run)

    # -- writer and editor: a hand-off arrives --------------------------------------------------

    async def _handoff(self, loop: AgentLoop, env: dict[str, Any], command: str) -> None:
        handoff = Handoff.parse(command)
        if handoff is None:
            raise UsageError("not a hand-off", "the notes agents take work only from each other")
        sender, receiver = ROUTE[handoff.verb]
        if receiver != self.role:
            raise UsageError(f"{handoff.verb} is not work for the {self.role}", f"hand it to the {receiver}")
        record = await self._recorded(handoff, env)
        if record is None or record["from"] != sender:
            raise UsageError("this message is not a hand-off the notes agents recorded",
                             "only the agent that did the previous step can hand work over")
        folder = run_folder(self.settings, handoff.run)
        thread = str(env["payload"]["message_id"])
        if self.role == WRITER:
            if self._sent("review", handoff.run, handoff.file) is None:
                step = write_draft if handoff.verb == "draft" else revise
                await asyncio.to_thread(step, folder, handoff, self.settings, self.writer_role, self.script)
            out = DRAFT_FILE if handoff.verb == "draft" else REVISED_FILE
            await self._hand(loop, handoff_of("review", folder, out), thread, source=handoff.file)
            return
        assert self.repo is not None
        if handoff.file == DRAFT_FILE and self._sent("revise", handoff.run, handoff.file) is not None:
            result: Handoff | dict[str, Any] = handoff_of("revise", folder, FIRST_ROUND_FILE)  # a redelivery
        else:
            result = await asyncio.to_thread(edit, folder, handoff, self.repo, self.settings)
        if isinstance(result, Handoff):
            await self._hand(loop, result, thread, source=handoff.file)
            return
        rejected = sum(s["status"] == "rejected" for s in result["sentences"])
        # Keyed: said once, however often the last hand-off is redelivered.
        await loop.send(self.room_id, f"release notes {handoff.run} are reviewed: {len(result['sentences'])} "
                        f"sentences, {rejected} rejected, after {len(result['rounds'])} round(s). Decide by "
                        f"addressing the notes agent (approve all, reject S2, edit S3 ..., ship); it answers with "
                        f"the text each decides on and the command, with its #digest, that decides on exactly it.",
                        key=f"notes:reviewed:{handoff.run}", thread_id=thread)
        self.done.append(handoff.run)

    # -- hand-offs: announce, post, record; and check on arrival ---------------------------------

    def _sent(self, verb: str, run: str, source: str | None = None) -> dict[str, Any] | None:
        """This role's sent hand-off of `verb` for `run` (from `source`), if any."""
        for r in handoffs(self.ledger, run):
            if r["from"] == self.role and r["text"].startswith(f"{verb} ") and r.get("receipt") \
                    and r.get("source") == source:
                return r
        return None

    async def _hand(self, loop: AgentLoop, handoff: Handoff, thread: str, source: str | None = None) -> None:
        to = ROUTE[handoff.verb][1]
        key = f"{handoff.verb}:{handoff.run}:{source or ''}"
        announced = HandingOff.model_validate({"key": key, "from": self.role, "to": to, "text": handoff.text(),
                                               "source": source})
        await asyncio.to_thread(_record, self.ledger, handoff.run, announced)
        receipt = await loop.send(self.room_id, handoff.text(), key=f"notes:{key}", targets=[self.crew.name(to)],
                                  thread_id=thread)
        await asyncio.to_thread(_record, self.ledger, handoff.run,
                                HandedOff(key=key, receipt=ReceiptBody.model_validate(receipt.to_dict())))

    async def _recorded(self, handoff: Handoff, env: dict[str, Any]) -> dict[str, Any] | None:
        """The sender's record of exactly this message, once its receipt is recorded: waits (at most
        RECEIPT_WAIT) only while a matching hand-off is announced and has no receipt yet."""
        deadline = asyncio.get_running_loop().time() + RECEIPT_WAIT
        while True:
            announced = [r for r in handoffs(self.ledger, handoff.run) if r["text"] == handoff.text()]
            for r in announced:
                if r.get("receipt") and handoff_matches(env, Receipt.from_dict(r["receipt"])):
                    return r
            waiting = any(not r.get("receipt") for r in announced)
            if not waiting or asyncio.get_running_loop().time() > deadline:
                return None
            await asyncio.sleep(0.05)

    async def _reply(self, loop: AgentLoop, message_id: str, text: str) -> None:
        try:
            await loop.send(self.room_id, text[:4000], key=f"notes:reply:{message_id}", thread_id=message_id)
        except SignoffError:
            pass  # the ledger is the record; a reply that cannot be posted changes nothing

