"""The incident in rooms: the demo passes the grader three times in a row from fresh state."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.incident.grade import grade
from signoff.incident.workflow import run_demo
from tests.support.fixtures.incident import PAYCO_SHOPCO
from tests.system.incident.test_workflow_demo import failed, fresh


@pytest.mark.slow
def test_demo_passes_the_grader_three_times_in_a_row_from_fresh_state(node: str, tmp_path: Path) -> None:
    for attempt in range(3):
        settings, keys = fresh(tmp_path, f"home{attempt}")
        # Over HTTP to a room server process, as the CLI runs it.
        summary = run_demo(tmp_path / f"runs{attempt}", keys, settings, PAYCO_SHOPCO)
        result = grade(Path(summary["run"]), keys)
        assert result["ok"], failed(result)
        assert len(result["checks"]) >= 12
        assert summary["incident"] == "INC-0001" and summary["status"] == "closed"
        assert summary["code_lines_crossed"] == 0
        assert summary["bug"] == {"events": 60, "rejected": 6}
        assert summary["e2e"] == {"events": 60, "accepted": 60, "rejected": 0}
        assert summary["disclosures_made"] == 5 and summary["posts_blocked_by_guards"] == 2
        assert 0 < summary["time_to_root_cause_s"] <= summary["time_to_close_s"]
        assert all(summary["preflight"].values()), summary["preflight"]
