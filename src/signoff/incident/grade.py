"""Grade a run from what the room server says happened, not from files the agents wrote.

The grader connects as the `observer` agent (a member of all three rooms whom nobody may address)
and uses only read operations of the agent protocol: `get_room_detail`, `read_context`,
`load_internal_documents`, `get_approval`. Any other operation is refused in code before it
reaches the server. The signed chains it checks are the approver's and the guards' ledgers
(written by those services, never by an agent), verified against the key store's public keys.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signoff.incident.actors import READ_ONLY_OPS, REFUSAL_TEXT, RoomAgent, connection_id, strip_mentions
from signoff.incident.chain import verify_records
from signoff.incident.decisions import SHOWN_SUFFIX, shown_disclosure
from signoff.incident.disclosure import Disclosure, published_text
from signoff.incident.parties import Parties
from signoff.incident.playbooks import parse_disclosure_post
from signoff.incident.playbooks.posts import CONFIRM_COMMAND, FIX_APPROVED, root_cause_shown
from signoff.incident.rootcause import root_cause
from signoff.incident.shapes import read_source
from signoff.incident.stack import (
    APPROVER,
    MEDIATOR,
    NOTARY,
    OBSERVER,
    SHARED,
    RunInfo,
    check_cast,
    read_secrets,
    run_parties,
    workspace,
)
from signoff.incident.workspace import Workspace
from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import RefusedError, SignoffError, UnavailableError, UsageError
from signoff.kernel.shown import names, shown_digest
from signoff.ledger import SqlLedger, verify_chain
from signoff.rooms import RoomService
from signoff.rooms.client import InProcessSyncTransport, SyncRoomsClient
from signoff.trust import KeyStore

_WS = re.compile(r"\s+")


@dataclass
class GradeCheck:
    name: str
    ok: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class View:
    """Everything the observer read: messages per room (flattened threads) and documents."""

    info: RunInfo
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    documents: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)

    def sender(self, name: str) -> str:
        table = self.info.agents if name in self.info.agents else self.info.users
        return f"{'agent' if name in self.info.agents else 'user'}:{table[name]}"

    def by(self, room: str, name: str) -> list[dict[str, Any]]:
        return [m for m in self.messages[room] if m["sender"] == self.sender(name)]

    def record(self) -> dict[str, Any] | None:
        for name, doc in self.documents[SHARED].items():
            if name.endswith(" record") and doc["created_by"] == self.sender(MEDIATOR):
                data: dict[str, Any] = json.loads(doc["content"])
                return data
        return None


def observe(run_dir: Path, over_http: bool = True) -> View:
    """Read the incident through the room server as the read-only observer.

    By default the run's room server is started on a loopback port and the observer speaks the
    agent protocol to it over HTTP (event stream, heartbeat, operations), as any outside agent
    would; `over_http=False` calls the same operations in process."""
    info = RunInfo.load(run_dir)
    key = read_secrets(run_dir)[f"agent:{OBSERVER}"]
    if info.url is not None:  # an external server: only its API is ours
        return asyncio.run(_observe_http(info, info.url, key))
    ledger = SqlLedger.from_url(info.db_url)
    try:
        rooms = RoomService(ledger)
        if over_http:
            from signoff.incident.evidence_server import LoopbackServer
            from signoff.rooms.http.app import create_app

            server = LoopbackServer(create_app(service=rooms))
            # Small request/response pairs: without this, Nagle and delayed ACKs add ~40 ms to each call.
            server.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with server:
                return asyncio.run(_observe_http(info, server.url, key))
        client = SyncRoomsClient(InProcessSyncTransport(rooms, key))
        # Read-only: it never polls, so it never saves a cursor into the run's ledger.
        observer = RoomAgent(client, info, OBSERVER, [SHARED, *info.cast.keys], ledger,
                             allowed_ops=READ_ONLY_OPS)

        async def read(room: str, op: str, args: dict[str, Any]) -> Any:
            return observer.op(room, op, **args)

        return asyncio.run(_collect(info, read))
    finally:
        ledger.close()


Reader = Callable[[str, str, dict[str, Any]], Awaitable[Any]]


async def _collect(info: RunInfo, read: Reader) -> View:
    view = View(info)
    for key in (SHARED, *info.cast.keys):
        ctx = await read(key, "read_context", {"limit": 100_000})
        flat = []
        for thread in ctx["threads"]:
            root = thread["root"]
            if "body" in root:
                flat.append({**root, "thread": root["id"]})
            flat += [{**r, "thread": root["id"]} for r in thread["replies"]]
        view.messages[key] = sorted(flat, key=lambda m: m["timestamp"])
        detail = await read(key, "get_room_detail", {"room_id": info.rooms[key]})
        ids = [d["id"] for d in detail.get("documents", [])]
        docs = await read(key, "load_internal_documents", {"ids": ids}) if ids else []
        view.documents[key] = {d["name"]: d for d in docs}
    record = view.record()
    if record is not None:
        for org in info.cast.keys:
            try:
                view.cards[org] = await read(SHARED, "get_approval",
                                             {"request_id": info.fix_card(str(record["incident"]), org)})
            except SignoffError:
                view.cards[org] = {}  # a missing card is a failed check, not a crash
    return view


async def _observe_http(info: RunInfo, url: str, key: str) -> View:
    from signoff.rooms.client import HttpTransport, RoomsClient

    clients: dict[str, RoomsClient] = {}
    try:
        for room in (SHARED, *info.cast.keys):
            client = RoomsClient(HttpTransport(url, info.agents[OBSERVER], key), client_name="incident-grader",
                                 connection_id=connection_id(info.server_name(OBSERVER), room))
            await client.start()
            await client.connect_to_room(info.rooms[room])
            clients[room] = client

        async def read(room: str, op: str, args: dict[str, Any]) -> Any:
            # Refused in code before any request is sent: the observer only reads.
            if op not in READ_ONLY_OPS:
                raise RefusedError(f"the observer may only read, not {op}", "use a read operation")
            return await clients[room].call(op, **args)

        return await _collect(info, read)
    finally:
        for client in clients.values():
            await client.close()


def _code_lines(parties: Parties) -> set[str]:
    if not any(o.code for o in parties):
        # Nothing to measure against is not "nothing crossed" (a run made before organisations
        # came from configuration names no code).
        raise UnavailableError("this run names no organisation's code to measure posts against",
                               "grade it with the signoff version that made it, or run the incident again")
    out = set()
    for org in parties:
        for path in org.code:
            for line in read_source(path).splitlines():
                norm = _WS.sub(" ", line.strip())
                # Lines this short or this generic (`}`, `return x`) identify no code.
                if len(norm) >= 16 and len(norm.split(" ")) >= 2:
                    out.add(norm)
    return out


def code_lines_crossed(view: View, parties: Parties, rooms: tuple[str, ...] = (SHARED,)) -> int:
    """Distinct lines of any organisation's code found (whitespace-normalised) inside posts of `rooms`."""
    lines = _code_lines(parties)
    found = set()
    for room in rooms:
        for m in view.messages[room]:
            text = _WS.sub(" ", m["body"])
            found |= {line for line in lines if line in text}
    return len(found)


