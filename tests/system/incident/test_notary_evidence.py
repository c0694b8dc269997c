"""Fingerprints, the notary's table and the evidence servers, over real loopback HTTP."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.demo.payco_shopco.fixture import customer_names, load_capture
from signoff.demo.payco_shopco.simulate import SimulationResult
from signoff.incident.evidence_server import EvidenceClient, EvidenceStore, LoopbackServer, make_app
from signoff.incident.fingerprint import fingerprint
from signoff.incident.notary import Notary
from signoff.incident.wirecheck import scan
from signoff.kernel.errors import NotFoundError, RefusedError, UsageError
from signoff.kernel.tls import tls_context
from signoff.ledger import SqlLedger
from tests.support.web import HTTP_WAIT


@pytest.fixture()
def servers(buggy_run: SimulationResult, tmp_path: Path) -> Iterator[dict[str, Any]]:
    notary = Notary()
    notary.open_incident()
    tokens = {"payco": secrets.token_urlsafe(16), "shopco": secrets.token_urlsafe(16)}
    caps = {"payco": load_capture(buggy_run.payco_capture), "shopco": load_capture(buggy_run.shopco_capture)}
    ledgers = {org: SqlLedger.from_url(f"sqlite:///{tmp_path / f'{org}-fingerprints.db'}") for org in tokens}
    running = {org: LoopbackServer(make_app(EvidenceStore.of(org, caps[org], ledgers[org]), tokens[org],
                                            lambda: notary.current))
               for org in tokens}
    with running["payco"], running["shopco"]:
        clients = {org: EvidenceClient(running[org].url, tokens[org]) for org in tokens}
        yield {"notary": notary, "tokens": tokens, "servers": running, "clients": clients}
        for c in clients.values():
            c.close()
    for ledger in ledgers.values():
        ledger.close()


def test_fingerprint_carries_no_value_and_no_unsalted_hash(buggy_run: SimulationResult) -> None:
    captured = load_capture(buggy_run.payco_capture)[6]
    salt = secrets.token_bytes(32)
    fp = fingerprint(captured.event_id, captured.raw, salt, "INC-0001")
    text = json.dumps(fp, ensure_ascii=False)
    for leaf in scan(captured.raw):
        raw_slice = captured.raw[leaf.offset:leaf.offset + leaf.length]
        unsalted = (hashlib.sha256(raw_slice).hexdigest(), hashlib.sha256(str(leaf.value).encode()).hexdigest())
        for secret_form in unsalted:
            assert secret_form not in text
        if isinstance(leaf.value, str) and leaf.path != "id" and len(leaf.value) >= 4:
            assert leaf.value not in text and raw_slice.decode() not in text
    assert hashlib.sha256(captured.raw).hexdigest() not in text
    # The same bytes under another salt share no hash with this fingerprint.
    other = fingerprint(captured.event_id, captured.raw, secrets.token_bytes(32), "INC-0002")
    assert not {f["hash"] for f in fp["fields"]} & {f["hash"] for f in other["fields"]}


def test_keys_that_may_be_data_are_salted_in_paths() -> None:
    fp = fingerprint("e1", '{"by_name": {"José Álvarez": 1}}'.encode(), b"s" * 32, "INC-1")
    assert "José" not in json.dumps(fp, ensure_ascii=False)
    assert fp["fields"][0]["path"].startswith("by_name[#")


def test_notary_table_for_every_failing_event(servers: dict[str, Any], buggy_run: SimulationResult) -> None:
    notary, clients = servers["notary"], servers["clients"]
    names = {f"evt_{i + 1:04d}": n for i, n in enumerate(customer_names())}
    # Five per salt: the first five failing events under this incident, the sixth under a new one.
    for n, event_id in enumerate(buggy_run.rejected):
        if n == 5:
            notary.open_incident()
        issued = notary.current
        cmp = notary.compare(clients["payco"].fingerprint(event_id, issued),
                             clients["shopco"].fingerprint(event_id, issued))
        accented = sum(1 for c in names[event_id] if not c.isascii())
        assert [r.path for r in cmp.differing] == ["data.customer.name"]
        row = cmp.differing[0]
        assert row.delta == 4 * accented and row.escaped_by == ("payco",) and row.non_ascii_by == ("shopco",)
        assert len(cmp.matching) == len(cmp.rows) - 1 and not cmp.digest_match
        assert cmp.total_a - cmp.total_b == 4 * accented
        assert f"{4 * accented} bytes longer on payco's side" in cmp.table()


def test_notary_refuses_fingerprints_from_an_old_salt(servers: dict[str, Any], buggy_run: SimulationResult) -> None:
    notary, clients = servers["notary"], servers["clients"]
    old = notary.current
    a = clients["payco"].fingerprint(buggy_run.rejected[0], old)
    b = clients["shopco"].fingerprint(buggy_run.rejected[0], old)
    notary.open_incident()
    with pytest.raises(RefusedError, match="not under incident"):
        notary.compare(a, b)
    with pytest.raises(RefusedError, match="salt refused"):
        clients["payco"].fingerprint(buggy_run.rejected[0], old)  # the server asks the notary too


def test_notary_salts_are_fresh_and_never_reused() -> None:
    notary = Notary()
    a, b = notary.open_incident(), notary.open_incident()
    assert a.salt != b.salt and len(a.salt) == 32 and notary.current == b
    with pytest.raises(UsageError):
        notary.open_incident(a.incident)


def test_other_organisations_token_is_refused(servers: dict[str, Any]) -> None:
    url = servers["servers"]["shopco"].url
    wrong = EvidenceClient(url, servers["tokens"]["payco"])
    try:
        with pytest.raises(RefusedError, match="403"):
            wrong.summary()
        with pytest.raises(RefusedError, match="403"):
            wrong.fingerprint("evt_0007", servers["notary"].current)
    finally:
        wrong.close()
    assert httpx.get(f"{url}/v1/summary", verify=tls_context(), timeout=HTTP_WAIT).status_code == 401


def test_sixth_fingerprint_under_one_salt_is_refused(servers: dict[str, Any], buggy_run: SimulationResult) -> None:
    client, issued = servers["clients"]["payco"], servers["notary"].current
    ids = buggy_run.accepted[:6]
    for event_id in ids[:5]:
        client.fingerprint(event_id, issued)
    client.fingerprint(ids[0], issued)  # asking again for the same event is not a new one
    with pytest.raises(RefusedError, match="at most 5"):
        client.fingerprint(ids[5], issued)
    fresh = servers["notary"].open_incident()
    assert client.fingerprint(ids[5], fresh)["event_id"] == ids[5]


def test_salt_not_issued_by_the_notary_is_refused(servers: dict[str, Any]) -> None:
    client, cur = servers["clients"]["payco"], servers["notary"].current
    from signoff.incident.notary import IssuedSalt

    forged = IssuedSalt(cur.incident, secrets.token_bytes(32), cur.issued_at)
    with pytest.raises(RefusedError, match="salt refused"):
        client.fingerprint("evt_0007", forged)


def test_server_answers_only_counts_lengths_and_fingerprints(servers: dict[str, Any]) -> None:
    client = servers["clients"]["payco"]
    summary, events = client.summary(), client.events()
    assert summary == {"org": "payco", "events": 60, "by_status": {"200": 54, "401": 6}}
    assert set(events[0]) == {"event_id", "status", "length"}
    fp = client.fingerprint("evt_0007", servers["notary"].current)
    body = json.dumps([summary, events, fp], ensure_ascii=False)
    for name in customer_names():
        assert name not in body and name.split()[-1] not in body
    assert "@example.com" not in body
    with pytest.raises(NotFoundError):
        client.fingerprint("evt_9999", servers["notary"].current)
