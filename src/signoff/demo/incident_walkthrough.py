"""The whole of part 1 in one process, for `signoff incident run` and `signoff demo incident`.

Reproduce the bug with the real fixture, open an incident with the notary, fingerprint one failing
event on each side through that side's evidence server, disclose each fingerprint through a draft, a
named approval and the guard, let the notary compare them, show that the guard stops a draft and an
altered disclosure, verify the ledgers, and run the fixed fixture. Every step uses the same API part 2
uses; humans are scripted here (the approvals are labelled `simulated`).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from signoff.demo.payco_shopco.fixture import ORGS, load_capture, parties
from signoff.demo.payco_shopco.simulate import simulate
from signoff.incident.approvals import Approver, disclosure_command
from signoff.incident.disclosure import Disclosure, draft, published_text
from signoff.incident.evidence import export_disclosure
from signoff.incident.evidence_server import EvidenceClient, EvidenceStore, LoopbackServer, make_app
from signoff.incident.notary import Comparison, Notary
from signoff.incident.sender import GuardedSender
from signoff.incident.workspace import SHARED_ROOM, Workspace, private_room, verify_ledger
from signoff.incident.workspace_rooms import NOTARY_AGENT
from signoff.kernel.errors import RefusedError
from signoff.kernel.progress import Progress, silent


def approver_for(ws: Workspace, org: str, notary: Notary) -> Approver:
    return Approver(org, ws.parties.get(org).approver, private_room(org), ws.keys.ensure(f"incident-approver-{org}"),
                    ws.approvals(org, ws.keys.ensure(f"incident-approver-{org}")), notary,
                    lambda: ws.guard_file_digest(org), ws.pins()[org])


def disclose(ws: Workspace, org: str, notary: Notary, number: int, evidence: dict[str, Any],
             summary: str, kind: str = "simulated") -> Disclosure:
    """Draft in the private room, approve as the named person (scripted here, so `simulated`), post
    the approved form to the shared room, and export the signed disclosure file."""
    who = ws.parties.get(org)
    d = draft(org, number, notary.current.incident, evidence, summary, prefix=who.prefix)
    private = GuardedSender(org, who.agent, ws.guard(org), ws.rooms)
    draft_msg = private.post(private_room(org), d.text)
    # As the person: the command names the digest of the draft and evidence just shown.
    approval_msg = ws.rooms.post(who.approver, private_room(org), disclosure_command(d))
    record = approver_for(ws, org, notary).approve(d, draft_msg, approval_msg)
    guard = ws.guard(org, current_incident=lambda: notary.current.incident)
    shared = GuardedSender(org, who.agent, guard, ws.rooms)
    shared.post(SHARED_ROOM, published_text(d, record["body"]["approver"]), d)
    export_disclosure(d, record, ws.keys.ensure(f"incident-approver-{org}"), ws.root / "evidence", kind)
    return d


def run_incident(ws: Workspace, fixture: Path | None = None, progress: Progress = silent) -> dict[str, Any]:
    if not ws.is_set_up():
        progress("setting up the guards")
        ws.setup(parties(fixture, ws.captures))
    progress("reproducing: PayCo sends the events to ShopCo")
    buggy = simulate(ws.captures, fixture=fixture)
    notary = Notary()
    issued = notary.open_incident(ws.next_incident())
    ws.rooms.post(NOTARY_AGENT, SHARED_ROOM, f"incident {issued.incident} salt {issued.salt.hex()}")

    captures = {"payco": load_capture(buggy.payco_capture), "shopco": load_capture(buggy.shopco_capture)}
    tokens = {org: secrets.token_urlsafe(24) for org in ORGS}
    ledgers = {org: ws.evidence_ledger(org) for org in ORGS}
    servers = {org: LoopbackServer(make_app(EvidenceStore.of(org, captures[org], ledgers[org]), tokens[org],
                                            lambda: notary.current)) for org in ORGS}
    fingerprints: dict[str, dict[str, Any]] = {}
    refused: dict[str, str] = {}
    with servers["payco"], servers["shopco"]:
        clients = {org: EvidenceClient(servers[org].url, tokens[org]) for org in ORGS}
        try:
            failing = sorted(set(buggy.rejected) & {e["event_id"] for e in clients["shopco"].events()
                                                     if e["status"] == 401})
            target = failing[0]
            progress("fingerprinting the failing event")
            for org in ORGS:
                fingerprints[org] = clients[org].fingerprint(target, issued)
            wrong = EvidenceClient(servers["shopco"].url, tokens["payco"])
            try:
                wrong.summary()
            except RefusedError as exc:
                refused["other_token"] = exc.message
            finally:
                wrong.close()
        finally:
            for c in clients.values():
                c.close()
            for budget_ledger in ledgers.values():
                budget_ledger.close()

    progress("signing and comparing the disclosures")
    disclosures = {}
    for org in ORGS:
        n = len(ws.approvals(org).records()) + 1
        fp = fingerprints[org]
        summary = (f"{org}'s salted fingerprint of failing event {fp['event_id']} under {issued.incident}: "
                   f"{fp['total_bytes']} bytes, {len(fp['fields'])} fields.")
        disclosures[org] = disclose(ws, org, notary, n, {"fingerprint": fp}, summary)
    comparison: Comparison = notary.compare(disclosures["payco"].evidence["fingerprint"],
                                            disclosures["shopco"].evidence["fingerprint"])
    ws.rooms.post(NOTARY_AGENT, SHARED_ROOM, comparison.table())

    blocked = {}
    d = disclosures["payco"]
    guard = ws.guard("payco", current_incident=lambda: notary.current.incident)
    shared = GuardedSender("payco", ws.parties.get("payco").agent, guard, ws.rooms)
    for label, text, disc in (
        ("draft_in_shared_room", d.text, None),
        ("altered_disclosure", published_text(d, ws.parties.get("payco").approver) + "\nAlso, the name was José.", d),
    ):
        try:
            shared.post(SHARED_ROOM, text, disc)
            blocked[label] = "NOT BLOCKED"
        except RefusedError as exc:
            blocked[label] = exc.message
    progress("verifying the ledgers")
    ledger = verify_ledger(ws)
    progress("checking the fix: the events again")
    fixed = simulate(ws.root / "captures-fixed", fixed_shopco=True, fixture=fixture)
    rows = comparison.as_json()
    name_row = next((r for r in rows["rows"] if r["path"] == "data.customer.name"), None)
    ok = (len(buggy.rejected) > 0 and not fixed.rejected and ledger.ok and "other_token" in refused
          and all(v != "NOT BLOCKED" for v in blocked.values()) and name_row is not None
          and name_row["escaped_by"] == ["payco"] and len(comparison.differing) == 1)
    return {
        "ok": ok,
        "kind": "measured",
        "approvals": "simulated (scripted humans)",
        "incident": issued.incident,
        "bug": {"events": len(buggy.accepted) + len(buggy.rejected), "rejected": buggy.rejected},
        "fixed": {"rejected": fixed.rejected, "fix": "ShopCo verifies the raw bytes"},
        "event": fingerprints["payco"]["event_id"],
        "notary": rows,
        "notary_table": comparison.table(),
        "disclosures": [d.d_id for d in disclosures.values()],
        "refused": refused,
        "blocked": blocked,
        "ledger": ledger.as_json(),
        "evidence_files": sorted(str(p) for p in (ws.root / "evidence").glob("*.intoto.json")),
        "root": str(ws.root),
    }
