"""The approver as a process of its own, as a run calls it, tried from the attacker's side: the fix
approval on its HTTP face refuses another caller's token, a digest of other content and a request
that is not there; a disclosure it has no draft for is refused; and what a run counts as approved
(the guard, the run's approver agent) is only a record signed by the organisation's pinned approver
key, for that organisation and that id, never a forged one served at the approver's address."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from signoff.demo.incident_walkthrough import approver_for
from signoff.incident.approvals import disclosure_command, fix_command
from signoff.incident.approver_service import ApproverClient, approver_app
from signoff.incident.decisions import append_record
from signoff.incident.disclosure import Disclosure, draft, published_text
from signoff.incident.evidence_server import LoopbackServer
from signoff.incident.guard import GuardConfig, Post
from signoff.incident.model import RecordChain
from signoff.incident.notary import Notary
from signoff.incident.playbooks.posts import fix_request
from signoff.incident.remote_approver import ApproverEndpoint, RemoteApprover, approver_endpoints
from signoff.incident.workspace import SHARED_ROOM, Workspace, private_room
from signoff.kernel.errors import ConflictError, IntegrityError, RefusedError, UnavailableError, UsageError
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore, PublicKey
from tests.support.fixtures.incident import PAYCO_SHOPCO

TOKEN = "room-server-token-0123456789"
EVIDENCE = {"rows": [{"path": "data.customer.name", "delta": 8, "escaped_by": ["payco"]}]}


@pytest.fixture()
def served(workspace: Workspace) -> Iterator[tuple[Workspace, Notary, str]]:
    notary = Notary()
    notary.open_incident()
    with LoopbackServer(approver_app(approver_for(workspace, "payco", notary), TOKEN)) as server:
        yield workspace, notary, server.url


def _pinned(ws: Workspace) -> PublicKey:
    return ws.keys.load("incident-approver-payco").public


def test_fix_approval_over_http_refuses_the_wrong_caller_digest_and_request(
        served: tuple[Workspace, Notary, str]) -> None:
    ws, notary, url = served
    incident = notary.current.incident
    request_id, fix = f"{incident}-fix-payco", "PayCo signs the bytes it sends"
    asked = ws.rooms.post("payco-agent", private_room("payco"), fix_request("payco", incident, "PayCo", fix))
    right = ws.rooms.post("priya", private_room("payco"), fix_command(request_id, asked.text))
    stranger = ApproverClient(url, "another-callers-token-0000")
    client = ApproverClient(url, TOKEN)
    try:
        with pytest.raises(RefusedError, match="caller token refused"):
            stranger.approve_fix(request_id, incident, fix, asked, right)
        stale = ws.rooms.post("priya", private_room("payco"), f"approve fix {request_id} #{'0' * 12}")
        with pytest.raises(ConflictError, match="changed since it was shown"):
            client.approve_fix(request_id, incident, fix, asked, stale)
        with pytest.raises(RefusedError, match="not payco's fix"):
            client.approve_fix(f"{incident}-fix-shopco", incident, fix, asked, right)
        assert ws.approvals("payco").records() == []
        record = RemoteApprover(ApproverEndpoint("payco", url, TOKEN), _pinned(ws)).approve_fix(
            request_id, incident, fix, asked, right)
        assert record["body"]["kind"] == "signoff.incident.fix-approval/v1" and record["body"]["approver"] == "priya"
    finally:
        stranger.close()
        client.close()


def test_a_disclosure_without_its_draft_is_not_signed(served: tuple[Workspace, Notary, str]) -> None:
    ws, notary, url = served
    d = draft("payco", 1, notary.current.incident, EVIDENCE, "Finding 1: the name is 8 bytes longer.", prefix="PAY")
    other = ws.rooms.post("payco-agent", private_room("payco"), "some other message of the agent's")
    approval = ws.rooms.post("priya", private_room("payco"), disclosure_command(d))
    approver = RemoteApprover(ApproverEndpoint("payco", url, TOKEN), _pinned(ws))
    try:
        with pytest.raises(RefusedError, match="does not carry D-PAY-1's text"):
            approver.approve(d, other, approval)
        assert approver.record("D-PAY-1", d.incident) is None and ws.approvals("payco").records() == []
    finally:
        approver.close()


def _forged(d: Disclosure, key_root: Any, org: str = "payco") -> dict[str, Any]:
    """A record of `d` as the approver signs one, signed by a key of the right name from another store."""
    key = KeyStore(key_root).ensure("incident-approver-payco")
    body = {"kind": "signoff.incident.approval/v1", "d_id": d.d_id, "incident": d.incident, "org": org,
            "evidence_sha256": d.evidence_sha256, "text_sha256": d.text_sha256, "approver": "priya"}
    event = append_record(RecordChain("payco/approvals"), body, key).events[0]
    return event.payload()


def test_the_guard_counts_only_records_the_pinned_key_signed_for_that_id(
        served: tuple[Workspace, Notary, str], tmp_path: Any) -> None:
    ws, notary, url = served
    d = draft("payco", 1, notary.current.incident, EVIDENCE, "Finding 1: the name is 8 bytes longer.", prefix="PAY")
    post = Post(SHARED_ROOM, published_text(d, "priya"), d)
    forged = _forged(d, tmp_path / "forger")
    ws.use_approver_process("payco", lambda d_id, incident: forged)
    assert "disclosure_unapproved" in ws.guard("payco", logged=False).check(post).rules
    assert ws.signed_record("payco", d.d_id, d.incident) is None
    # Signed by the pinned key, but another id's (or another organisation's) record: not this one's.
    real_key = ws.keys.load("incident-approver-payco")
    genuine = append_record(RecordChain("payco/approvals"), {**forged["body"], "d_id": "D-PAY-9"}, real_key)
    ws.use_approver_process("payco", lambda d_id, incident: genuine.events[0].payload())
    assert "disclosure_unapproved" in ws.guard("payco", logged=False).check(post).rules
    # The approver's own record, served by it, counts; the workspace's own chain is not read.
    approver = RemoteApprover(ApproverEndpoint("payco", url, TOKEN), _pinned(ws))
    try:
        shown = ws.rooms.post("payco-agent", private_room("payco"), d.text)
        approver.approve(d, shown, ws.rooms.post("priya", private_room("payco"), disclosure_command(d)))
        ws.use_approver_process("payco", approver.record)
        assert ws.guard("payco", logged=False).check(post).allowed
        assert ws.signed_record("payco", d.d_id, d.incident) is not None
        # The next incident numbers its disclosures from 1 again: the same approver signs its D-PAY-1
        # as a record of its own, and each incident's disclosure counts only on its own record.
        notary.open_incident()
        again = draft("payco", 1, notary.current.incident, EVIDENCE, "Finding 1 of the next incident.",
                      prefix="PAY")
        shown = ws.rooms.post("payco-agent", private_room("payco"), again.text)
        approver.approve(again, shown, ws.rooms.post("priya", private_room("payco"), disclosure_command(again)))
        assert [r["body"]["incident"] for r in ws.approvals("payco").records()] == [d.incident, again.incident]
        assert ws.guard("payco", logged=False).check(Post(SHARED_ROOM, published_text(again, "priya"), again)).allowed
        swapped = Disclosure(d.d_id, again.incident, "payco", d.evidence, d.text)  # the old text, the new incident
        assert not ws.guard("payco", logged=False).check(Post(SHARED_ROOM, published_text(swapped, "priya"),
                                                              swapped)).allowed
    finally:
        approver.close()


def test_a_forged_answer_or_a_silent_approver_signs_nothing(workspace: Workspace, tmp_path: Any) -> None:
    """An address that answers with a record the pinned key did not sign (a stand-in, a proxy) is an
    integrity error; an approver that does not answer is a named error; the guard counts neither."""
    notary = Notary()
    notary.open_incident()
    d = draft("payco", 1, notary.current.incident, EVIDENCE, "Finding 1.", prefix="PAY")
    forged = _forged(d, tmp_path / "forger")
    impostor = FastAPI()

    @impostor.post("/v1/approve")
    def approve() -> dict[str, Any]:
        return forged

    shown = workspace.rooms.post("payco-agent", private_room("payco"), d.text)
    approval = workspace.rooms.post("priya", private_room("payco"), disclosure_command(d))
    with LoopbackServer(impostor) as server:
        stand_in = RemoteApprover(ApproverEndpoint("payco", server.url, TOKEN), _pinned(workspace))
        try:
            with pytest.raises(IntegrityError, match="pinned approver key did not sign"):
                stand_in.approve(d, shown, approval)
        finally:
            stand_in.close()
        gone = server.url
    silent = RemoteApprover(ApproverEndpoint("payco", gone, TOKEN), _pinned(workspace))
    try:
        with pytest.raises(UnavailableError, match="did not answer") as err:
            silent.approve(d, shown, approval)
        assert err.value.fix and "nothing was signed" in err.value.fix
        assert silent.record(d.d_id, d.incident) is None
    finally:
        silent.close()


def test_settings_naming_an_approver_process_are_checked(tmp_path: Any) -> None:
    """The host makes no key for an organisation whose approver is a process of its own: it pins the
    public key it trusts, and refuses without one; a table naming no organisation, a bad address or a
    token missing from the environment is an error with its fix."""

    def settings(approvers: dict[str, Any]) -> Settings:
        return Settings(tmp_path, "sqlite://", raw={"incident": {"approvers": approvers}})

    keys = KeyStore(tmp_path / "keys")
    ws = Workspace(tmp_path / "incident", keys)
    parties = PAYCO_SHOPCO.captured_in(ws.captures)
    remote = settings({"payco": {"url": "http://127.0.0.1:1", "token_env": "PAYCO_TOKEN"}})
    with pytest.raises(UsageError) as untrusted:
        ws.setup(parties, remote)
    assert "evidence key trust incident-approver-payco" in (untrusted.value.fix or "")
    with pytest.raises(UsageError, match="names no organisation"):
        ws.setup(parties, settings({"payko": {"url": "http://127.0.0.1:1", "token_env": "PAYCO_TOKEN"}}))
    theirs = KeyStore(tmp_path / "payco-keys").ensure("incident-approver-payco").public
    keys.trust(theirs, "incident-approver-payco")
    ws.setup(parties, remote)
    assert not (tmp_path / "keys" / "incident-approver-payco.key").exists()
    assert GuardConfig.read(ws.guard_config_path("payco")).approver_key == theirs.hex()
    ws.close()
    assert approver_endpoints(remote, {"PAYCO_TOKEN": TOKEN})["payco"].token == TOKEN
    for table, env in (({"url": "http://127.0.0.1:1", "token_env": "PAYCO_TOKEN"}, {"PAYCO_TOKEN": "short"}),
                       ({"url": "ftp://x", "token_env": "PAYCO_TOKEN"}, {"PAYCO_TOKEN": TOKEN}),
                       ({"url": "http://127.0.0.1:1", "token": TOKEN}, {})):
        with pytest.raises(UsageError) as bad:
            approver_endpoints(settings({"payco": table}), env)
        assert bad.value.fix and TOKEN not in bad.value.message
