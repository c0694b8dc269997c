"""`signoff incident ...` end to end through the CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from signoff.cli.main import main
from tests.system.incident import tamper


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_simulate_reports_the_bug_and_the_fixes(node: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "incident", "simulate", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["events"] == 60 and summary["rejected"] == 6
    assert summary["rejected_ids"] == ["evt_0007", "evt_0014", "evt_0023", "evt_0032", "evt_0045", "evt_0058"]
    code, out, _ = run(capsys, "incident", "simulate", "--fixed-shopco")
    assert code == 0 and "60 accepted, 0 rejected" in out


def test_guard_check_exit_codes(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = home.parent / "ok.txt"
    ok.write_text("All fields match except data.customer.name, which is 8 bytes longer on PayCo's side.\n")
    bad = home.parent / "bad.txt"
    bad.write_text("ours is: return Buffer.from(JSON.stringify(body), 'utf8')\n")
    code, out, _ = run(capsys, "incident", "guard", "check", str(ok), "--org", "payco")
    assert code == 0 and out.startswith("pass")
    code, out, _ = run(capsys, "incident", "guard", "check", str(bad), "--org", "shopco", "--json")
    verdict = json.loads(out)
    assert code == 1 and verdict["rules"] == ["code_line"] and not verdict["allowed"]
    code, _, err = run(capsys, "incident", "guard", "check", str(bad), "--org", "nobody")
    assert code == 2 and "unknown organisation" in err and "Traceback" not in err
    code, _, err = run(capsys, "incident", "guard", "check", "missing.txt", "--org", "payco")
    assert code == 2 and "no such file" in err


@pytest.mark.slow
def test_run_then_verify_then_tamper(node: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "incident", "run", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["ok"], summary
    assert summary["disclosures"] == ["D-PAY-1", "D-SHOP-1"] and summary["fixed"]["rejected"] == []
    assert set(summary["blocked"]) == {"draft_in_shared_room", "altered_disclosure"}
    code, out, _ = run(capsys, "incident", "verify-ledger")
    assert code == 0 and "2 disclosures crossed" in out
    tamper.edit(home / "incident" / "payco" / "records.db", "payco", "approvals", 1, '"approver":"priya"',
                '"approver":"eve"')
    code, out, _ = run(capsys, "incident", "verify-ledger", "--json")
    report = json.loads(out)
    assert code == 1 and any("signature does not verify (edited)" in p for p in report["problems"])


def test_verify_ledger_without_state_is_a_clear_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "incident", "verify-ledger")
    assert code == 2 and "no incident state" in err and "fix:" in err


def test_damaged_state_is_a_message_not_a_traceback(node: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "incident", "run", "--json")[0] == 0
    capsys.readouterr()
    secrets = home / "incident" / "rooms-secrets.json"
    secrets.write_text(secrets.read_text()[:-5])
    code, out, err = run(capsys, "incident", "verify-ledger")
    assert code == 1 and "rooms-secrets.json is damaged" in out and "Traceback" not in err
    tamper.append_row(home / "incident" / "payco" / "records.db", "payco", "approvals", '"garbage"')
    code, out, _ = run(capsys, "incident", "verify-ledger", "--json")
    assert code == 1 and any("not a chain record" in p for p in json.loads(out)["problems"])
    tamper.append_row(home / "incident" / "payco" / "records.db", "payco", "approvals", "garbage")  # not JSON
    code, out, err = run(capsys, "incident", "verify-ledger", "--json")
    assert code == 1 and any("not a chain record" in p for p in json.loads(out)["problems"]) and "Traceback" not in err
    (home / "incident" / "pins.json").write_text("{")
    note = home.parent / "n.txt"
    note.write_text("hello")
    code, _, err = run(capsys, "incident", "guard", "check", str(note), "--org", "payco")
    assert code == 1 and "pins.json is damaged" in err and "Traceback" not in err


def test_setup_pins_both_guards(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "incident", "setup", "--json")
    pins = json.loads(out)["pins"]
    assert code == 0 and set(pins) == {"parties", "payco", "shopco", "playbooks", "settings"}
    assert all(len(p) == 64 for p in pins.values())
    assert (home / "keys" / "incident-approver-payco.pub").is_file()


def test_setup_from_your_own_configuration(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two organisations of a configuration file (Go and Ruby): each guard guards its own code and
    values, the pins name them, and a configuration with a mistake is an error with its fix."""
    from tests.unit.incident.test_parties import CONFIG, RUBY, write_config

    config = write_config(tmp_path)
    code, out, _ = run(capsys, "incident", "setup", "--config", str(config), "--json")
    assert code == 0 and json.loads(out)["orgs"] == ["ledgerly", "railside"]
    assert set(json.loads(out)["pins"]) == {"parties", "ledgerly", "railside", "playbooks", "settings"}
    leak = tmp_path / "leak.txt"
    leak.write_text("ours: " + RUBY.splitlines()[2].strip() + "\n")
    code, out, _ = run(capsys, "incident", "guard", "check", str(leak), "--org", "railside", "--json")
    assert code == 1 and json.loads(out)["rules"] == ["code_line"]
    code, out, _ = run(capsys, "incident", "guard", "check", str(leak), "--org", "ledgerly", "--json")
    assert code == 0  # not ledgerly's code
    code, _, err = run(capsys, "incident", "guard", "check", str(leak), "--org", "payco")
    assert code == 2 and "use --org with one of: ledgerly, railside" in err
    config.write_text(CONFIG.replace('approver = "bo"', 'approver = "ana"'))
    code, _, err = run(capsys, "incident", "setup", "--config", str(config))
    assert code == 2 and "configured twice: ana" in err and "fix:" in err and "Traceback" not in err
