"""Approvals that count, signed records, and tampering found and named by verify-ledger."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from signoff.demo.incident_walkthrough import approver_for, disclose
from signoff.incident.decisions import shown_disclosure
from signoff.incident.disclosure import Disclosure, draft, published_text
from signoff.incident.notary import Notary
from signoff.incident.workspace import SHARED_ROOM, Workspace, private_room, verify_ledger
from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UnavailableError, UsageError
from signoff.kernel.shown import short, shown_digest
from signoff.ledger import SqlLedger
from signoff.rooms.domain.decisions import Message
from signoff.trust import KeyStore
from tests.system.incident import tamper

EVIDENCE = {"rows": [{"path": "data.customer.name", "delta": 8, "escaped_by": ["payco"]}]}


def _draft(notary: Notary, n: int = 1) -> Disclosure:
    return draft("payco", n, notary.current.incident, EVIDENCE, f"Finding {n}: data.customer.name differs by 8 bytes.",
                 prefix="PAY")


def _msgs(ws: Workspace, d: Disclosure, sender: str = "priya", room: str | None = None,
          text: str | None = None) -> tuple[Message, Message]:
    """The draft as payco's agent posts it, and the approval as `sender` posts it: both read back from
    the room server, so ids, rooms and senders are the server's."""
    m1 = ws.rooms.post("payco-agent", private_room("payco"), d.text)
    m2 = ws.rooms.post(sender, room or private_room("payco"), text if text is not None else _shown_command(d))
    assert (m1.sender, m2.sender) == ("payco-agent", sender)
    return m1, m2


def test_draft_ends_with_its_exact_approve_command() -> None:
    d = draft("payco", 3, "INC-0001", EVIDENCE, "summary", prefix="PAY")
    assert d.d_id == "D-PAY-3" and d.text.endswith("approve D-PAY-3")
    with pytest.raises(UsageError, match="approve command"):
        Disclosure("D-PAY-3", "INC-0001", "payco", EVIDENCE, "no command").check()
    with pytest.raises(UsageError):
        Disclosure("D-SHOP-3", "INC-0001", "payco", EVIDENCE, "x\napprove D-SHOP-3").check()


def test_signed_record_binds_everything(workspace: Workspace) -> None:
    notary = Notary()
    notary.open_incident()
    d = _draft(notary)
    m1, m2 = _msgs(workspace, d)
    record = approver_for(workspace, "payco", notary).approve(d, m1, m2)
    body = record["body"]
    assert body["evidence_sha256"] == sha256_bytes(canonical_bytes(EVIDENCE))
    assert body["text_sha256"] == sha256_bytes(d.text.encode())
    assert (body["d_id"], body["incident"], body["salt"]) == (d.d_id, notary.current.incident,
                                                              notary.current.salt.hex())
    assert (body["approver"], body["sender"], body["draft_msg_id"], body["approval_msg_id"]) == (
        "priya", "payco-agent", m1.msg_id, m2.msg_id)
    assert record["prev"] == "0" * 64 and record["seq"] == 1 and body["time"]
    second = approver_for(workspace, "payco", notary).approve(_draft(notary, 2), *_msgs(workspace, _draft(notary, 2)))
    assert second["prev"] != "0" * 64 and second["seq"] == 2


@pytest.mark.parametrize(("case", "match"), [
    ("wrong_sender", "does not count"),
    ("other_orgs_approver", "does not count"),
    ("wrong_room", "count only in"),
    ("paraphrased", "exact command"),
    ("stale_incident", "not the notary's current incident"),
    ("guard_changed", "differs from its pin"),
    ("other_org", "this is payco's approver"),
])
def test_approver_refuses(workspace: Workspace, case: str, match: str) -> None:
    notary = Notary()
    notary.open_incident()
    d = _draft(notary)
    sender, room, text = "priya", None, None
    if case == "wrong_sender":
        sender = "payco-agent"
    elif case == "other_orgs_approver":
        sender, room = "sam", SHARED_ROOM  # the server keeps sam out of payco-internal (tested below)
    elif case == "wrong_room":
        room = SHARED_ROOM
    elif case == "paraphrased":
        text = "yes, approve it"
    elif case == "stale_incident":
        notary.open_incident()
    elif case == "guard_changed":
        path = workspace.guard_config_path("payco")
        path.write_bytes(path.read_bytes().replace(b'"approver":"priya"', b'"approver":"payco-agent"'))
    elif case == "other_org":
        d = draft("shopco", 1, notary.current.incident, EVIDENCE, "x", prefix="SHOP")
    m1, m2 = _msgs(workspace, d, sender, room, text)
    with pytest.raises(RefusedError, match=match):
        approver_for(workspace, "payco", notary).approve(d, m1, m2)
    assert workspace.approvals("payco").records() == []  # nothing signed