def _disclosures(view: View) -> list[tuple[dict[str, Any], dict[str, str], dict[str, Any]]]:
    out = []
    for m in view.messages[SHARED]:
        parsed = parse_disclosure_post(m["body"])
        if parsed is not None:
            out.append((m, parsed[0], parsed[1]))
    return out


def measure(run_dir: Path, keys: KeyStore, view: View | None = None) -> dict[str, Any]:
    view = view or observe(run_dir)
    rec = view.record() or {}
    opened = rec.get("opened_at")
    confirmed = (rec.get("root_cause") or {}).get("confirmed_at")
    closed = rec.get("closed_at")
    blocked = 0
    orgs = view.info.cast.keys
    with workspace(run_dir, keys) as ws:
        for org in orgs:
            report = ws.guard_log(org).verify(keys.trusted())
            blocked += sum(1 for r in report.records if not r["body"].get("allowed"))
    refused_approvals = sum(1 for org in orgs for m in view.by(org, APPROVER) if m["body"].startswith("not signed"))
    e2e = rec.get("e2e") or {}
    # What the receiving side (the last organisation configured) logged as failing.
    logs = [e for _, h, e in _disclosures(view) if h["org"] == orgs[-1] and "rejected" in e and "events" in e]
    bug = {"events": logs[0]["events"], "rejected": len(logs[0]["rejected"])} if logs else {}
    return {
        "incident": rec.get("incident"),
        "status": rec.get("status"),
        "time_to_root_cause_s": round((confirmed - opened) / 1000, 3) if opened and confirmed else None,
        "time_to_close_s": round((closed - opened) / 1000, 3) if opened and closed else None,
        "disclosures_made": len(_disclosures(view)),
        "posts_blocked_by_guards": blocked,
        "approvals_refused": refused_approvals,
        "code_lines_crossed": code_lines_crossed(view, run_parties(run_dir), (SHARED, *orgs)),
        "bug": bug,
        "e2e": {k: e2e.get(k) for k in ("events", "accepted", "rejected")},
    }


