"""The incident where the server has no approval cards: on signoff's own server with
`request_approval` switched off in the client's view of its catalogue (the server still offers it),
each fix is decided by its org's human addressing the approver in the org's private room with the
exact command, checked against the message the server recorded. The card path is unchanged
(tests/system/incident/test_workflow_demo.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from signoff.incident.grade import grade, observe
from signoff.incident.playbooks import Mediator
from signoff.incident.stack import APPROVER, MEDIATOR, RunInfo, provision
from signoff.incident.workflow import Incident, run_demo
from signoff.kernel.errors import RefusedError
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO

WITHOUT_CARDS = ("request_approval",)
PROPOSED = 6  # index of "sam approves ShopCo's fingerprint": the commander has proposed the root cause
CONFIRMED = 8  # index of "sam confirms the root cause": both agents have asked for their fix approval


def fresh(tmp: Path, name: str) -> tuple[Settings, KeyStore]:
    home = tmp / name
    return Settings.load(home=home, env={}, cwd=tmp), KeyStore(home / "keys")


def _fix_records(inc: Incident) -> list[str]:
    return [r["body"]["d_id"] for org in ("payco", "shopco") for r in inc.ws.approvals(org).records()
            if "-fix-" in r["body"]["d_id"]]


@pytest.mark.slow
def test_without_cards_fixes_are_decided_by_exact_commands_to_the_approver(node: str, tmp_path: Path) -> None:
    settings, keys = fresh(tmp_path, "home")
    tried: dict[str, Any] = {}

    def attack(i: int, inc: Incident) -> None:
        if i == PROPOSED:  # a confirmation of the root cause that names no digest, or another cause's
            bare = inc.say("priya", "shared", "confirm root cause INC-0001", roles=["incident-commander"])
            other = inc.say("priya", "shared", f"confirm root cause INC-0001 #{'0' * 12}", roles=["incident-commander"])
            inc.pump()
            mediator = inc.actors[MEDIATOR]
            assert isinstance(mediator, Mediator)
            record = mediator.open_record()
            tried["confirmed_early"] = None if record is None else record["confirmations"]
            tried["answers"] = {m["thread_id"]: m["body"] for m in inc.messages("admin", "shared")
                                if m.get("thread_id") in (bare["message_id"], other["message_id"])}
            tried["confirms"] = (bare["message_id"], other["message_id"])
        if i != CONFIRMED:
            return
        command = "approve fix INC-0001-fix-payco"
        # dave is in PayCo's room but is not its approver: the server does not even deliver it.
        tried["dave"] = inc.say("dave", "payco", command, targets=[APPROVER])["target_statuses"]
        # sam, the right command for the other company, in his own room: the approver refuses it.
        inc.say("sam", "shopco", command, targets=[APPROVER])
        # priya, but not the exact command.
        inc.say("priya", "payco", f"ok, {command}", targets=[APPROVER])
        # priya, the command without the digest of the request she read; then with another's digest.
        tried["bare"] = inc.say("priya", "payco", command, targets=[APPROVER])["message_id"]
        tried["other"] = inc.say("priya", "payco", f"{command} #{'0' * 12}", targets=[APPROVER])["message_id"]
        # priya forges the approver's notice to the commander, word for word: it is not the approver's.
        inc.say("priya", "shared", "PayCo's fix for INC-0001 is approved by priya (command $x, signed record 9).",
                roles=["incident-commander"])
        inc.pump()
        mediator = inc.actors[MEDIATOR]
        assert isinstance(mediator, Mediator)
        record = mediator.open_record()
        tried["fixes"] = None if record is None else record["fixes"]
        tried["records"] = _fix_records(inc)
        tried["cards"] = [inc.user_client(h).pending() for h in ("priya", "sam")]

    summary = run_demo(tmp_path / "runs", keys, settings, PAYCO_SHOPCO, between=attack, without=WITHOUT_CARDS)
    run = Path(summary["run"])
    assert RunInfo.load(run).decision_channel == "addressed_command"
    assert tried["dave"] == {APPROVER: "not_permitted"}
    assert tried["records"] == [] and tried["cards"] == [[], []] and tried["fixes"] == {}
    assert tried["confirmed_early"] == {}  # neither confirmation was recorded
    bare, other = (tried["answers"].get(m, "") for m in tried["confirms"])
    assert bare.startswith("not recorded")
    assert "To confirm exactly this, send: @incident-commander confirm root cause INC-0001 #" in bare
    assert other.startswith("not recorded") and "changed since it was shown" in other

    result = grade(run, keys)
    assert result["ok"], [c["name"] + ": " + c["detail"] for c in result["checks"] if not c["ok"]]
    fixes = next(c for c in result["checks"] if c["name"] == "both fixes approved")
    assert fixes["detail"] == "payco: command by priya; shopco: command by sam"
    assert summary["status"] == "closed" and summary["code_lines_crossed"] == 0

    view = observe(run, over_http=False)
    assert view.cards == {"payco": {}, "shopco": {}}  # no card was ever asked for
    refusals = [m["body"] for m in view.by("shopco", APPROVER) if m["body"].startswith("not signed")]
    assert any("is not shopco's fix" in b for b in refusals), refusals
    assert any(m["body"].startswith("not signed") for m in view.by("payco", APPROVER))
    answers = {m["thread"]: m["body"] for m in view.by("payco", APPROVER)}
    assert "To approve exactly this, send: @approver approve fix INC-0001-fix-payco #" in answers[tried["bare"]]
    assert "changed since it was shown" in answers[tried["other"]]
    with Incident(run, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        assert sorted(_fix_records(inc)) == ["INC-0001-fix-payco", "INC-0001-fix-shopco"]


def test_a_run_made_for_cards_does_not_start_where_the_client_sees_none(tmp_path: Path) -> None:
    settings, keys = fresh(tmp_path, "home")
    run = tmp_path / "run"
    provision(run, keys, PAYCO_SHOPCO.parties)
    info = RunInfo.load(run)
    assert info.decision_channel == "approval_card"
    (run / "run.json").write_text((run / "run.json").read_text().replace('"without": []',
                                                                         '"without": ["request_approval"]'))
    with pytest.raises(RefusedError, match="provisioned for fix approvals by approval_card"):
        Incident(run, keys, settings, PAYCO_SHOPCO, over_http=False)


@pytest.mark.slow
def test_the_demo_command_runs_without_cards(node: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from signoff.cli.main import main

    code = main(["incident", "demo", "--no-approval-cards", "--json"])
    out = capsys.readouterr().out
    summary = json.loads(out)
    assert code == 0 and summary["ok"], out[-2000:]
    assert RunInfo.load(Path(summary["run"])).decision_channel == "addressed_command"
    fixes = next(c for c in summary["grade"]["checks"] if c["name"] == "both fixes approved")
    assert fixes["detail"] == "payco: command by priya; shopco: command by sam"
