"""`signoff incident approver`: one organisation's approver as a process of its own, holding its key,
tried from the attacker's side: another caller's token, someone else's approval, a draft of an
incident the notary has moved on from (read live from the notary's ledger), a key store that is not
the organisation's."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from signoff.incident.approvals import disclosure_command
from signoff.incident.approver_service import ApproverClient
from signoff.incident.disclosure import draft
from signoff.incident.salts import IssuedSalts
from signoff.incident.workspace import Workspace, private_room
from signoff.kernel.errors import RefusedError
from signoff.ledger import SqlLedger
from signoff.trust import KeyStore
from tests.support.serve import Process, signoff

TOKEN = "room-server-token-0123456789"
SERVING = re.compile(r"signoff incident approver serving on (http://\S+) \((.*)\)")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    return {**env, "SIGNOFF_HOME": str(home), "SIGNOFF_APPROVER_TOKEN": TOKEN}


def _argv(ws: Workspace, db: str, keys: Path) -> list[str]:
    return signoff("incident", "approver", "--org", "payco", "--root", str(ws.root), "--keys", str(keys),
                   "--notary-db", db, "--notary-id", "notary-1", "--port", "0")


def test_the_approver_runs_alone_with_its_key(workspace: Workspace, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'notary.db'}"
    notary = SqlLedger.from_url(db)
    salts = IssuedSalts(notary, "notary-1")
    incident = salts.issue("INC-0001").incident
    process = Process(_argv(workspace, db, workspace.keys.root), _env(tmp_path / "home"))
    try:
        url, described = process.printed(SERVING).groups()
        assert "approver of payco (for priya, in payco-internal)" in described
        key = workspace.keys.load("incident-approver-payco")
        d = draft("payco", 1, incident, {"rows": [{"path": "data.x", "delta": 8}]}, "Finding 1.", prefix="PAY")
        shown = workspace.rooms.post("payco-agent", private_room("payco"), d.text)
        command = disclosure_command(d)
        by_sam = workspace.rooms.post("sam", "shared", command)
        by_priya = workspace.rooms.post("priya", private_room("payco"), command)
        stranger = ApproverClient(url, "another-callers-token-0000")
        with pytest.raises(RefusedError, match="caller token refused"):
            stranger.approve(d, shown, by_priya)
        stranger.close()
        client = ApproverClient(url, TOKEN)
        try:
            assert client.public_key()["keyid"] == key.keyid
            with pytest.raises(RefusedError):
                client.approve(d, shown, by_sam)
            assert workspace.approvals("payco").records() == []
            record = client.approve(d, shown, by_priya)
            assert record["keyid"] == key.keyid and record["body"]["approver"] == "priya"
            # Written by the process on the organisation's own chain, under its key.
            report = workspace.approvals("payco").verify({key.keyid: key.public})
            assert report.ok and [r["body"]["d_id"] for r in report.records] == ["D-PAY-1"]
            # The notary moves on: a draft of the old incident is stale now, without a restart.
            salts.issue("INC-0002")
            old = draft("payco", 2, incident, {"rows": []}, "Finding 2.", prefix="PAY")
            shown2 = workspace.rooms.post("payco-agent", private_room("payco"), old.text)
            ok2 = workspace.rooms.post("priya", private_room("payco"), disclosure_command(old))
            with pytest.raises(RefusedError, match="current"):
                client.approve(old, shown2, ok2)
            assert len(workspace.approvals("payco").records()) == 1
        finally:
            client.close()
    finally:
        process.stop()
        notary.close()


def test_the_approver_will_not_start_with_another_key_or_a_weak_token(workspace: Workspace, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'notary.db'}"
    other_keys = tmp_path / "other-keys"
    other_keys.mkdir()
    done = subprocess.run(_argv(workspace, db, other_keys), env=_env(tmp_path / "home"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "no signing key named 'incident-approver-payco'" in done.stderr
    stolen = tmp_path / "wrong-keys"
    KeyStore(stolen).ensure("incident-approver-payco")  # a key of the right name, not the pinned one
    done = subprocess.run(_argv(workspace, db, stolen), env=_env(tmp_path / "home"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "not the one payco's pinned guard trusts" in done.stderr
    assert "Traceback" not in done.stderr and "fix:" in done.stderr
    done = subprocess.run(_argv(workspace, db, workspace.keys.root), capture_output=True, text=True, timeout=120,
                          env={**_env(tmp_path / "home"), "SIGNOFF_APPROVER_TOKEN": "short"})
    assert done.returncode != 0 and "shorter than 16 characters" in done.stderr


def test_two_machines_set_up_and_serve_only_their_own_organisation(home: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Ledgerly's machine and Railside's: each its own guard and keys and an evidence server over its
    own captures; the notary's incident opened once; each fingerprint asked of its own server; the
    notary compares them."""
    from signoff.cli.main import main
    from tests.system.incident.test_second_fixture import FIXTURE

    db = f"sqlite:///{tmp_path / 'notary.db'}"
    notary = ["--notary-db", db, "--notary-id", "n1"]
    config = str(FIXTURE / "incident.toml")
    roots = {org: tmp_path / f"{org}-machine" for org in ("ledgerly", "railside")}
    homes = {"ledgerly": home, "railside": tmp_path / "railside-home"}
    tokens = {org: f"{org}-agent-evidence-token" for org in roots}
    assert main(["incident", "setup", "--config", config, "--org", "ledgerly", "--root", str(roots["ledgerly"])]) == 0
    done = subprocess.run(signoff("incident", "setup", "--config", config, "--org", "railside", "--root",
                                  str(roots["railside"])), env=_env(homes["railside"]), capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    ws = Workspace(roots["ledgerly"], KeyStore(home / "keys"))
    assert ws.local_orgs == ("ledgerly",) and ws.orgs == ("ledgerly", "railside")
    assert not (roots["ledgerly"] / "railside" / "guard.json").exists()
    assert not (home / "keys" / "incident-approver-railside.key").exists()
    ws.close()
    processes = {org: Process(signoff("incident", "evidence", "--org", org, "--root", str(roots[org]), *notary,
                                      "--port", "0"), {**_env(homes[org]), "SIGNOFF_EVIDENCE_TOKEN": tokens[org]})
                 for org in roots}
    try:
        urls = {}
        for org, process in processes.items():
            url, described = process.printed(re.compile(r"evidence serving on (http://\S+) \((.*)\)")).groups()
            urls[org] = url
            assert described == f"evidence of {org}: 6 captured requests"
        capsys.readouterr()
        assert main(["incident", "fingerprint", "txn-1003", "--evidence", urls["ledgerly"], "--incident", "INC-0001",
                     "--salt", "00" * 32, "--token", tokens["ledgerly"]]) == 3  # no incident opened yet
        assert "refused" in capsys.readouterr().err
        assert main(["incident", "open", *notary, "--json"]) == 0
        opened = json.loads(capsys.readouterr().out)
        assert opened["incident"] == "INC-0001"
        files = {}
        for org in roots:
            other = tokens["railside" if org == "ledgerly" else "ledgerly"]
            for token, code in ((other, 3), (tokens[org], 0)):
                assert main(["incident", "fingerprint", "txn-1003", "--evidence", urls[org], "--incident",
                             opened["incident"], "--salt", opened["salt"], "--token", token]) == code
            files[org] = tmp_path / f"{org}.json"
            files[org].write_text(capsys.readouterr().out)
        assert main(["incident", "compare", str(files["ledgerly"]), str(files["railside"]), *notary]) == 0
        table = capsys.readouterr().out
        assert "≠ memo" in table and "fits 1 ASCII character(s) written as \\uXXXX" in table
        assert "Invoice" not in table and "AC-0042" not in table
    finally:
        for process in processes.values():
            process.stop()
