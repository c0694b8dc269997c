"""A live incident whose approvals each organisation's own approver process signs: Ledgerly's and
Railside's `signoff incident approver` run as processes of their own, each with its machine's
workspace and key store; the host that runs the incident names them in its `signoff.toml`
(`[incident.approvers.<org>]`, `[incident.notary]`) and holds neither key. The people decide from the
page's face (`service.decide`, with the digest shown); every disclosure and fix is signed by the
organisation's process, on its own chain, and crosses only on the record it serves. An approver that
does not answer: the page refuses the decision with nothing posted, the command in chat signs
nothing and nothing crosses; started again, the person's command signs. The
run's private rooms link to its shared room on the server (`link_rooms`)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from signoff.incident import service
from signoff.incident.parties import Parties
from signoff.incident.preflight import _approver_processes
from signoff.incident.stack import APPROVER, LINK_LABEL, SHARED
from signoff.incident.workflow import Incident, closed, new_live_run
from signoff.incident.workspace import Workspace
from signoff.kernel.errors import UnavailableError
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore
from tests.support.serve import Process, signoff
from tests.system.incident.test_second_fixture import FIXTURE

SERVING = re.compile(r"signoff incident approver serving on (http://\S+) ")
TOKENS = {"ledgerly": "ledgerly-room-server-token-0001", "railside": "railside-room-server-token-0002"}


def _approver(org: str, machine: Path, notary_db: str, port: str = "0") -> tuple[Process, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}
    env.update(SIGNOFF_HOME=str(machine / "home"), SIGNOFF_APPROVER_TOKEN=TOKENS[org])
    process = Process(signoff("incident", "approver", "--org", org, "--root", str(machine / "incident"), "--keys",
                              str(machine / "keys"), "--notary-db", notary_db, "--notary-id", "n1", "--port", port),
                      env)
    return process, process.printed(SERVING).group(1)


@pytest.mark.slow
def test_each_organisations_approver_process_signs_its_approvals_in_a_live_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parties = Parties.load(FIXTURE / "incident.toml")
    notary_db = f"sqlite:///{tmp_path / 'notary.db'}"
    service.open_incident(service.NotaryAt(notary_db, "n1"))  # an earlier incident on the same notary
    machines = {org: tmp_path / f"{org}-machine" for org in parties.keys}
    host = tmp_path / "host"
    host_keys = KeyStore(host / "keys")
    for org, machine in machines.items():  # `signoff incident setup --org ORG` on each machine
        with Workspace(machine / "incident", KeyStore(machine / "keys")) as ws:
            ws.setup(parties, local=(org,))
        public = KeyStore(machine / "keys").load(f"incident-approver-{org}").public
        host_keys.trust(public, f"incident-approver-{org}")  # the exchanged public key, on the host
    processes = {org: _approver(org, machine, notary_db) for org, machine in machines.items()}
    try:
        for org, token in TOKENS.items():
            monkeypatch.setenv(f"{org.upper()}_APPROVER_TOKEN", token)
        settings = Settings(host, f"sqlite:///{host / 'signoff.db'}", raw={"incident": {
            "approvers": {org: {"url": url, "token_env": f"{org.upper()}_APPROVER_TOKEN"}
                          for org, (_, url) in processes.items()},
            "notary": {"db": notary_db, "id": "n1"}}})
        with Workspace(host / "incident", host_keys) as ws:
            ws.setup(parties, settings)
        run_dir = new_live_run(host / "incident-runs", host_keys, host)
        with Incident(run_dir, host_keys, settings, over_http=False) as inc:
            assert [c.ok for c in _approver_processes(inc)] == [True, True]
            # The server has room links: each private room links to the shared room, as its agent reads it.
            assert inc.info.links == {"ledgerly": LINK_LABEL, "railside": LINK_LABEL}
            for org in parties.keys:
                detail = inc.actors[inc.cast.agent(org)].op(org, "get_room_detail", room_id=inc.info.rooms[org])
                assert [(x["target_room_id"], x["label"], x["access"]) for x in detail["linked_rooms"]] == [
                    (inc.info.rooms[SHARED], LINK_LABEL, "member")]

            def decide(org: str, ref: str) -> None:
                person = inc.cast.approver(org)
                view = service.console_view(run_dir, host_keys, org)
                item = next(a for a in service.awaiting(view, org, person) if a.ref == ref)
                service.decide(run_dir, host_keys, service.Decide(org, person, ref, item.digest, "approve"))
                inc.pump()

            def write(org: str, kind: str, text: str) -> None:
                service.write(run_dir, host_keys, service.Write(org, inc.cast.approver(org), kind, text))
                inc.pump()

            def crossed(d_id: str) -> bool:
                return any(m["body"].startswith(f"[disclosure {d_id} ") for m in inc.messages("ana", SHARED))

            write("railside", "report", "Some Ledgerly webhooks fail our signature check with 401.")
            # Railside's approver is down: bo's approval from the page is refused with nothing posted;
            # the same command sent in chat signs nothing, and nothing crosses.
            railside, url = processes.pop("railside")
            railside.stop()
            before = len(inc.messages("bo", "railside"))
            with pytest.raises(UnavailableError, match=r"Railside's approver at .* does not answer") as down:
                decide("railside", "D-RAILSIDE-1")
            assert "signoff incident approver --org railside" in (down.value.fix or "")
            assert len(inc.messages("bo", "railside")) == before
            command = next(m["body"].rsplit("send: @approver ", 1)[1] for m in inc.messages("bo", "railside")
                           if "To approve exactly this, send: @approver approve D-RAILSIDE-1 #" in m["body"])
            inc.say("bo", "railside", command, targets=[APPROVER])
            inc.pump()
            refusal = [m["body"] for m in inc.messages("bo", "railside") if m["sender"].startswith("agent:")
                       and m["body"].startswith("not signed:")]
            assert len(refusal) == 1 and "did not answer" in refusal[0] and "approver" in refusal[0]
            assert not crossed("D-RAILSIDE-1")
            processes["railside"] = _approver("railside", machines["railside"], notary_db, url.rsplit(":", 1)[1])
            inc.say("bo", "railside", command, targets=[APPROVER])  # bo sends the command again, in chat
            inc.pump()
            decide("ledgerly", "D-LEDGERLY-1")
            assert crossed("D-LEDGERLY-1") and crossed("D-RAILSIDE-1")
            write("railside", "report", "please ask for a salted fingerprint of txn-1003 from both sides.")
            decide("ledgerly", "D-LEDGERLY-2")
            decide("railside", "D-RAILSIDE-2")
            incident = "INC-0002"  # the notary's next: INC-0001 was opened on it before the run
            for org in parties.keys:
                decide(org, incident)
            for org, fix in (("ledgerly", "sign the bytes sent"), ("railside", "verify the raw body")):
                write(org, "fix", fix)
            for org in parties.keys:
                decide(org, f"{incident}-fix-{org}")
            assert closed(inc)
            for org in parties.keys:
                assert inc.ws.approvals(org).records() == []  # nothing signed on the host
    finally:
        for process, _ in processes.values():
            process.stop()
    assert not list((host / "keys").glob("incident-approver-*.key"))
    for org, machine in machines.items():
        keys = KeyStore(machine / "keys")
        with Workspace(machine / "incident", keys) as ws:
            key = keys.load(f"incident-approver-{org}").public
            report = ws.approvals(org).verify({key.keyid: key})
            signed = [(r["body"]["d_id"], r["body"]["approver"]) for r in report.records]
        person = parties.get(org).approver
        prefix = parties.get(org).prefix
        assert report.ok and signed == [(f"D-{prefix}-1", person), (f"D-{prefix}-2", person),
                                        (f"INC-0002-fix-{org}", person)]