def _crossed(ws: Workspace, n: int = 3) -> Notary:
    notary = Notary()
    notary.open_incident()
    for i in range(1, n + 1):
        disclose(ws, "payco", notary, i, {**EVIDENCE, "i": i}, f"Finding {i}: data.customer.name is longer.")
    disclose(ws, "shopco", notary, 1, EVIDENCE, "Our side verifies 16 bytes for that field.")
    return notary


def test_intact_ledgers_verify(workspace: Workspace) -> None:
    _crossed(workspace)
    report = verify_ledger(workspace)
    assert report.ok, report.all_problems()
    assert report.disclosures_crossed == 4


def test_edited_record_is_named(workspace: Workspace) -> None:
    _crossed(workspace)
    tamper.edit(workspace.records_db_path("payco"), "payco", "approvals", 2, '"approver":"priya"',
                '"approver":"mallory"')
    problems = verify_ledger(workspace).all_problems()
    assert any("payco/approvals record 2" in p and "signature does not verify (edited)" in p for p in problems)
    assert any("payco records ledger" in p and "altered" in p for p in problems)  # the ledger's own chain too


def test_deleted_record_is_named(workspace: Workspace) -> None:
    _crossed(workspace)
    tamper.delete(workspace.records_db_path("payco"), "payco", "approvals", 2)
    problems = verify_ledger(workspace).all_problems()
    assert any("record(s) 2 missing (deleted)" in p for p in problems)
    assert any("D-PAY-2 crossed to the shared room" in p and "no signed approval" in p for p in problems)


def test_deleting_the_last_record_is_caught_by_the_cross_check(workspace: Workspace) -> None:
    _crossed(workspace)
    tamper.delete(workspace.records_db_path("payco"), "payco", "approvals", 3)
    problems = verify_ledger(workspace).all_problems()
    assert any("D-PAY-3 crossed to the shared room" in p for p in problems)
    assert any("payco's guard passed D-PAY-3 but no signed approval" in p for p in problems)


def test_reordered_records_are_named(workspace: Workspace) -> None:
    _crossed(workspace)
    tamper.swap(workspace.records_db_path("payco"), "payco", "guard-log", 2, 3)
    problems = verify_ledger(workspace).all_problems()
    assert any("payco/guard-log" in p and "reordered" in p for p in problems)


def test_resigned_record_with_another_key_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    _crossed(workspace)
    forger = KeyStore(tmp_path / "forger").ensure("mallory")
    records = workspace.approvals("shopco").records()
    tamper.delete_all(workspace.records_db_path("shopco"), "shopco", "approvals")
    forged = workspace.approvals("shopco", forger)
    for rec in records:
        forged.append({**rec["body"], "approver": "mallory"})
    trusted = {forger.keyid: forger.public}
    assert forged.verify(trusted).ok  # internally consistent ...
    problems = verify_ledger(workspace).all_problems()  # ... but not by a key this workspace trusts
    assert any("shopco/approvals record 1" in p and "not trusted" in p for p in problems)


def test_shared_room_disclosure_swapped_after_approval_is_named(workspace: Workspace) -> None:
    _crossed(workspace)
    # Someone with write access to the room server's database swaps the evidence of a crossed post.
    with sqlite3.connect(workspace.root / "rooms.db") as conn:
        changed = conn.execute("UPDATE rooms_messages SET body = replace(body, '\"i\":1', '\"i\":7') "
                               "WHERE body LIKE '[disclosure D-PAY-1 %'").rowcount
    assert changed == 1
    problems = verify_ledger(workspace).all_problems()
    assert any("D-PAY-1 in the shared room differs" in p for p in problems)


def test_a_disclosure_posted_by_anyone_but_the_orgs_agent_is_named(workspace: Workspace) -> None:
    notary = _crossed(workspace, 1)
    d = draft("payco", 1, notary.current.incident, {**EVIDENCE, "i": 1}, "Finding 1: data.customer.name is longer.",
              prefix="PAY")
    workspace.rooms.post("sam", SHARED_ROOM, published_text(d, "priya"))  # not through payco's guarded sender
    problems = verify_ledger(workspace).all_problems()
    assert any("D-PAY-1 in the shared room was posted by sam, not by payco's agent" in p for p in problems)


def test_the_room_server_keeps_people_out_of_other_organisations_rooms(workspace: Workspace) -> None:
    with pytest.raises(RefusedError):
        workspace.rooms.post("sam", private_room("payco"), "approve D-PAY-1")
    with pytest.raises(RefusedError):
        workspace.rooms.post("shopco-agent", private_room("payco"), "hello")


