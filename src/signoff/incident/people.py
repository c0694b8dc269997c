"""People deciding through a page: what waits for a person of an organisation in a running incident,
and their decision on exactly what they were shown.

A page shows each draft of the organisation's agent that is not yet decided (a disclosure exactly as
it will cross, a fix request), and each root cause the commander proposed, with the digest of that
content. The person's decision comes back with the digest; `decide` rebuilds the content from the
rooms as they are now and runs `signoff.ledger.approval.approve` on it, which refuses a digest of
anything else (ConflictError: 409, nothing posted). Only then is the decision posted in the room, as
that person, as the exact command the approver (or the commander) prints: `@approver approve
D-PAY-1 #<digest>`. The approver checks it again against the room server's record and signs; the
page is one more face of the same command, never a way around the approver.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signoff.incident.console import Console
from signoff.incident.decisions import shown_disclosure
from signoff.incident.disclosure import APPROVE_LINE, Disclosure, published_text
from signoff.incident.guard import GuardVerdict
from signoff.incident.playbooks.posts import FIX_COMMAND, root_cause_shown
from signoff.incident.remote_approver import check_answers
from signoff.incident.stack import APPROVER, MEDIATOR, SHARED, RunInfo, read_secrets
from signoff.kernel.clock import SystemClock, utc_iso
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.shown import shown_digest
from signoff.ledger import SqlLedger
from signoff.ledger.approval import APPROVE, REFUSE, approve
from signoff.rooms import RoomService
from signoff.rooms.client import HttpUserTransport, InProcessUserTransport, RoomsUserClient

if TYPE_CHECKING:
    from signoff.incident.service import Decide, Write

PROPOSAL = re.compile(r"^Proposed root cause for (INC-[0-9]{4}): (.+)\n")


@dataclass(frozen=True)
class Awaiting:
    """Something a person of `org` decides on, as the page shows it: `ref` names it (D-PAY-1,
    INC-0001-fix-payco, INC-0001), `shown` is the text the person reads (a disclosure exactly as it
    will cross), `digest` the digest of the content the decision binds."""

    org: str
    kind: str
    ref: str
    shown: str
    digest: str
    content: Any

    @property
    def refusable(self) -> bool:
        return self.kind == "disclosure"

    @property
    def prose(self) -> str:
        """A draft disclosure's words without its approve line (what a person redrafts from)."""
        return str(self.content["text"]).rsplit("\n\nApprove with:", 1)[0] if self.kind == "disclosure" else ""


def awaiting(view: Console, org: str) -> list[Awaiting]:
    """What waits for `org`'s people in `view` (a running incident, seen as `org` or as everyone)."""
    if view.recorded or org not in view.names:
        return []
    steps = view.steps
    agent = view.agent(org)
    human = view.approver(org)
    # A command the approver answered "not signed" (its process was down, a digest of other content)
    # decided nothing: the item is offered again while it is unsigned.
    unsigned = {s.row.get("thread") for s in view.lane(org)
                if s.who == APPROVER and str(s.row["text"]).startswith("not signed:")}
    said = [s.row["text"] for s in view.lane(org) if s.who == human and s.row.get("id") not in unsigned]
    signed = {str(s.row["data"].get("d_id")) for s in steps
              if s.kind == "approval_record" and s.row["room"] == f"{org} ledger"}
    out: list[Awaiting] = []
    drafts = {s.row["text"] for s in view.lane(org) if s.who == agent}
    for s in steps:
        if s.kind != "document" or s.lane != org or s.who != agent or not str(s.row["name"]).startswith("D-"):
            continue
        try:
            data = json.loads(s.row["text"])
            d = Disclosure(str(s.row["name"]), str(data["incident"]), org, dict(data["evidence"]), str(data["text"]))
        except (ValueError, KeyError, TypeError):
            continue  # a document the agent mangled is nobody's to approve
        if d.text not in drafts or d.d_id in signed or any(_names(t, d.d_id) for t in said):
            continue
        content = shown_disclosure(d, d.text)
        out.append(Awaiting(org, "disclosure", d.d_id, published_text(d, human or ""), shown_digest(content), content))
    for s in view.lane(org):
        fix = FIX_COMMAND.match(str(s.row["text"]).rstrip().rsplit(": ", 1)[-1])
        if s.who == agent and fix is not None and fix.group(1) not in signed \
                and not any(_names(t, fix.group(1)) for t in said):
            text = str(s.row["text"])
            out.append(Awaiting(org, "fix", fix.group(1), text, shown_digest(text), text))
    for s in view.lane(SHARED):
        hit = PROPOSAL.match(str(s.row["text"])) if s.who == MEDIATOR else None
        if hit is None:
            continue
        confirmed = any(x.who == human and f"confirm root cause {hit.group(1)} " in str(x.row["text"])
                        for x in view.lane(SHARED))
        if not confirmed:
            content = root_cause_shown(hit.group(1), hit.group(2))
            out.append(Awaiting(org, "root_cause", hit.group(1), hit.group(2), shown_digest(content), content))
    return out


