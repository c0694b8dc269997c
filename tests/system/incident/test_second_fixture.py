"""A second cross-organisation bug, configured, not built in (tests/data/incident/ledgerly-railside):
Ledgerly (Go) signs HTML-safe JSON (`&` as `\\u0026`), Railside (Ruby) verifies what it writes
again. Its organisations, guards and evidence come from its `incident.toml`; its captures are in
both forms; the fingerprints, the notary and the signed disclosures work on its JSON as on the
demo's. The people's approvals go through the workspace's room server as `ana` and `bo`."""

from __future__ import annotations

import secrets
from pathlib import Path

from signoff.demo.incident_walkthrough import disclose
from signoff.incident.captures import load_captures
from signoff.incident.evidence_server import EvidenceClient, EvidenceStore, LoopbackServer, make_app
from signoff.incident.guard import Post
from signoff.incident.notary import Notary
from signoff.incident.parties import Parties
from signoff.incident.workspace import SHARED_ROOM, Workspace, verify_ledger
from signoff.trust import KeyStore

FIXTURE = Path(__file__).parents[2] / "data" / "incident" / "ledgerly-railside"


def test_a_second_bug_between_two_other_organisations(tmp_path: Path) -> None:
    parties = Parties.load(FIXTURE / "incident.toml")
    ws = Workspace(tmp_path / "incident", KeyStore(tmp_path / "keys"))
    ws.setup(parties)
    notary = Notary()
    issued = notary.open_incident(ws.next_incident())
    tokens = {org: secrets.token_urlsafe(24) for org in parties.keys}
    ledgers = {org: ws.evidence_ledger(org) for org in parties.keys}
    servers = {o.key: LoopbackServer(make_app(EvidenceStore.of(o.key, load_captures(o.captures), ledgers[o.key]),
                                              tokens[o.key], lambda: notary.current)) for o in parties}
    try:
        with servers["ledgerly"], servers["railside"]:
            clients = {org: EvidenceClient(servers[org].url, tokens[org]) for org in parties.keys}
            rejected = [e["event_id"] for e in clients["ledgerly"].events() if e["status"] == 401]
            assert rejected == ["txn-1003", "txn-1005"]
            fps = {org: c.fingerprint(rejected[0], issued) for org, c in clients.items()}
            for c in clients.values():
                c.close()
    finally:
        for ledger in ledgers.values():
            ledger.close()
    disclosures = {org: disclose(ws, org, notary, 1, {"fingerprint": fps[org]},
                                 f"{parties.get(org).name}'s salted fingerprint of {rejected[0]}.")
                   for org in parties.keys}
    assert [d.d_id for d in disclosures.values()] == ["D-LEDGERLY-1", "D-RAILSIDE-1"]
    comparison = notary.compare(fps["ledgerly"], fps["railside"])
    assert [(r.path, r.delta, r.escaped_by) for r in comparison.differing] == [("memo", 5, ("ledgerly",))]
    assert comparison.findings() == ["memo: 5 bytes longer on ledgerly's side; \\u-escaped by ledgerly only; "
                                     "fits 1 ASCII character(s) written as \\uXXXX at +5 bytes each"]
    report = verify_ledger(ws)
    assert report.ok and report.disclosures_crossed == 2, report.all_problems()
    # Each guard guards its own code and the protected values, whatever the language.
    go_line = "mac := hmac.New(sha256.New, signingSecret)"
    ruby_line = 'expected = "v1=" + OpenSSL::HMAC.hexdigest("SHA256", @key, payload)'
    for org, own, other in (("ledgerly", go_line, ruby_line), ("railside", ruby_line, go_line)):
        guard = ws.guard(org, logged=False)
        assert "code_line" in guard.check(Post(SHARED_ROOM, f"ours: {own}")).rules
        assert guard.check(Post(SHARED_ROOM, f"theirs: {other}")).allowed
        assert "protected_value" in guard.check(Post(SHARED_ROOM, "account ac 0913 55 again")).rules
        assert "customer_name" in guard.check(Post(SHARED_ROOM, "ask margarethe oyelaran")).rules
    assert "secret" in ws.guard("ledgerly", logged=False).check_text("key whk_live_a1b2c3d4e5f6g7").rules
    ws.close()
