"""Every authenticated endpoint against every credential that may not use it: 401 for no or an
unknown credential (and for the concierge on engineering endpoints), 403 for a known one without
the authority. Nothing changes in the ledger when a call is refused."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from signoff.desk.routes import routers
from signoff.rooms.http.app import create_app
from tests.support.fixtures.desk import COUPON, World

HEAD = "0" * 40
ENDPOINTS = [
    ("GET", "/desk/bugs", None, {"engineering", "alice", "bob", "release-bot", "shared"}),
    ("GET", "/desk/bugs/BUG-0001", None, {"engineering", "alice", "bob", "release-bot", "shared"}),
    ("POST", "/desk/work/claim", None, {"engineering"}),
    ("POST", "/desk/work/BUG-0001:triage/done", {"lease_id": "x"}, {"engineering"}),
    ("POST", "/desk/bugs/BUG-0001/reproduction", {"round": 1, "test_path": "t", "test_source": "x"}, {"engineering"}),
    ("POST", "/desk/bugs/BUG-0001/fix", {"round": 1, "attempt": 1, "files": {"a": "b"}}, {"engineering"}),
    ("POST", "/desk/bugs/BUG-0001/notes", {"kind": "triage", "note": {"a": "b"}}, {"engineering"}),
    ("POST", "/desk/notifications/claim", None, {"concierge"}),
    ("POST", "/desk/notifications/x/delivered", {"lease_id": "x"}, {"concierge"}),
    ("POST", "/desk/bugs/BUG-0001/approve", {"head": HEAD}, {"alice", "bob", "shared"}),
    ("POST", "/desk/bugs/BUG-0001/merge", {"head": HEAD}, {"alice", "bob"}),
    ("POST", "/desk/bugs/BUG-0001/disputes/0/accept", None, {"alice", "bob"}),
    ("POST", "/desk/deployments", {"repo": "shoplite", "commit": HEAD, "environment": "production",
                                   "url": "http://127.0.0.1:9"}, {"recorder"}),
]
CALLERS = ["none", "unknown", "concierge", "engineering", "alice", "bob", "release-bot", "shared", "recorder"]
ENGINEERING_PATHS = ("/desk/bugs", "/desk/work")


@pytest.mark.parametrize("method, path, body, allowed", ENDPOINTS, ids=[f"{m} {p}" for m, p, _b, _a in ENDPOINTS])
def test_every_refusal(world: World, method: str, path: str, body: dict[str, object] | None,
                       allowed: set[str]) -> None:
    world.desk.submit_report(COUPON, "198.51.100.7")
    app = create_app(world.ledger, world.settings, routers=routers(world.settings))
    app.state.desk = world.desk
    http = TestClient(app)
    for caller in CALLERS:
        if caller in allowed:
            continue
        headers = {} if caller == "none" else {
            "Authorization": "Bearer " + ("dke_" + "x" * 43 if caller == "unknown" else world.tokens[caller])}
        before = world.ledger.count_events()
        r = http.request(method, path, json=body, headers=headers)
        engineering_work = path.startswith(ENGINEERING_PATHS) and not path.endswith(("/approve", "/merge", "/accept"))
        if caller in ("none", "unknown") or (caller == "concierge" and engineering_work):
            assert r.status_code == 401, (caller, r.status_code, r.text)
        else:
            assert r.status_code == 403, (caller, r.status_code, r.text)
        assert r.json()["fix"], caller
        assert world.ledger.count_events() == before, caller
