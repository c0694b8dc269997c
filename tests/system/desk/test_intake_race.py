"""Concurrent first reports of one bug: clustering is one serialised decision over the ledger, so
racing intakes (threads, and separate processes) open exactly one bug and every report joins it."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from signoff.desk.config import DeskConfig
from signoff.desk.workflow import Desk, Intake, forge_for
from signoff.kernel.errors import RefusedError
from signoff.kernel.settings import Settings
from signoff.ledger.store import NewEvent, SqlLedger
from tests.support.fixtures.desk import COUPON, COUPON_2, OVERFLOW

THREADS = 8
PROCESSES = 4


def _desk(home: Path, db_url: str) -> Desk:
    settings = Settings.load(home=home, db_url=db_url, env={}, cwd=home.parent)
    ledger = SqlLedger.open(settings)
    return Desk(ledger, settings, forge_for(settings, ledger), DeskConfig())


def _report(i: int) -> dict[str, str]:
    return dict(COUPON if i % 2 == 0 else COUPON_2)


def _assert_one_bug(desk: Desk, intakes: list[Intake]) -> None:
    assert len(intakes) == len({i.report_id for i in intakes})
    assert desk.bug_ids() == ["BUG-0001"], desk.bug_ids()
    assert {i.bug_id for i in intakes} == {"BUG-0001"}
    bug = desk.bug("BUG-0001")
    assert sorted(bug.reports) == sorted(i.report_id for i in intakes)
    events = desk.ledger.read("desk/bug/BUG-0001")
    assert events[0].type == "bug.opened" and [e.type for e in events].count("bug.opened") == 1
    # every reporter keeps their own capability, and only their own
    for n, mine in enumerate(intakes):
        actor = desk.reporter(mine.report_id, mine.capability)
        assert desk.track(actor)["bug_id"] == "BUG-0001"
        other = intakes[(n + 1) % len(intakes)]
        with pytest.raises(RefusedError):
            desk.reporter(mine.report_id, other.capability)


def _race(intake: Callable[[int], Any]) -> tuple[list[Any], list[BaseException]]:
    """Run `intake(i)` in THREADS threads released together; what each returned or raised."""
    barrier = threading.Barrier(THREADS)
    results: list[Any] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        try:
            barrier.wait()
            got = intake(i)
            with lock:
                results.append(got)
        except BaseException as exc:  # collected for the caller to check
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def test_racing_threads_open_one_bug(db_url: str, tmp_path: Path) -> None:
    desk = _desk(tmp_path / ".signoff", db_url)
    results, errors = _race(lambda i: desk.submit_report(_report(i), f"198.51.100.{i + 1}"))
    assert not errors, errors
    assert len(results) == THREADS
    _assert_one_bug(desk, results)
    # the next, different bug still opens its own
    assert desk.submit_report(OVERFLOW, "203.0.113.1").bug_id == "BUG-0002"


def _child(home: str, db_url: str, i: int, barrier: Any, out: Any) -> None:
    desk = _desk(Path(home), db_url)
    barrier.wait()
    got = desk.submit_report(_report(i), f"192.0.2.{i + 1}")
    out.put((got.report_id, got.bug_id, got.capability, got.tracking_path))


@pytest.mark.slow
def test_racing_processes_open_one_bug(db_url: str, tmp_path: Path) -> None:
    home = tmp_path / ".signoff"
    desk = _desk(home, db_url)  # creates the schema and the webhook secret before the race
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    out = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(str(home), db_url, i, barrier, out)) for i in range(PROCESSES)]
    for p in procs:
        p.start()
    results = [Intake(*out.get(timeout=300)) for _ in procs]
    for p in procs:
        p.join()
        assert p.exitcode == 0
    _assert_one_bug(desk, results)


def test_a_bug_whose_opener_crashed_is_opened_by_the_next_report(world: Any) -> None:
    """The cluster decision is written first; an intake that died right after it (its bug never
    written) leaves no half bug: the next report of that bug opens it, jobs and all."""
    desk = world.desk
    desk.ledger.append("desk/clusters", 0, [NewEvent("report.clustered", {
        "report_id": "RPT-0000", "bug_id": "BUG-0001", "opened": True,
        "component": "checkout", "title": COUPON["title"]})])
    later = desk.submit_report(COUPON_2, "198.51.100.8")
    assert later.bug_id == "BUG-0001"
    events = desk.ledger.read("desk/bug/BUG-0001")
    assert [e.type for e in events] == ["bug.opened", "report.attached"]
    assert events[0].payload["title"] == COUPON["title"]
    assert sorted(desk.bug("BUG-0001").reports) == [later.report_id]
    from signoff.ledger import Outbox
    assert {"BUG-0001:triage", "BUG-0001:reproduce:1"} <= {j.job_id for j in Outbox(desk.ledger).jobs("pending")}
    assert desk.submit_report(OVERFLOW, "198.51.100.9").bug_id == "BUG-0002"


def test_racing_reports_from_one_client_never_pass_its_limit(db_url: str, tmp_path: Path) -> None:
    """The rate limit is one decision per client over the ledger (Ledger.update): racing intakes
    from one client are counted one after another, so exactly `reports_per_hour` get through."""
    settings = Settings.load(home=tmp_path / ".signoff", db_url=db_url, env={}, cwd=tmp_path)
    ledger = SqlLedger.open(settings)
    desk = Desk(ledger, settings, forge_for(settings, ledger), DeskConfig(reports_per_hour=3))
    passed, errors = _race(lambda i: desk.submit_report(_report(i), "198.51.100.77"))
    refused = [e.message for e in errors if isinstance(e, RefusedError)]
    assert len(passed) == 3 and len(refused) == len(errors) == THREADS - 3, errors
    assert all("too many reports from this client (3 in the last hour)" in m for m in refused)
    counted = ledger.case_ids("desk/intake/")
    assert len(counted) == 1 and ledger.version(counted[0]) == 3