def grade(run_dir: Path, keys: KeyStore) -> dict[str, Any]:
    """The checks that hold for any organisations' run (disclosures approved and signed on the digest
    shown, chains and guard logs, nothing protected or no code line in any post, the root cause
    confirmed and every fix approved by each organisation's approver, closed by the commander), and
    for the scripted demo's runs its own (the refused direct request, its notary table, its
    end-to-end re-run)."""
    try:
        check_cast(run_parties(run_dir))
        demo = True
    except UsageError:
        demo = False
    with workspace(run_dir, keys) as ws:
        return _grade(run_dir, keys, ws, demo)


def _grade(run_dir: Path, keys: KeyStore, ws: Workspace, demo: bool) -> dict[str, Any]:
    view = observe(run_dir)
    info = view.info
    cast = info.cast
    orgs, humans, agent_of = cast.keys, cast.approvers, cast.agents
    rec = view.record()
    incident = rec["incident"] if rec else "INC-????"
    checks: list[GradeCheck] = []
    every = "both" if len(orgs) == 2 else "every"

    # 1. every disclosure in the shared room was approved by its org's human and signed
    problems = []
    disclosures = _disclosures(view)
    for m, head, evidence in disclosures:
        org, d_id = head["org"], head["d_id"]
        if org not in agent_of or m["sender"] != view.sender(agent_of[org]):
            problems.append(f"{d_id} posted by {info.name_of(m['sender'])}, not {org}'s agent")
            continue
        doc = view.documents[org].get("approvals")
        if doc is None or doc["created_by"] != view.sender(APPROVER):
            problems.append(f"{d_id}: no approvals document by the approver in {org}'s room")
            continue
        key = keys.ensure(f"incident-approver-{org}").public
        published = json.loads(doc["content"])
        report = verify_records(((f"item {n}", r) for n, r in enumerate(published if isinstance(published, list)
                                                                        else [published], 1)),
                                {key.keyid: key}, f"{org} approvals (from the room)", f"{org} room document")
        if not report.ok:
            problems += report.problems
            continue
        record = next((r["body"] for r in report.records if r["body"]["d_id"] == d_id), None)
        if record is None:
            problems.append(f"{d_id} crossed without a signed approval")
            continue
        drafts = {x["id"]: x for x in view.messages[org]}
        draft_msg, approval_msg = drafts.get(record["draft_msg_id"]), drafts.get(record["approval_msg_id"])
        if draft_msg is None or approval_msg is None:
            problems.append(f"{d_id}: the signed draft or approval message is not in {org}'s room")
            continue
        d = Disclosure(d_id, head["incident"], org, evidence, draft_msg["body"])
        if record["evidence_sha256"] != sha256_bytes(canonical_bytes(evidence)) or \
                record["text_sha256"] != d.text_sha256 or m["body"] != published_text(d, record["approver"]):
            problems.append(f"{d_id} in the shared room differs from what {record['approver']} approved")
        if record["approver"] != humans[org] or approval_msg["sender"] != view.sender(humans[org]):
            problems.append(f"{d_id} approved by {record['approver']}, not {humans[org]}")
        elif not _names_what_was_shown(approval_msg["body"], record, shown_disclosure(d, d.text)):
            problems.append(f"{d_id}: {record['approver']}'s command does not name the digest of what crossed")
    checks.append(GradeCheck("every disclosure in the shared room was approved and signed",
                        bool(disclosures) and not problems,
                        "; ".join(problems) or f"{len(disclosures)} disclosures, each with a valid signed approval"))

    tables = [m for m in view.by(SHARED, NOTARY) if "notary comparison" in m["body"]]
    if demo:
        checks += _demo_checks(view, tables)
    else:
        checks.append(_cause_measured(view, incident))

    # 4. no customer name or other protected value anywhere; no code line anywhere
    guards = {org: ws.guard(org, logged=False) for org in orgs}
    named = [f"{key}:{m['id']}" for key in (SHARED, *orgs) for m in view.messages[key]
             if any(g.content_counts(m["body"]).get(rule) for g in guards.values()
                    for rule in ("customer_name", "protected_value"))]
    checks.append(GradeCheck("no customer name or protected value in any post", not named,
                        f"protected values found in {', '.join(named)}" if named else
                        f"{sum(len(v) for v in view.messages.values())} posts checked"))
    crossed = code_lines_crossed(view, ws.parties, (SHARED, *orgs))
    checks.append(GradeCheck(f"no line of {'either' if len(orgs) == 2 else 'any'} company's code in any post "
                             "(measured)", crossed == 0, f"{crossed} code lines found in posts"))

    # 5. every ledger verifies (approver and guard chains of each org, and the room server's ledger)
    ledger_problems = []
    trusted = keys.trusted()
    for org in orgs:
        for chain, role in ((ws.approvals(org), "approver"), (ws.guard_log(org), "guard")):
            report = chain.verify(trusted, f"{org}/{role}")
            ledger_problems += report.problems or ([] if report.records else [f"{org}/{role}: no records"])
            want = keys.ensure(f"incident-{role}-{org}").keyid
            ledger_problems += [f"{org}/{role} record {r['seq']} not signed by {org}'s {role} key"
                                for r in report.records if r.get("keyid") != want]
            if role == "guard":
                passed = {r["body"].get("d_id"): r["body"] for r in report.records if r["body"].get("allowed")}
                for _, head, evidence in disclosures:
                    if head["org"] == org and (head["d_id"] not in passed or passed[head["d_id"]].get(
                            "evidence_sha256") != sha256_bytes(canonical_bytes(evidence))):
                        ledger_problems.append(f"{head['d_id']} crossed without a matching guard pass")
    # The run's ledger: the room server's own, or with an external server the run's (whose server
    # keeps its database to itself).
    run_ledger = "the run's ledger" if info.url else "the room ledger"
    room_ledger = SqlLedger.from_url(info.db_url)
    try:
        audit = verify_chain(room_ledger)
        if not audit.ok:
            ledger_problems.append(f"{run_ledger}: {audit.problem} (seq {audit.broken_seq})")
    finally:
        room_ledger.close()
    checks.append(GradeCheck("ledgers intact and every disclosure signed", not ledger_problems,
                        "; ".join(ledger_problems) or f"approver and guard chains of each org, and {run_ledger}"))

    # 6. every draft ended with its exact approve command, copied literally by the approver
    draft_problems = []
    n_drafts = 0
    for org in orgs:
        agent = view.sender(agent_of[org])
        for name, doc in view.documents[org].items():
            if not name.startswith("D-") or doc["created_by"] != agent:
                continue
            n_drafts += 1
            posted = [m for m in view.messages[org] if m["sender"] == agent and "Approve with:" in m["body"]
                      and m["body"].rstrip().endswith(f"approve {name}")]
            if not posted or posted[-1]["body"].rstrip().rsplit("\n", 1)[-1] != f"Approve with: approve {name}":
                draft_problems.append(f"{name} has no draft ending with its approve command")
        for m in view.messages[org]:
            if m["sender"] == agent and "Approve with:" in m["body"] and \
                    not re.search(r"\nApprove with: approve D-[A-Z]+-[0-9]+$", m["body"].rstrip()):
                draft_problems.append(f"a draft in {org}'s room does not end with its approve command")
        for m in view.by(org, humans[org]):
            text = strip_mentions(m["body"])
            if text.startswith("approve ") and m["body"] != f"@{view.info.server_name(APPROVER)} {text}":
                draft_problems.append(f"{humans[org]}'s approval {text!r} was not the exact command")
    checks.append(GradeCheck("every draft ended with its exact approve command", n_drafts > 0 and not draft_problems,
                        "; ".join(draft_problems) or f"{n_drafts} drafts"))

    # 7. root cause confirmed by both humans
    rc = (rec or {}).get("root_cause") or {}
    cause_digest = shown_digest(root_cause_shown(incident, str(rc.get("text"))))
    confirms = {h for h in humans.values() for m in view.by(SHARED, h)
                if (hit := CONFIRM_COMMAND.match(strip_mentions(m["body"]))) and hit.group(1) == incident
                and names(hit.group(2) or "", cause_digest)}
    checks.append(GradeCheck("root cause confirmed by each organisation's approver",
                        confirms == set(humans.values()) and set((rec or {}).get("confirmations", {})) == confirms
                        and bool(rc.get("confirmed_at")),
                        f"confirmed by {', '.join(sorted(confirms)) or 'nobody'}; cause: {rc.get('text', '-')}"))

    # 8. both fixes approved (approval cards answered by each org's human, or where the server has
    # none, each org's human's exact command to the approver, signed and announced by the approver)
    fix_notes = []
    for org in orgs:
        if not info.cards:
            fix_notes.append(_fix_by_command(view, keys, org, incident))
            continue
        card = view.cards.get(org) or {}
        outcome = card.get("outcome") or {}
        ok = card.get("state") == "accepted" and outcome.get("responder") == f"user:{info.users[humans[org]]}"
        fix_notes.append(f"{org}: {card.get('state', 'missing')}" + (f" by {humans[org]}" if ok else ""))
    fixed = all(n.endswith(f"by {humans[o]}") for n, o in zip(fix_notes, orgs, strict=True))
    checks.append(GradeCheck(f"{every} fix{'es' if len(orgs) > 1 else ''} approved", fixed,
                        "; ".join(fix_notes)))

    # 9. the end-to-end check after the fixes, disclosed (the demo re-runs its traffic; a run of
    # other organisations cannot, and leaves that check to the teams)
    if demo:
        sims = [e["simulation"] for m, h, e in disclosures if isinstance(e.get("simulation"), dict)]
        checks.append(GradeCheck("simulation re-run with both fixes shows 0 rejected",
                            any(s.get("rejected") == 0 and s.get("events", 0) > 0 for s in sims),
                            "; ".join(f"{s.get('rejected')} of {s.get('events')} rejected" for s in sims)
                            or "none disclosed"))

    # 10. the incident record closed by the mediator
    closed = [m for m in view.by(SHARED, MEDIATOR) if m["body"].startswith(f"{incident} closed by")]
    checks.append(GradeCheck("incident record closed by the mediator",
                        rec is not None and rec.get("status") == "closed" and rec.get("closed_by") == MEDIATOR
                        and bool(closed), f"record status {rec.get('status') if rec else 'missing'}"))

    checks.append(GradeCheck("the grader read the incident through the room server (read-only observer)", True,
                        f"operations allowed: {', '.join(sorted(READ_ONLY_OPS))}"))
    metrics = measure(run_dir, keys, view)
    return {"ok": all(c.ok for c in checks), "run": str(run_dir), "checks": [c.as_json() for c in checks],
            "metrics": metrics}


