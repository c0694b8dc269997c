"""`signoff incident demo|grade|replay` and `signoff demo incident` through the CLI entry point, and
another agent provider driving the company agents."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from signoff.agents.providers.scripted import register_script
from signoff.cli.main import main
from signoff.incident.workflow import Incident, new_run, run_script
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore
from tests.support.fixtures.incident import PAYCO_SHOPCO


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow
def test_demo_then_grade_then_replay(node: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo", "incident")
    assert code == 0, out
    for needle in ("time to root cause", "time to close", "disclosures made 5", "before the fixes: 6 of 60",
                   "0 of 60 rejected", "lines of code that crossed (measured against both repositories): 0",
                   "12/12 checks pass"):
        assert needle in out, needle
    run_dir = next(line.split("run: ", 1)[1] for line in out.splitlines() if line.startswith("run: "))
    code, out, _ = run(capsys, "incident", "grade", run_dir, "--json")
    result = json.loads(out)
    assert code == 0 and result["ok"] and result["metrics"]["code_lines_crossed"] == 0
    code, out, _ = run(capsys, "incident", "grade", run_dir)
    assert code == 0 and out.count("PASS") >= 12 and "FAIL" not in out
    code, out, _ = run(capsys, "incident", "replay", run_dir, "--as", "payco")
    assert code == 0 and "payco-internal" in out and "shopco-internal" not in out and "shopco ledger" not in out
    assert "You're not permitted to direct messages to me in this room." in out
    code, out, _ = run(capsys, "incident", "replay", str(Path(run_dir) / "recording.jsonl"), "--json")
    assert code == 0 and {e["room"] for e in json.loads(out)["events"]} >= {"shopco-internal", "payco-internal"}
    # The postmortem, as Markdown and as signed evidence that `signoff evidence verify` checks.
    md, folder = home.parent / "pm.md", home.parent / "evidence"
    code, _, err = run(capsys, "incident", "postmortem", run_dir, "--evidence", str(folder))
    assert code == 2 and "needs the organisation whose key signs it" in err
    code, out, _ = run(capsys, "incident", "postmortem", run_dir, "--markdown", str(md), "--evidence", str(folder),
                       "--org", "payco")
    text = md.read_text(encoding="utf-8")
    assert code == 0 and text.startswith("# Postmortem of INC-") and "confirmed by priya and sam" in text
    assert "## What each side saw of the other" in text and "PayCo received" in text
    signed = next(folder.glob("*-postmortem-payco.intoto.json"))
    code, out, _ = run(capsys, "evidence", "verify", str(signed))
    assert code == 0 and "exported by payco" in out
    envelope = json.loads(signed.read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["markdown"] = text.replace("priya and sam", "priya alone")
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    signed.write_text(json.dumps(envelope))
    code, _, _ = run(capsys, "evidence", "verify", str(signed))
    assert code != 0


def test_grade_and_replay_errors_are_messages(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "incident", "grade", "no-such-run")
    assert code == 2 and "no incident run 'no-such-run'" in err and "Traceback" not in err
    code, _, err = run(capsys, "incident", "replay", str(home / "missing.jsonl"))
    assert code == 2 and "no recording at" in err
    bogus = home.parent / "r.jsonl"
    bogus.write_text('{"version": "signoff.incident.recording/v1"}\n')
    code, _, err = run(capsys, "incident", "replay", str(bogus), "--as", "bank")
    assert code == 2 and "unknown organisation 'bank'" in err


@pytest.mark.slow
def test_grade_exit_1_for_an_unfinished_run(node: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings.load()
    keys = KeyStore(settings.keys_dir)
    run_dir = new_run(settings.home / "incident-runs", keys, PAYCO_SHOPCO)
    with Incident(run_dir, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        run_script(inc, until=3)
    code, out, _ = run(capsys, "incident", "grade", run_dir.name, "--json")
    result = json.loads(out)
    assert code == 1 and not result["ok"]
    status = {c["name"]: c["ok"] for c in result["checks"]}
    assert status["every disclosure in the shared room was approved and signed"]
    assert not status["incident record closed by the mediator"]
    assert not status["direct cross-company request was refused visibly"]

def _chatty(task: dict[str, Any]) -> dict[str, Any]:
    """A 'model' that adds what it should not: a customer's name."""
    return {"message": " ".join(f["text"] for f in task["facts"]) + " The first failure was for José Álvarez.",
            "cites": [f["id"] for f in task["facts"]]}


register_script("responder", _chatty, "test-chatty")


def test_another_provider_drives_the_agents_and_the_guard_still_holds(node: str, tmp_path: Path) -> None:
    (tmp_path / "signoff.toml").write_text('[agents.responder]\nprovider = "scripted"\nscript = "test-chatty"\n')
    settings = Settings.load(home=tmp_path / "home", env={}, cwd=tmp_path)
    keys = KeyStore(tmp_path / "home" / "keys")
    run_dir = new_run(tmp_path / "runs", keys, PAYCO_SHOPCO)
    with Incident(run_dir, keys, settings, PAYCO_SHOPCO, over_http=False) as inc:
        run_script(inc, until=2)  # priya approved PayCo's draft without reading it closely
        private = [m["body"] for m in inc.messages("priya", "payco")]
        shared = [m["body"] for m in inc.messages("priya", "shared")]
    assert any("José Álvarez" in b for b in private)  # the draft said it, inside PayCo
    assert any(b.startswith("guard blocked D-PAY-1 to the shared room: customer_name") for b in private)
    assert not any("[disclosure D-PAY-1" in b for b in shared)