def _shown_command(d: Disclosure) -> str:
    """What priya types for the draft she read: its command naming the digest of the draft and evidence."""
    return f"{d.approve_command} #{short(shown_digest(shown_disclosure(d, d.text)))}"


def test_an_approval_without_the_digest_of_what_was_shown_signs_nothing_and_names_the_command(
        workspace: Workspace) -> None:
    notary = Notary()
    notary.open_incident()
    d = _draft(notary)
    m1, m2 = _msgs(workspace, d, text=d.approve_command)  # `approve D-PAY-1`, as the draft says
    with pytest.raises(UsageError, match="names no digest of what was shown") as asked:
        approver_for(workspace, "payco", notary).approve(d, m1, m2)
    assert f"message {m1.msg_id}" in asked.value.message
    assert asked.value.fix == f"to approve exactly this, send: {_shown_command(d)}"
    assert workspace.approvals("payco").records() == []


@pytest.mark.parametrize("change", ["draft_text", "evidence", "older_draft"])
def test_an_approval_of_what_was_shown_signs_nothing_once_it_changed(workspace: Workspace, change: str) -> None:
    """The attacker (the org's agent) changes the draft after priya read it and before her command
    arrives: what is there now is not what she approved, so nothing is signed."""
    notary = Notary()
    notary.open_incident()
    seen = _draft(notary)
    if change == "evidence":  # same draft text, the evidence document edited behind it
        now = Disclosure(seen.d_id, seen.incident, "payco", {**EVIDENCE, "note": "and the raw payload"}, seen.text)
    else:  # a new draft message under the same id (older_draft: priya approves the first of two she saw)
        now = draft("payco", 1, notary.current.incident, EVIDENCE, "Finding 1: the whole payload is attached.",
                    prefix="PAY")
    if change == "older_draft":
        workspace.rooms.post("payco-agent", private_room("payco"), seen.text)
    m1 = workspace.rooms.post("payco-agent", private_room("payco"), now.text)
    for command in (seen.approve_command, _shown_command(seen)):  # as the draft said; as the approver showed it
        m2 = workspace.rooms.post("priya", private_room("payco"), command)
        with pytest.raises((UsageError, ConflictError)) as refused:
            approver_for(workspace, "payco", notary).approve(now, m1, m2)
        assert "changed since it was shown" in refused.value.message or "names no digest" in refused.value.message
        assert workspace.approvals("payco").records() == []  # nothing signed
    # The honest path: the command for what is there now signs it.
    m3 = workspace.rooms.post("priya", private_room("payco"), _shown_command(now))
    assert approver_for(workspace, "payco", notary).approve(now, m1, m3)["body"]["d_id"] == "D-PAY-1"


def test_replaying_an_approval_with_other_content_is_refused(workspace: Workspace) -> None:
    notary = _crossed(workspace, 1)
    d = draft("payco", 1, notary.current.incident, {"other": True}, "Finding 1: something else.", prefix="PAY")
    with pytest.raises(RefusedError, match="already approved with different content"):
        approver_for(workspace, "payco", notary).approve(d, *_msgs(workspace, d))


def test_signed_disclosure_files_verify_and_tampering_fails(workspace: Workspace) -> None:
    from signoff.trust import verify_file

    _crossed(workspace, 1)
    path = workspace.root / "evidence" / "D-PAY-1.intoto.json"
    trusted = workspace.keys.trusted()
    report = verify_file(path, trusted)
    assert report.ok and report.kind == "simulated" and "approved by priya" in report.notes[0]
    # Re-signing an edited statement with a key nobody trusts does not help.
    import base64 as b64

    from signoff.trust import write_evidence

    env = json.loads(path.read_bytes())
    st = json.loads(b64.b64decode(env["payload"]))
    st["predicate"]["disclosure"]["text"] = st["predicate"]["disclosure"]["text"].replace("longer", "shorter")
    forged = write_evidence(st, KeyStore(workspace.root / "forger").ensure("eve"), workspace.root,
                            path=workspace.root / "forged.intoto.json")
    assert not verify_file(forged, trusted).ok
    # Even signed by a trusted key, the predicate check catches the edit.
    resigned = write_evidence(st, workspace.keys.ensure("incident-approver-payco"), workspace.root,
                              path=workspace.root / "resigned.intoto.json")
    bad = verify_file(resigned, trusted)
    assert not bad.ok and "text differs from what was approved" in (bad.problem or "")


