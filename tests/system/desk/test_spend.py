"""Model spend goes through the agents budget: a metered reproducer over the budget is refused
before any request leaves, the job is failed with backoff (not lost), and nothing is recorded on
the bug."""

from __future__ import annotations

from pathlib import Path

from signoff.desk.workflow import ENGINEERING
from signoff.ledger import Outbox
from tests.support.fixtures.desk import COUPON, open_world


def test_a_reproducer_over_budget_is_refused_before_it_calls(tmp_path: Path) -> None:
    (tmp_path / "signoff.toml").write_text(
        "[agents]\nbudget_usd = 0.01\n\n[agents.reproducer]\nprovider = \"openai\"\n"
        "base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"some-model\"\napi_key_env = \"\"\n"
        "input_usd_per_mtok = 1000\noutput_usd_per_mtok = 1000\n")
    w = open_world(tmp_path / ".signoff")
    w.intakes["first"] = w.desk.submit_report(COUPON, "198.51.100.7")
    w.engineering.drain()
    jobs = {j.job_id: j for j in Outbox(w.ledger).jobs(topic=ENGINEERING)}
    repro = jobs[f"{w.bug_id}:reproduce:1"]
    assert repro.status == "pending" and repro.attempts == 1  # retried later with backoff
    assert repro.last_error is not None and "BudgetExceeded" in repro.last_error
    assert jobs[f"{w.bug_id}:triage"].status == "done"  # the scripted triage costs nothing
    b = w.bug()
    assert b.state == "reproducing" and b.repro_attempts == 0
