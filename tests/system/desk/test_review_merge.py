"""Step 6: approvals bind the exact head; a push clears them; a human merges; tier 2 needs two
distinct humans and a code owner; the shared owner key never counts as two (or as one for tier 2)."""

from __future__ import annotations

import json
import uuid

import pytest

from signoff.desk import webhooks
from signoff.desk.forge import OWNER
from signoff.kernel.errors import RefusedError
from tests.support.fixtures.desk import World


def _cr(w: World) -> tuple[str, int, str]:
    b = w.bug()
    assert b.change is not None
    return b.change["repo"], b.change["number"], b.change["head"]


def test_human_review_and_merge_through_signed_webhooks(review: World) -> None:
    w = review
    repo, number, head = _cr(w)
    w.desk.forge.review(repo, number, "alice", "approved", commit_id=head)
    w.deliver()
    assert [(a["login"], a["person"]) for a in w.bug().approvals] == [("alice", "alice")]
    merge = w.desk.merge(w.actor("alice"), w.bug_id)
    assert w.bug().state == "in_review"  # recorded only from the signed webhook
    w.deliver()
    b = w.bug()
    assert b.state == "merged" and b.merge is not None and b.merge["merge_commit"] == merge
    assert b.merge["merged_by"] == {"login": "alice", "type": "User"} and b.merge["tier"] == 1


def test_a_bot_merger_is_refused(review: World) -> None:
    w = review
    repo, number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    with pytest.raises(RefusedError):
        w.desk.merge(w.actor("release-bot"), w.bug_id)  # a bot credential
    with pytest.raises(RefusedError):
        w.desk.merge(w.actor("shared"), w.bug_id)  # the shared key is not a named human
    w.desk.forge.merge(repo, number, "merge-bot[bot]", "Bot")
    w.deliver()
    b = w.bug()
    assert b.state == "needs_human" and "a human user must merge" in (b.needs_human or "")
    assert b.merge is None


def test_a_push_clears_approvals_and_the_new_head_needs_its_own(review: World) -> None:
    w = review
    repo, number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    source = w.desk.forge.read(repo, head, "shoplite/checkout.py") or ""
    new_head = w.desk.forge.push(repo, number, {"shoplite/checkout.py": source + "\n# late change\n"}, "late", "bob")
    w.deliver()
    b = w.bug()
    assert b.change is not None and b.change["head"] == new_head and b.approvals == []
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("alice"), w.bug_id)
    assert "no human approval of this exact head" in exc.value.message
    # an approval that names the old head is refused; a forge review of the old head is ignored
    from signoff.kernel.errors import ConflictError
    with pytest.raises(ConflictError):
        w.desk.approve(w.actor("alice"), w.bug_id, head)
    w.desk.forge.review(repo, number, "alice", "approved", commit_id=head)
    w.deliver()
    assert w.bug().approvals == []


def _signed_merge(w: World, head: str, login: str = "alice", kind: str = "User") -> dict[str, object]:
    repo, number, _ = _cr(w)
    cr = w.desk.forge.change(repo, number) | {"head": head, "merged": True, "merge_commit": "0" * 40,
                                              "merged_by": {"login": login, "type": kind}}
    body = json.dumps({"action": "closed", "number": number, "pull_request": webhooks.pull_request(OWNER, repo, cr),
                       "repository": webhooks.repository(OWNER, repo),
                       "sender": webhooks.user(login, kind)}).encode()
    headers = webhooks.headers_for("pull_request", str(uuid.uuid4()), w.desk.webhook_secret(), body)
    return w.desk.receive_webhook(headers, body)


def test_a_merge_whose_head_differs_from_the_reviewed_head_is_refused(review: World) -> None:
    w = review
    _repo, _number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    result = _signed_merge(w, "f" * 40)
    assert result["outcome"] == "merge_refused" and "is not the reviewed head" in str(result["why"])
    assert w.bug().state == "needs_human" and w.bug().merge is None


def test_tier_two_with_one_human_is_refused(review: World) -> None:
    w = review
    w.with_config(sensitive_paths=("shoplite/**",))
    _repo, _number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("alice"), w.bug_id)
    assert "two distinct humans; has 1" in exc.value.message
    assert _signed_merge(w, head)["outcome"] == "merge_refused"


def test_tier_two_with_one_key_twice_is_one_human(review: World) -> None:
    w = review
    w.with_config(sensitive_paths=("shoplite/**",))
    repo, number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    w.desk.forge.review(repo, number, "alice", "approved", commit_id=head)
    w.deliver()
    assert len(w.bug().approvals) == 3
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("alice"), w.bug_id)
    assert "has 1" in exc.value.message


def test_the_shared_owner_key_never_counts_for_tier_two(review: World) -> None:
    w = review
    w.with_config(sensitive_paths=("shoplite/**",))
    _repo, _number, head = _cr(w)
    w.desk.approve(w.actor("shared"), w.bug_id, head)
    w.desk.approve(w.actor("shared"), w.bug_id, head)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("alice"), w.bug_id)
    assert "shared owner key never counts" in exc.value.message


def test_tier_two_needs_a_code_owner(review: World) -> None:
    w = review
    w.with_config(sensitive_paths=("shoplite/**",))
    _repo, _number, head = _cr(w)
    w.desk.approve(w.actor("bob"), w.bug_id, head)
    w.desk.approve(w.actor("carol"), w.bug_id, head)
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("bob"), w.bug_id)
    assert "code owner" in exc.value.message
    w.desk.approve(w.actor("alice"), w.bug_id, head)  # alice owns shoplite/ in CODEOWNERS
    w.desk.merge(w.actor("bob"), w.bug_id)
    w.deliver()
    assert w.bug().state == "merged" and w.bug().merge["tier"] == 2