def decides_for(view: Console, org: str, person: str) -> bool:
    """Whether `person` is `org`'s approver in the run (the one whose decisions the approver signs)."""
    return view.approver(org) == person


def writes_for(view: Console, org: str, person: str) -> tuple[str, ...]:
    """What `person` may write for `org` from the page: its approver everything (`WRITES`), one of
    its people a report to the commander and a disclosure in their own words (`draft`, which only
    the approver's approval lets cross), anyone else nothing."""
    if view.recorded or view.parties is None or org not in view.parties.keys:
        return ()
    if decides_for(view, org, person):
        return WRITES
    return COLLEAGUE_WRITES if person in view.parties.get(org).people else ()


def _names(text: str, ref: str) -> bool:
    """Whether a person's message decided `ref` already (approved or refused it)."""
    return re.search(rf"\b(approve|refuse|redraft)( fix)? {re.escape(ref)} #", text) is not None


def decide(run_dir: Path, view: Console, cmd: Decide) -> dict[str, Any]:
    """Post `cmd.person`'s decision as the exact command, after checking it names what `view` (read
    now) shows: refused with nothing posted when the person is not the organisation's approver, the
    item is not waiting, the option was not offered, or the digest names other content."""
    if view.recorded:
        raise ConflictError(f"incident run {view.run} is finished", "decide in a running incident")
    if cmd.org not in view.names:
        raise UsageError("not one of the run's organisations", f"use one of: {', '.join(view.names)}")
    human = view.approver(cmd.org)
    if not decides_for(view, cmd.org, cmd.person):
        raise RefusedError(f"{cmd.person} is not {view.names[cmd.org]}'s approver in this incident",
                           f"{human} decides for {view.names[cmd.org]}")
    found = [a for a in awaiting(view, cmd.org) if a.ref == cmd.ref]
    if not found:
        raise NotFoundError(f"nothing of {view.names[cmd.org]} named {cmd.ref!r} waits for a decision",
                            "reload the page: it lists what waits")
    item = found[0]
    options = (APPROVE, REFUSE) if item.refusable else (APPROVE,)
    approval = approve(item.content, cmd.digest, what=f"{item.kind.replace('_', ' ')} {item.ref}", by=cmd.person,
                       at=utc_iso(SystemClock().now()), via="web", option=cmd.option, options=options,
                       fix="reload the page, read what it shows now, and decide on that")
    targets: list[str] = []
    if item.kind == "root_cause":
        room, text = SHARED, f"@incident-commander confirm root cause {item.ref} #{approval.digest}"
    elif not approval.approves:
        room, text = cmd.org, f"refuse {item.ref} #{approval.digest}: not approved by {cmd.person}"
    else:
        verb = "approve fix" if item.kind == "fix" else "approve"
        room, targets, text = cmd.org, [APPROVER], f"{verb} {item.ref} #{approval.digest}"  # @approver: a target
        check_answers(run_dir, cmd.org, view.names[cmd.org])  # an approver process that is down signs nothing
    posted = post_as(run_dir, cmd.person, room, text, targets)
    return {"ref": item.ref, "kind": item.kind, "option": approval.option, "digest": approval.digest,
            "message_id": posted["event_id"]}


MAX_WRITTEN = 1000  # characters a person writes in one message from the page
WRITES = ("report", "fix", "redraft", "draft")
COLLEAGUE_WRITES = ("report", "draft")  # one of the organisation's people, not its approver
CROSSING = ("report", "redraft", "draft")  # what reaches the shared room (a report now, a draft once approved)


def _written(text: str, lines: bool) -> str:
    text = text.strip().replace("\r\n", "\n")
    if not text or len(text) > MAX_WRITTEN:
        raise UsageError(f"write 1 to {MAX_WRITTEN} characters", "shorten the text")
    if any(ord(c) < 32 and c != "\n" for c in text) or (not lines and "\n" in text):
        raise UsageError("the text holds control characters" + ("" if lines else " or line breaks"),
                         "write plain text" + ("" if lines else " on one line"))
    if "Approve with:" in text or text.startswith("@") or APPROVE_LINE.search(text):
        raise UsageError("write your own words only: the approve command and mentions are added for you",
                         "leave out the approve line and any @mention")
    return text


