"""Steps 7 and 8: a recorder checks a deployment (exact commit, health, ancestry); deployments that
arrive first are reconciled; every affected reporter is asked; their word closes or reopens."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from signoff.demo.shoplite_deploy import serve_commit
from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import Outbox
from tests.support.fixtures.desk import World, shown_dispute


def _approve_and_merge(w: World, deliver: bool = True) -> str:
    b = w.bug()
    assert b.change is not None
    w.desk.approve(w.actor("alice"), w.bug_id, b.change["head"])
    sha = w.desk.merge(w.actor("alice"), w.bug_id)
    if deliver:
        w.deliver()
    return sha


def _record(w: World, commit: str, url: str, environment: str = "production") -> dict[str, object]:
    return w.desk.record_deployment(w.actor("recorder"), w.desk.config.repo, commit, environment, url)


def test_release_asks_every_reporter_and_their_word_closes_or_reopens(review: World) -> None:
    w = review
    merge = _approve_and_merge(w)
    with serve_commit(w.desk.forge.path(w.desk.config.repo), merge) as live:
        result = _record(w, merge, live.url)
    assert result["outcome"] == "deployment_recorded" and result["released"] == [w.bug_id]
    b = w.bug()
    assert b.state == "released" and b.release is not None and b.release["health"]["ok"]
    from pathlib import Path

    from signoff.trust import KeyStore, verify_file
    report = verify_file(Path(b.release["evidence"]), KeyStore(w.settings.keys_dir).trusted())
    assert report.ok, report
    pending = {j.job_id for j in Outbox(w.ledger).jobs("pending")}
    for key in ("first", "second"):
        assert f"{w.bug_id}:notify:released:1:{w.intakes[key].report_id}" in pending
    w.concierge.drain()
    page = w.desk.track(w.reporter("second"))
    assert page["question"] == "release" and "live now" in page["notices"][-1]["text"]
    # 8. the first reporter says yes: verified
    assert w.desk.verify_release(w.reporter("first"), "yes", bug_id=w.bug_id).state == "verified"
    # another affected reporter can still reopen a verified bug, with a reason through the airlock
    with pytest.raises(UsageError):
        w.desk.verify_release(w.reporter("second"), "no", bug_id=w.bug_id)  # a "no" needs a reason
    b = w.desk.verify_release(w.reporter("second"), "no", "Still negative with two items on my phone.",
                              bug_id=w.bug_id)
    assert b.state == "reopened" and b.round == 2 and b.confirmations == set() and b.verified_by == set()
    assert f"{w.bug_id}:reproduce:2" in {j.job_id for j in Outbox(w.ledger).jobs("pending")}


def test_a_deployment_before_its_merge_is_kept_and_reconciled(review: World) -> None:
    w = review
    merge = _approve_and_merge(w, deliver=False)  # merged in git; the webhook has not arrived
    with serve_commit(w.desk.forge.path(w.desk.config.repo), merge) as live:
        result = _record(w, merge, live.url)
    assert result == {"outcome": "deployment_recorded", "deployment_id": 1, "released": []}
    assert w.bug().state == "in_review"
    w.deliver()  # the merge arrives
    b = w.bug()
    assert b.state == "released" and b.release is not None and b.release["commit"] == merge
    assert b.release["reconciled"] == "deployment arrived first"


def test_a_deployment_whose_commit_lacks_the_merge_releases_nothing(review: World) -> None:
    w = review
    _approve_and_merge(w)
    old = w.bug().change["base"]
    with serve_commit(w.desk.forge.path(w.desk.config.repo), old) as live:
        result = _record(w, old, live.url)
    assert result["outcome"] == "deployment_recorded" and result["released"] == []
    assert w.bug().state == "merged"


def test_a_commit_that_cannot_be_found_fails_closed(review: World) -> None:
    w = review
    _approve_and_merge(w)
    result = _record(w, "1234567890" * 4, "http://127.0.0.1:9")
    assert result["outcome"] == "deployment_rejected" and "cannot be found" in str(result["why"])
    assert w.bug().state == "merged"


@pytest.fixture
def impostor() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = json.dumps({"service": "someone-else", "commit": "x"}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_health_must_name_the_service_and_the_exact_commit(review: World, impostor: str) -> None:
    w = review
    merge = _approve_and_merge(w)
    assert "names service 'someone-else'" in str(_record(w, merge, impostor)["why"])
    base = w.bug().change["base"]
    with serve_commit(w.desk.forge.path(w.desk.config.repo), base) as live:
        assert "serves commit" in str(_record(w, merge, live.url)["why"])  # live is not the claimed commit
    with serve_commit(w.desk.forge.path(w.desk.config.repo), merge) as live:
        assert "is not 'production'" in str(_record(w, merge, live.url, environment="staging")["why"])
    assert "did not answer" in str(_record(w, merge, "http://127.0.0.1:9")["why"])
    with serve_commit(w.desk.forge.path(w.desk.config.repo), merge) as live:
        # every endpoint must answer: the real deployment and an impostor on the second address
        both = w.desk.record_deployment(w.actor("recorder"), w.desk.config.repo, merge, "production", live.url,
                                        also=[impostor])
        assert "someone-else" in str(both["why"])
    assert w.bug().state == "merged"
    rejected = [e for e in w.ledger.read(f"desk/deploy/{w.desk.config.repo}") if e.type == "deployment.rejected"]
    assert len(rejected) == 5


def test_only_the_recorder_records(review: World) -> None:
    w = review
    for who in ("alice", "engineering", "concierge"):
        with pytest.raises(RefusedError):
            w.desk.record_deployment(w.actor(who), w.desk.config.repo, "0" * 40, "production", "http://x")
    with pytest.raises(RefusedError):
        w.desk.record_deployment(w.actor("recorder"), "elsewhere", "0" * 40, "production", "http://x")


def test_a_report_filed_after_the_release_cannot_reopen_it(review: World) -> None:
    """The attacker files a look-alike report once the fix is live and answers the release question."""
    w = review
    merge = _approve_and_merge(w)
    with serve_commit(w.desk.forge.path(w.desk.config.repo), merge) as live:
        _record(w, merge, live.url)
    late = w.desk.submit_report({"title": "Coupon bigger than the cart makes the total negative",
                                 "component": "checkout", "actual": "negative total"}, "203.0.113.9")
    assert late.bug_id == w.bug_id
    attacker = w.desk.reporter(late.report_id, late.capability)
    b = w.desk.verify_release(attacker, "no", "It is not fixed, reopen it.", bug_id=w.bug_id)
    assert b.state == "released" and b.round == 1 and b.rejected_tests == set()
    assert [(d["question"], d["answer"]) for d in b.disputes] == [("release", "no")]
    b = w.desk.verify_release(attacker, "yes", bug_id=w.bug_id)
    assert b.state == "released" and b.verified_by == set()
    b = w.desk.accept_dispute(w.actor("bob"), w.bug_id, 0, shown_dispute(w, 0))
    assert b.state == "reopened" and b.round == 2 and b.rejected_tests == set()