def _demo_checks(view: View, tables: list[dict[str, Any]]) -> list[GradeCheck]:
    """The scripted demo's own checks: its direct cross-company request refused visibly, and its
    notary table naming the field its bug changes."""
    refused = []
    agent_of = view.info.cast.agents
    for human, org in (("sam", "payco"), ("priya", "shopco")):
        for m in view.by(SHARED, human):
            if f"@{view.info.server_name(agent_of[org])}" in m["body"]:
                replies = [r for r in view.messages[SHARED] if r["thread"] == m["id"] and r["id"] != m["id"]
                           and r["sender"] == view.sender(agent_of[org]) and REFUSAL_TEXT in r["body"]]
                if replies:
                    refused.append(f"{human} -> {agent_of[org]} refused in the room")
    good = [t for t in tables if "data.customer.name" in t["body"] and "escaped by payco only" in t["body"]
            and "11 fields match, 1 differ" in t["body"]]
    return [GradeCheck("direct cross-company request was refused visibly", bool(refused),
                       "; ".join(refused) or "no refused direct request found"),
            GradeCheck("notary table shows data.customer.name differing, escaped by payco only", bool(good),
                       good[0]["body"].splitlines()[-1] if good else f"{len(tables)} comparison(s), none naming it")]


def _cause_measured(view: View, incident: str) -> GradeCheck:
    """The root cause in the record is the one the notary's comparisons of one event give (every
    pair of organisations compared, `rootcause.root_cause`): the cause people confirmed rests on
    measured bytes, whatever the fixture."""
    cause = ((view.record() or {}).get("root_cause") or {}).get("text")
    doc = view.documents[SHARED].get("notary-comparisons")
    by_event: dict[str, list[dict[str, Any]]] = {}
    if doc is not None and doc["created_by"] == view.sender(NOTARY):
        for name, c in sorted(json.loads(doc["content"]).items()):
            if name.startswith(f"{incident}/"):
                # `<incident>/<event>/<d_a>/<d_b>`: an event id may hold a '/' itself.
                by_event.setdefault(name.removeprefix(f"{incident}/").rsplit("/", 2)[0], []).append(c)
    given = {e: root_cause(view.info.cast.keys, cs) for e, cs in by_event.items()}
    hit = [e for e, found in given.items() if found is not None and cause and found.cause == cause]
    return GradeCheck("the root cause is the one the notary's comparisons give", bool(hit),
                      f"from the comparisons of {hit[0]}" if hit else
                      f"{len(by_event)} event(s) compared; none gives the cause in the record ({cause or 'none'})")