def write(run_dir: Path, view: Console, cmd: Write,
          guard: Callable[[str], GuardVerdict] | None = None) -> dict[str, Any]:
    """A person's own words from the page, posted as that person (the organisation's approver
    writes any of these, one of its people a `report` or a `draft`): a report or request to the
    incident commander (`report`, in the shared room), the fix their organisation will make (`fix`,
    to their agent in their private room: the agent asks for its approval once the commander asks
    for fixes), a draft disclosure in their own words (`redraft`, naming the digest of the draft
    they read: refused as stale if it changed since; the agent drafts it again with the same
    evidence, as a new draft to approve), or a disclosure with no draft before it (`draft`: the
    agent drafts it exactly as written, as a new draft to approve). A disclosure crosses only once
    its approver signed it, through the guard when it is posted; `guard` (the organisation's content
    rules) checks every text that will reach the shared room before anything is posted, so a report,
    which goes there at once, never passes by the guard."""
    if view.recorded:
        raise ConflictError(f"incident run {view.run} is finished", "write in a running incident")
    if cmd.kind not in WRITES:
        raise UsageError(f"{cmd.kind!r} is not something to write here", f"use one of: {', '.join(WRITES)}")
    if cmd.org not in view.names:
        raise UsageError("not one of the run's organisations", f"use one of: {', '.join(view.names)}")
    if cmd.kind not in writes_for(view, cmd.org, cmd.person):
        raise RefusedError(f"{cmd.person} may not write a {cmd.kind} for {view.names[cmd.org]} in this incident",
                           f"{view.approver(cmd.org)} writes for {view.names[cmd.org]}; its people report and "
                           "draft disclosures")
    text = _written(cmd.text, lines=cmd.kind in ("redraft", "draft"))
    if cmd.kind in CROSSING and guard is not None:
        verdict = guard(text)
        if not verdict.allowed:
            raise UsageError(f"{view.names[cmd.org]}'s guard would block this text in the shared room "
                             f"({', '.join(verdict.rules)}); nothing was posted",
                             "leave out code, secrets, customer names and protected values")
    agent = view.agent(cmd.org) or ""
    if cmd.kind == "report":
        posted = post_as(run_dir, cmd.person, SHARED, f"@incident-commander {text}", [])
    elif cmd.kind == "fix":
        posted = post_as(run_dir, cmd.person, cmd.org, f"fix: {text}", [agent])
    elif cmd.kind == "draft":
        posted = post_as(run_dir, cmd.person, cmd.org, f"draft: {text}", [agent])
    else:
        found = [a for a in awaiting(view, cmd.org) if a.ref == cmd.ref and a.kind == "disclosure"]
        if not found:
            raise NotFoundError(f"no draft of {view.names[cmd.org]} named {cmd.ref!r} waits for a decision",
                                "reload the page: it lists what waits")
        read = approve(found[0].content, cmd.digest, what=f"disclosure {cmd.ref}", by=cmd.person,
                       at=utc_iso(SystemClock().now()), via="web", option=APPROVE.id, options=(APPROVE,),
                       fix="reload the page, read the draft as it is now, and redraft that")
        posted = post_as(run_dir, cmd.person, cmd.org, f"redraft {cmd.ref} #{read.digest}: {text}", [agent])
    return {"kind": cmd.kind, "message_id": posted["event_id"]}


def post_as(run_dir: Path, person: str, room: str, text: str, targets: list[str]) -> dict[str, Any]:
    """Post as `person` through the rooms' user API: the run's external server, or (the run's own
    server) a replica of its room service on the run's database, as another process would."""
    info = RunInfo.load(run_dir)
    token = read_secrets(run_dir)[f"user:{person}"]
    named = [info.server_name(t) for t in targets]
    if info.url is not None:
        client = RoomsUserClient(HttpUserTransport(info.url, token))
        try:
            return client.post(info.rooms[room], text, named)
        finally:
            client.close()
    ledger = SqlLedger.from_url(info.db_url)
    try:
        client = RoomsUserClient(InProcessUserTransport(RoomService(ledger), token))
        return client.post(info.rooms[room], text, named)
    finally:
        ledger.close()


__all__ = ["WRITES", "Awaiting", "awaiting", "decide", "decides_for", "post_as", "write", "writes_for"]