def test_tiers_by_path(review: World) -> None:
    w = review
    b = w.bug()
    assert w.desk.tier(b)[0] == 1
    assert w.with_config(sensitive_paths=("tests/**",)).tier(b)[0] == 2
    assert w.with_config(docs_paths=("shoplite/**", "tests/**")).tier(b)[0] == 0


def test_reviews_from_bots_are_not_approvals(review: World) -> None:
    w = review
    repo, number, head = _cr(w)
    w.desk.forge.review(repo, number, "review-bot", "approved", user_type="Bot", commit_id=head)
    w.desk.forge.review(repo, number, "bob", "commented", commit_id=head)
    w.deliver()
    assert w.bug().approvals == []
    with pytest.raises(RefusedError):
        w.desk.approve(w.actor("release-bot"), w.bug_id, head)


def test_tier_two_counts_people_not_logins(review: World) -> None:
    """The attack: desk owner `alice` approves, then the same person's second forge login
    `Alice-Work` (a member, a User) approves on the forge, and alice merges a sensitive change."""
    w = review
    w.with_config(sensitive_paths=("shoplite/**",))
    repo, number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    w.desk.forge.review(repo, number, "Alice-Work", "approved", commit_id=head)
    w.deliver()
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("alice"), w.bug_id)
    assert "has 1" in exc.value.message and "alice-work" in exc.value.message
    assert [(a["login"], a["person"]) for a in w.bug().approvals] == [("alice", "alice"), ("alice-work", None)]
    assert _signed_merge(w, head)["outcome"] == "merge_refused"
    assert w.bug().state == "needs_human" and w.bug().merge is None


def test_two_logins_bound_to_one_person_count_once_and_a_bound_login_counts_as_its_person(review: World) -> None:
    from signoff.desk.people import People

    w = review
    people = People.parse({"alice": {"forge": ["Alice-Work"]}, "bob": {"forge": ["bob-gh"]}})
    w.with_config(sensitive_paths=("shoplite/**",), people=people)
    repo, number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    w.desk.forge.review(repo, number, "Alice-Work", "approved", commit_id=head)
    w.deliver()
    assert {a["person"] for a in w.bug().approvals} == {"alice"}
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("alice"), w.bug_id)
    assert "two distinct humans; has 1" in exc.value.message
    w.desk.forge.review(repo, number, "bob-gh", "approved", commit_id=head)
    w.deliver()
    w.desk.merge(w.actor("alice"), w.bug_id)
    w.deliver()
    assert w.bug().state == "merged"


def test_a_signed_merge_into_another_branch_is_not_the_bugs_merge(review: World) -> None:
    """The attack: the pull request is retargeted at a side branch and merged there; the forge's
    signed webhook says "merged", but nothing reached the default branch."""
    w = review
    repo, number, head = _cr(w)
    w.desk.approve(w.actor("alice"), w.bug_id, head)
    cr = w.desk.forge.change(repo, number) | {"merged": True, "merge_commit": "0" * 40, "base_ref": "side",
                                              "merged_by": {"login": "alice", "type": "User"}}
    body = json.dumps({"action": "closed", "number": number, "pull_request": webhooks.pull_request(OWNER, repo, cr),
                       "repository": webhooks.repository(OWNER, repo), "sender": webhooks.user("alice")}).encode()
    result = w.desk.receive_webhook(webhooks.headers_for("pull_request", str(uuid.uuid4()), w.desk.webhook_secret(),
                                                         body), body)
    assert result == {"outcome": "ignored", "why": f"merged into 'side', not the default branch 'main' of {repo}"}
    b = w.bug()
    assert b.state == "in_review" and b.merge is None
    # a delivery whose pull request is another one than the number it names is ignored too
    other = json.loads(body) | {"number": number, "pull_request": webhooks.pull_request(OWNER, repo, cr | {
        "base_ref": "main", "number": number + 1})}
    raw = json.dumps(other).encode()
    result = w.desk.receive_webhook(webhooks.headers_for("pull_request", str(uuid.uuid4()), w.desk.webhook_secret(),
                                                         raw), raw)
    assert result["outcome"] == "ignored" and w.bug().merge is None


def test_a_review_dismissed_on_the_forge_no_longer_approves(review: World) -> None:
    """The forge's maintainers dismiss an approving review; the desk must not keep counting it."""
    w = review
    repo, number, head = _cr(w)
    approved = w.desk.forge.review(repo, number, "alice", "approved", commit_id=head)
    w.deliver()
    assert [a["login"] for a in w.bug().approvals] == ["alice"]
    cr = w.desk.forge.change(repo, number)
    body = json.dumps({"action": "dismissed", "number": number, "pull_request": webhooks.pull_request(OWNER, repo, cr),
                       "review": approved | {"state": "dismissed"}, "repository": webhooks.repository(OWNER, repo),
                       "sender": webhooks.user("maintainer")}).encode()
    result = w.desk.receive_webhook(webhooks.headers_for("pull_request_review", str(uuid.uuid4()),
                                                         w.desk.webhook_secret(), body), body)
    with pytest.raises(RefusedError) as exc:
        w.desk.merge(w.actor("alice"), w.bug_id)
    assert "no human approval of this exact head" in exc.value.message
    assert result["outcome"] == "approval_withdrawn" and w.bug().approvals == []
