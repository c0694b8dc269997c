"""Webhooks: HMAC-SHA256 over the raw body, replays refused by delivery id, repositories
allowlisted; GitHub mode driven by payloads in GitHub's documented webhook format."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from signoff.demo.shoplite_deploy import serve_commit
from signoff.desk import webhooks
from signoff.desk.forge import TOPIC
from signoff.desk.receiving import AlreadyProcessed
from signoff.kernel.errors import ConflictError, RefusedError, UsageError
from signoff.ledger import NewJob
from tests.support.fixtures.desk import World

FULL_NAME = "octo-org/shoplite"


def test_signature_matches_githubs_documented_example() -> None:
    # The example in GitHub's "Validating webhook deliveries" page.
    assert webhooks.sign(b"It's a Secret to Everybody", b"Hello, World!") == (
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")


def _user(login: str, kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": 1000 + len(login), "node_id": "MDQ6VXNlcjE=",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{1000 + len(login)}?v=4", "gravatar_id": "",
            "url": f"https://api.github.com/users/{login}", "html_url": f"https://github.com/{login}",
            "type": kind, "site_admin": False}


def _repository() -> dict[str, Any]:
    return {"id": 186853002, "node_id": "MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI=", "name": "shoplite",
            "full_name": FULL_NAME, "private": True, "owner": _user("octo-org", "Organization"),
            "html_url": f"https://github.com/{FULL_NAME}", "default_branch": "main", "fork": False,
            "url": f"https://api.github.com/repos/{FULL_NAME}"}


def _pull_request(number: int, head: str, base: str, merged_by: dict[str, Any] | None = None,
                  merge_commit: str | None = None) -> dict[str, Any]:
    return {"url": f"https://api.github.com/repos/{FULL_NAME}/pulls/{number}", "id": 279147437,
            "node_id": "MDExOlB1bGxSZXF1ZXN0Mjc5MTQ3NDM3", "number": number,
            "state": "closed" if merged_by else "open", "locked": False, "title": "BUG-0001: fix", "draft": True,
            "user": _user("signoff-engineering[bot]", "Bot"), "body": "Draft fix",
            "created_at": "2026-11-07T14:09:29Z", "updated_at": "2026-11-07T15:37:39Z",
            "merged_at": "2026-11-07T15:37:39Z" if merged_by else None, "merge_commit_sha": merge_commit,
            "assignees": [_user("alice")], "requested_reviewers": [],
            "head": {"label": "octo-org:desk/bug-0001-r1-a1", "ref": "desk/bug-0001-r1-a1", "sha": head,
                     "user": _user("octo-org", "Organization"), "repo": _repository()},
            "base": {"label": "octo-org:main", "ref": "main", "sha": base, "user": _user("octo-org", "Organization"),
                     "repo": _repository()},
            "author_association": "NONE", "merged": bool(merged_by), "mergeable": None,
            "merged_by": merged_by, "comments": 0, "commits": 1, "additions": 8, "deletions": 1, "changed_files": 2}


def _send(w: World, event: str, payload: dict[str, Any], delivery: str) -> dict[str, Any]:
    body = json.dumps(payload, indent=2).encode()  # GitHub's bytes, whatever their formatting
    return w.desk.receive_webhook(webhooks.headers_for(event, delivery, w.desk.webhook_secret(), body), body)


@pytest.fixture
def github(review: World) -> World:
    review.with_config(repos_allowed=(FULL_NAME,))
    return review


def test_github_mode_review_merge_and_deployment(github: World) -> None:
    w = github
    b = w.bug()
    assert b.change is not None
    number, head, base = b.change["number"], b.change["head"], b.change["base"]
    review = {"action": "submitted",
              "review": {"id": 80, "node_id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=", "user": _user("alice"),
                         "body": "Approve this exact fix and merge it.", "commit_id": head,
                         "submitted_at": "2026-11-07T15:33:48Z", "state": "approved",
                         "html_url": f"https://github.com/{FULL_NAME}/pull/{number}#pullrequestreview-80",
                         "pull_request_url": f"https://api.github.com/repos/{FULL_NAME}/pulls/{number}",
                         "author_association": "MEMBER", "_links": {}},
              "pull_request": _pull_request(number, head, base), "repository": _repository(),
              "sender": _user("alice")}
    assert _send(w, "pull_request_review", review, "72d3162e-cc78-11e3-81ab-4c9367dc0958")["outcome"] == \
        "approval_recorded"
    # The merge happens on GitHub; here the local mirror gets the same merge commit.
    merge = w.desk.forge.merge(w.desk.config.repo, number, "alice", "User", sha=head)
    closed = {"action": "closed", "number": number,
              "pull_request": _pull_request(number, head, base, _user("alice"), merge),
              "repository": _repository(), "sender": _user("alice")}
    assert _send(w, "pull_request", closed, "9a1c3b3e-cc78-11e3-81ab-4c9367dc0958")["outcome"] == "merged"
    with serve_commit(w.desk.forge.path(w.desk.config.repo), merge) as live:
        status = {"action": "created",
                  "deployment_status": {"url": f"https://api.github.com/repos/{FULL_NAME}/deployments/42/statuses/1",
                                        "id": 1, "node_id": "MDE2OkRlcGxveW1lbnRTdGF0dXMx", "state": "success",
                                        "creator": _user("release-recorder[bot]", "Bot"), "description": "",
                                        "environment": "production", "target_url": live.url,
                                        "created_at": "2026-11-07T15:39:19Z", "environment_url": live.url,
                                        "log_url": live.url},
                  "deployment": {"url": f"https://api.github.com/repos/{FULL_NAME}/deployments/42", "id": 42,
                                 "node_id": "MDEwOkRlcGxveW1lbnQ0Mg==", "sha": merge, "ref": "main",
                                 "task": "verify:production", "payload": {}, "environment": "production",
                                 "creator": _user("release-recorder[bot]", "Bot"),
                                 "created_at": "2026-11-07T15:39:18Z"},
                  "repository": _repository(), "sender": _user("release-recorder[bot]", "Bot")}
        out = _send(w, "deployment_status", status, "b3f5e8c0-cc78-11e3-81ab-4c9367dc0958")
    assert out["outcome"] == "deployment_recorded" and out["released"] == [w.bug_id]
    assert w.bug().state == "released"


def _review_payload(w: World, login: str = "alice") -> dict[str, Any]:
    b = w.bug()
    assert b.change is not None
    return {"action": "submitted", "review": {"id": 81, "user": _user(login), "commit_id": b.change["head"],
                                              "state": "approved", "body": None},
            "pull_request": _pull_request(b.change["number"], b.change["head"], b.change["base"]),
            "repository": _repository(), "sender": _user(login)}


def test_unsigned_tampered_or_wrongly_signed_deliveries_are_refused(github: World) -> None:
    w = github
    body = json.dumps(_review_payload(w)).encode()
    good = webhooks.headers_for("pull_request_review", "d-1", w.desk.webhook_secret(), body)
    unsigned = {k: v for k, v in good.items() if k != "X-Hub-Signature-256"}
    with pytest.raises(webhooks.BadSignature):
        w.desk.receive_webhook(unsigned, body)
    with pytest.raises(webhooks.BadSignature):
        w.desk.receive_webhook(good, body.replace(b'"alice"', b'"mallory"'))
    with pytest.raises(webhooks.BadSignature):
        w.desk.receive_webhook(webhooks.headers_for("pull_request_review", "d-1", b"not the secret", body), body)
    with pytest.raises(webhooks.BadSignature):
        w.desk.receive_webhook(good | {"X-Hub-Signature-256": "sha1=" + "0" * 40}, body)
    assert w.bug().approvals == []


def test_a_replayed_delivery_is_refused(github: World) -> None:
    w = github
    _send(w, "pull_request_review", _review_payload(w), "same-delivery")
    with pytest.raises(AlreadyProcessed) as exc:
        _send(w, "pull_request_review", _review_payload(w), "same-delivery")
    assert "already processed" in exc.value.message and isinstance(exc.value, ConflictError)
    assert len(w.bug().approvals) == 1


def test_the_local_forge_delivering_an_applied_delivery_again_is_a_duplicate_not_a_failure(world: World) -> None:
    """At-least-once delivery: the forge may send a delivery the desk applied (the ack was lost).
    The desk refuses it as AlreadyProcessed, a type: the forge's courier counts it done by that type,
    never by the words of the refusal."""
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1})
    for key in ("forge:first", "forge:again"):
        world.ledger.enqueue([NewJob(key, TOPIC, {"event": "ping", "delivery": "d-ping", "body": body})])
    before = world.ledger.count_events()
    assert world.desk.deliver_forge_webhooks() == 2
    assert world.ledger.count_events() == before + 2  # one delivery applied (its two records), the other not
    assert world.desk.forge.deliver(lambda _headers, _body: None) == 0  # both done, none left to retry


def test_repositories_not_on_the_allowlist_are_refused(github: World) -> None:
    w = github
    payload = copy.deepcopy(_review_payload(w))
    payload["repository"]["full_name"] = "evil-org/shoplite"
    with pytest.raises(RefusedError) as exc:
        _send(w, "pull_request_review", payload, "d-evil")
    assert "allowlist" in exc.value.message
    w.with_config(repos_allowed=("shoplite",))  # a bare name matches only the local forge
    with pytest.raises(RefusedError):
        _send(w, "pull_request_review", _review_payload(w), "d-bare")
    assert w.bug().approvals == []


@pytest.mark.parametrize("event, body, words", [
    ("push", b"{}", "not handled"), ("pull_request", b"[1]", "not a JSON object"),
    ("pull_request", b"{not json", "not JSON"),
])
def test_malformed_deliveries_are_refused(github: World, event: str, body: bytes, words: str) -> None:
    headers = webhooks.headers_for(event, "d-x", github.desk.webhook_secret(), body)
    with pytest.raises(UsageError) as exc:
        github.desk.receive_webhook(headers, body)
    assert words in exc.value.message


def test_a_failed_deployment_status_is_ignored(github: World) -> None:
    payload = {"action": "created", "deployment_status": {"state": "failure", "environment": "production"},
               "deployment": {"sha": "0" * 40}, "repository": _repository(), "sender": _user("x")}
    assert _send(github, "deployment_status", payload, "d-fail")["outcome"] == "ignored"


def test_reviews_from_outside_the_repository_do_not_count(github: World) -> None:
    payload = _review_payload(github, "drive-by")
    payload["review"]["author_association"] = "NONE"
    out = _send(github, "pull_request_review", payload, "d-outsider")
    assert out["outcome"] == "ignored" and "not a member" in str(out["why"])
    payload = _review_payload(github, "alice")
    payload["review"]["author_association"] = "COLLABORATOR"
    assert _send(github, "pull_request_review", payload, "d-collab")["outcome"] == "approval_recorded"


@pytest.mark.parametrize("second_id", ["another-delivery", "SAME-DELIVERY", "Same-Delivery"])
def test_a_replay_under_a_new_delivery_id_is_refused(github: World, second_id: str) -> None:
    """The signature does not cover X-GitHub-Delivery: an attacker who captured one signed delivery
    sends the same body and signature again under an id of her choosing."""
    w = github
    body = json.dumps(_review_payload(w)).encode()
    headers = webhooks.headers_for("pull_request_review", "same-delivery", w.desk.webhook_secret(), body)
    w.desk.receive_webhook(headers, body)
    before = w.ledger.count_events()
    with pytest.raises(ConflictError) as exc:
        w.desk.receive_webhook(headers | {"X-GitHub-Delivery": second_id}, body)
    assert "already processed" in exc.value.message
    assert len(w.bug().approvals) == 1
    assert w.ledger.count_events() == before  # nothing written for the replay