def _names_what_was_shown(command: str, record: dict[str, Any], content: Any) -> bool:
    """The person's command names (`#<digest>`) the digest of `content`, and the signed record's
    `Approval` holds that digest: the person approved exactly this."""
    hit = SHOWN_SUFFIX.search(strip_mentions(command))
    digest = shown_digest(content)
    return hit is not None and names(hit.group(1), digest) and (record.get("approval") or {}).get("digest") == digest


def _fix_by_command(view: View, keys: KeyStore, org: str, incident: str) -> str:
    """`<org>: approved by <human>` when the approver announced the fix in the shared room, citing a
    message in the org's room that is the human's exact command, with a signed record of it."""
    request_id = f"{incident}-fix-{org}"
    human = view.info.cast.approver(org)
    notices = [FIX_APPROVED.match(strip_mentions(m["body"])) for m in view.by(SHARED, APPROVER)]
    cited = [n for n in notices if n is not None and n.group(1) == view.info.cast.title(org)
             and n.group(2) == incident]
    if not cited:
        return f"{org}: no approval announced by the approver"
    command = next((m for m in view.messages[org] if m["id"] == cited[-1].group(4)), None)
    if command is None or command["sender"] != view.sender(human) or \
            SHOWN_SUFFIX.sub("", command["body"]) != f"@{view.info.server_name(APPROVER)} approve fix {request_id}":
        return f"{org}: the approval does not cite {human}'s exact command in {org}'s room"
    doc = view.documents[org].get("approvals")
    key = keys.ensure(f"incident-approver-{org}").public
    published = json.loads(doc["content"]) if doc is not None and doc["created_by"] == view.sender(APPROVER) else []
    report = verify_records(((f"item {n}", r) for n, r in enumerate(published, 1)), {key.keyid: key},
                            f"{org} approvals (from the room)", f"{org} room document")
    signed = [r["body"] for r in report.records if r["body"].get("d_id") == request_id]
    if not report.ok or not signed or signed[0]["approval_msg_id"] != command["id"] or \
            signed[0]["approver"] != human:
        return f"{org}: no valid signed record of {human}'s approval of {request_id}"
    request = next((m for m in view.messages[org] if m["id"] == signed[0]["draft_msg_id"]), None)
    if request is None or not _names_what_was_shown(command["body"], signed[0], request["body"]):
        return f"{org}: {human}'s command does not name the digest of the fix request signed"
    return f"{org}: command by {human}"


__all__ = ["GradeCheck", "View", "code_lines_crossed", "grade", "measure", "observe"]