def test_approver_service_over_http(workspace: Workspace) -> None:
    from signoff.incident.approver_service import ApproverClient, approver_app
    from signoff.incident.evidence_server import LoopbackServer

    notary = Notary()
    notary.open_incident()
    approver = approver_for(workspace, "payco", notary)
    d = _draft(notary)
    with LoopbackServer(approver_app(approver, "room-server-token")) as server:
        client = ApproverClient(server.url, "room-server-token")
        try:
            assert client.public_key()["keyid"] == approver.public.keyid
            with pytest.raises(RefusedError, match="does not count"):
                client.approve(d, *_msgs(workspace, d, sender="payco-agent"))
            # A digest of other content than the draft now: 409, nothing signed; none at all: 400.
            with pytest.raises(ConflictError, match="changed since it was shown"):
                client.approve(d, *_msgs(workspace, d, text=f"{d.approve_command} #{'0' * 12}"))
            with pytest.raises(UsageError, match="names no digest"):
                client.approve(d, *_msgs(workspace, d, text=d.approve_command))
            assert workspace.approvals("payco").records() == []
            record = client.approve(d, *_msgs(workspace, d))
            assert record["body"]["d_id"] == "D-PAY-1" and client.record("D-PAY-1") == record
            with pytest.raises(UsageError):
                client.approve(Disclosure("D-PAY-2", d.incident, "payco", EVIDENCE, "no command"),
                               *_msgs(workspace, d))
            # One wire shape: the refusal's fix crosses the wire as {detail, fix}.
            with pytest.raises(NotFoundError, match="no approval record for D-NONE") as missing:
                client.record("D-NONE")
            assert missing.value.fix == "approve the draft first"
            raw = client.http.get("/v1/records/D-NONE")
            assert raw.status_code == 404 and set(raw.json()) == {"detail", "fix"}
        finally:
            client.close()
        intruder = ApproverClient(server.url, "guessed")
        try:
            with pytest.raises(RefusedError, match="caller token refused"):
                intruder.approve(d, *_msgs(workspace, d))
        finally:
            intruder.close()
    assert workspace.approvals("payco").verify(workspace.keys.trusted()).ok


def test_approver_client_reads_the_status_before_the_body() -> None:
    """A proxy or a crashed service answers with a page that is not JSON: the client still raises the
    error that status means, with the page's text, instead of failing to parse it."""
    from fastapi import FastAPI
    from fastapi.responses import PlainTextResponse

    from signoff.incident.approver_service import ApproverClient
    from signoff.incident.evidence_server import LoopbackServer

    proxy = FastAPI()

    @proxy.get("/v1/records/{d_id}")
    def gateway(d_id: str) -> PlainTextResponse:
        return PlainTextResponse("<html>502 Bad Gateway</html>", status_code=502)

    with LoopbackServer(proxy) as server:
        client = ApproverClient(server.url, "room-server-token")
        try:
            with pytest.raises(UnavailableError, match="502 Bad Gateway"):
                client.record("D-PAY-1")
        finally:
            client.close()


def test_appenders_racing_on_one_chain_take_turns(workspace: Workspace) -> None:
    from signoff.incident.chain import Chain

    key = workspace.keys.ensure("incident-approver-payco")
    case = workspace.approvals("payco").case_id
    url = f"sqlite:///{workspace.records_db_path('payco').resolve()}"
    ledgers = [SqlLedger.from_url(url) for _ in range(6)]  # as six processes would each open it
    start = threading.Barrier(len(ledgers))

    def append(n: int) -> None:
        start.wait()
        Chain(ledgers[n], case, key).append({"kind": "test", "n": n})

    threads = [threading.Thread(target=append, args=(n,)) for n in range(len(ledgers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for ledger in ledgers:
        ledger.close()
    report = workspace.approvals("payco").verify(workspace.keys.trusted())
    assert report.ok, report.problems
    assert [r["seq"] for r in report.records] == [1, 2, 3, 4, 5, 6]
    assert sorted(r["body"]["n"] for r in report.records) == list(range(6))


def test_a_row_added_behind_the_ledgers_back_is_named(workspace: Workspace) -> None:
    _crossed(workspace, 1)
    last = workspace.approvals("payco").records()[-1]
    forged = {**last, "seq": last["seq"] + 1, "body": {**last["body"], "d_id": "D-PAY-9"}}
    tamper.append_row(workspace.records_db_path("payco"), "payco", "approvals", json.dumps(forged))
    problems = verify_ledger(workspace).all_problems()
    assert any("payco/approvals record 2" in p and "signature does not verify (edited)" in p for p in problems)
    assert any("payco records ledger" in p for p in problems)


def test_incident_names_are_events_that_survive_a_new_process(workspace: Workspace) -> None:
    assert [workspace.next_incident(), workspace.next_incident()] == ["INC-0001", "INC-0002"]
    with Workspace(workspace.root, workspace.keys) as again:  # as the next `signoff incident run` would
        assert again.next_incident() == "INC-0003"
        assert [e.payload["incident"] for e in again.rooms.ledger.read("incident-names")] == [
            "INC-0001", "INC-0002", "INC-0003"]
