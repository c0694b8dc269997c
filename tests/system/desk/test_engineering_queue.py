"""The engineering queue as the desk's service hands it to a worker in another process (what the
HTTP face calls): claimed with the engineering credential only, finished only with the lease of an
engineering job. The face holds no rule: it parses, authenticates and calls these."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from signoff.desk.decisions import NOTIFY
from signoff.desk.engineering import EngineeringService
from signoff.desk.routes import routers
from signoff.kernel.errors import RefusedError, Unauthenticated
from signoff.ledger import NewJob, Outbox
from signoff.rooms.http.app import create_app
from tests.support.fixtures.desk import COUPON, World


def test_only_engineering_claims_the_queue(world: World) -> None:
    world.desk.submit_report(COUPON, "198.51.100.7")
    with pytest.raises(Unauthenticated):
        EngineeringService(world.desk, world.actor("concierge"))
    with pytest.raises(RefusedError):
        EngineeringService(world.desk, world.actor("alice"))
    assert Outbox(world.ledger).jobs("pending") and not any(
        j.attempts for j in Outbox(world.ledger).jobs("pending"))  # nothing was leased by the refusals


def test_a_claimed_job_is_finished_with_its_own_lease_only(world: World) -> None:
    world.desk.submit_report(COUPON, "198.51.100.7")
    service = world.engineering
    job = service.claim()
    assert job is not None and job["payload"]["bug_id"] == world.desk.bugs()[0].bug_id
    assert service.finish(job["job_id"], "not-the-lease") is False
    assert service.finish(job["job_id"], job["lease_id"]) is True
    assert service.finish(job["job_id"], job["lease_id"]) is False  # done once


def test_the_lease_of_another_queues_job_finishes_nothing(world: World) -> None:
    """An engineering worker that learnt a concierge job's lease cannot mark that notice delivered."""
    world.ledger.enqueue([NewJob("notice:x", NOTIFY, {"report_id": "R-1", "kind": "reproduced", "bug_id": "BUG-0001",
                                                      "round": 1})])
    notice = Outbox(world.ledger, lease_seconds=300).claim([NOTIFY])
    assert notice is not None
    assert world.engineering.finish(notice.job_id, notice.lease_id) is False
    assert [j.job_id for j in Outbox(world.ledger).jobs("pending", NOTIFY)] == [notice.job_id]


def test_over_http_the_engineering_credential_cannot_finish_a_concierge_job(world: World) -> None:
    world.ledger.enqueue([NewJob("notice:x", NOTIFY, {"report_id": "R-1", "kind": "reproduced", "bug_id": "BUG-0001",
                                                      "round": 1})])
    notice = Outbox(world.ledger, lease_seconds=300).claim([NOTIFY])
    assert notice is not None
    app = create_app(world.ledger, world.settings, routers=routers(world.settings))
    app.state.desk = world.desk
    answer = TestClient(app).post(f"/desk/work/{notice.job_id}/done", json={"lease_id": notice.lease_id},
                                  headers={"Authorization": f"Bearer {world.tokens['engineering']}"})
    assert answer.status_code == 200 and answer.json() == {"acknowledged": False}
    assert [j.job_id for j in Outbox(world.ledger).jobs("pending", NOTIFY)] == [notice.job_id]
