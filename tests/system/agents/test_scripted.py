"""Scripted and replay agents: deterministic, checked like models, recorded as simulated evidence."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from signoff.agents import ProposalRejected, agent_for, get_script, register_script, roles
from signoff.agents.record import EVENT_TYPE
from signoff.kernel.errors import NotFoundError, UsageError
from signoff.ledger import SqlLedger, verify_chain
from signoff.trust import KeyStore, verify_file
from tests.support.fixtures.agents import role_toml
from tests.support.model_wire import Canned, WireServer, openai_completion
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "coupon"
BUG = "    discounted = cents * (100 - percent) // 100\n    return discounted * (100 - percent) // 100\n"
FIXED = "    return cents * (100 - percent) // 100\n"

SAMPLE_TASKS = {
    "fixer": {"files": {"src/a.py": "x = 1\n"}, "rules": [{"path": "src/a.py", "find": "1", "replace": "2"}]},
    "reproducer": {"test_path": "tests/test_a.py", "imports": ["import a"],
                   "cases": [{"call": "a.x", "expected": "2"}]},
    "reviewer": {"files": [{"path": "src/a.py"}], "allowed_paths": ["src/a.py"]},
    "writer": {"facts": [{"id": "F1", "text": "faster checkout"}]},
    "responder": {"facts": [{"id": "D1", "text": "the bug is in rounding", "shareable": True},
                            {"id": "S1", "text": "our key is hunter2", "shareable": False}]},
}


def test_every_shipped_role_has_a_deterministic_script(configure) -> None:
    settings = configure()
    shipped = {"fixer", "reproducer", "reviewer", "writer", "responder"}
    assert shipped <= {r.name for r in roles()}
    for role in sorted(shipped):
        first = agent_for(role, settings).propose(SAMPLE_TASKS[role])
        again = agent_for(role, settings).propose(SAMPLE_TASKS[role])
        assert first.kind == "simulated" and first.provider == "scripted"
        assert first.output == again.output and first.output_digest == again.output_digest
        assert first.record["cost_usd"] == 0
    responder = agent_for("responder", settings).propose(SAMPLE_TASKS["responder"]).output
    assert "hunter2" not in responder["message"] and responder["cites"] == ["D1"]


def test_scripted_agents_drive_the_coupon_fixture(configure, tmp_path: Path) -> None:
    settings = configure()
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE / "repo", repo)
    source = (repo / "cart.py").read_text()
    reproducer = agent_for("reproducer", settings).propose({
        "test_path": "tests/test_regression.py", "imports": ["import cart"],
        "cases": [{"name": "coupon applies once", "call": "cart.total_after_coupon(10000, 10)", "expected": "9000"}],
    })
    fixer = agent_for("fixer", settings).propose(
        {"files": {"cart.py": source}, "rules": [{"path": "cart.py", "find": BUG, "replace": FIXED}]},
        allowed_paths=["cart.py"], root=repo)
    assert fixer.output["files"] == [{"path": "cart.py",
                                      "content": (EXAMPLE / "candidates/genuine_fix/cart.py").read_text()}]

    test_file = repo / reproducer.output["test_path"]
    test_file.write_text(reproducer.output["test_source"])

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                              cwd=repo, capture_output=True, text=True, timeout=120)

    base = run()
    assert base.returncode == 1 and "AssertionError" in base.stdout  # reproduces on the base
    (repo / "cart.py").write_text(fixer.output["files"][0]["content"])
    assert run().returncode == 0  # and passes on the fix


def test_a_rule_that_does_not_apply_gives_an_empty_proposal(configure) -> None:
    out = agent_for("fixer", configure()).propose(
        {"files": {"src/a.py": "x"}, "rules": [{"path": "src/a.py", "find": "nope", "replace": "y"}]}).output
    assert out == {"summary": "no rule applied (text not found in src/a.py)", "files": []}


def test_registered_scripts_and_untrusted_text(configure) -> None:
    seen: list[dict] = []

    def custom(task: dict) -> dict:
        seen.append(task)
        return {"severity": "low", "component": "x", "summary": "custom", "labels": []}

    register_script("triage", custom, "test-custom")
    settings = configure()
    task = {"title": "t"}
    proposal = agent_for("triage", settings, script="test-custom").propose(task, {"report": "outside"})
    assert proposal.model == "script:test-custom" and proposal.output["summary"] == "custom"
    assert seen == [{"title": "t", "untrusted": {"report": "outside"}}] and task == {"title": "t"}
    assert get_script("triage", "test-custom") is custom
    with pytest.raises(NotFoundError, match="no script 'nope'"):
        agent_for("triage", settings, script="nope").propose(task)


def test_a_script_that_breaks_schema_is_rejected_and_a_crashing_one_is_named(configure) -> None:
    register_script("writer", lambda task: {"sentences": "not a list"}, "test-bad")
    register_script("writer", lambda task: task["missing"], "test-crash")
    settings = configure()
    with pytest.raises(ProposalRejected, match="schema"):
        agent_for("writer", settings, script="test-bad").propose({})
    with pytest.raises(UsageError, match="script 'test-crash' of role 'writer' failed: KeyError"):
        agent_for("writer", settings, script="test-crash").propose({})


def test_records_are_simulated_evidence_in_the_ledger(configure) -> None:
    settings = configure()
    proposal = agent_for("writer", settings).propose(SAMPLE_TASKS["writer"], case_id="notes-0001")
    report = verify_file(settings.home / proposal.record["evidence"], KeyStore(settings.keys_dir).trusted())
    assert report.ok and report.kind == "simulated"
    ledger = SqlLedger.open(settings)
    events = ledger.read("agents/writer")
    assert [e.type for e in events] == [EVENT_TYPE]
    assert events[0].payload["record"]["case_id"] == "notes-0001"
    assert events[0].payload["output"] == proposal.output
    assert verify_chain(ledger).ok
    ledger.close()


def test_evidence_files_can_be_turned_off(configure) -> None:
    settings = configure("[agents]\nevidence_files = false\n")
    proposal = agent_for("writer", settings).propose(SAMPLE_TASKS["writer"])
    assert "evidence" not in proposal.record and not (settings.evidence_dir / "agents").exists()


def test_record_then_replay_offline(configure, wire: WireServer, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TEST_KEY", "k")
    out = {"sentences": [{"text": "Recorded from a model.", "cites": ["F1"]}]}
    wire.answer(Canned(body=openai_completion(json.dumps(out))))
    live = configure(role_toml("writer", "openai", wire.url, record_path="rec/writer.jsonl"))
    assert agent_for("writer", live).propose(SAMPLE_TASKS["writer"]).output == out
    assert (tmp_path / "rec" / "writer.jsonl").is_file()

    offline = configure('[agents.writer]\nprovider = "replay"\npath = "rec/writer.jsonl"\n')
    replayed = agent_for("writer", offline).propose(SAMPLE_TASKS["writer"])
    assert replayed.output == out and replayed.kind == "simulated" and replayed.provider == "replay"
    assert "gpt-test-2026-01-01" in replayed.model
    with pytest.raises(NotFoundError, match="no recorded output"):
        agent_for("writer", offline).propose({"facts": [{"id": "F9", "text": "new"}]})
    assert len(wire.seen) == 1


def test_replay_file_problems(configure, tmp_path: Path) -> None:
    settings = configure('[agents.writer]\nprovider = "replay"\npath = "missing.jsonl"\n')
    with pytest.raises(NotFoundError, match="does not exist"):
        agent_for("writer", settings).propose({})
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    settings = configure('[agents.writer]\nprovider = "replay"\npath = "bad.jsonl"\n')
    with pytest.raises(UsageError, match=r"bad\.jsonl:1 is not JSON"):
        agent_for("writer", settings).propose({})
    with pytest.raises(UsageError, match="needs a recording"):
        agent_for("writer", configure('[agents.writer]\nprovider = "replay"\n'))


def test_attempts_are_counted_per_case(configure) -> None:
    from signoff.agents import attempts
    from signoff.agents.agent import shared_ledger

    settings = configure()
    register_script("writer", lambda task: {"sentences": "bad"}, "test-always-bad")
    bad = agent_for("writer", settings, script="test-always-bad")
    for _ in range(2):
        with pytest.raises(ProposalRejected):
            bad.propose({}, case_id="notes-7")
    agent_for("writer", settings).propose(SAMPLE_TASKS["writer"], case_id="notes-7")
    agent_for("writer", settings).propose(SAMPLE_TASKS["writer"], case_id="notes-8")
    ledger = shared_ledger(settings)
    assert attempts(ledger, "writer", "notes-7") == {"rejected": 2, "ok": 1}
    assert attempts(ledger, "writer") == {"rejected": 2, "ok": 2}
    assert shared_ledger(settings) is ledger
