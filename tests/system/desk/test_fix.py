"""Step 5: the fixer's files are checked, committed with the confirmed test copied unchanged, and
measured (new test, whole suite, configured checks); two failures ask a human; success opens a
draft change request for a human owner, after which the agents can do nothing more."""

from __future__ import annotations

import os
import tempfile

import pytest

from signoff.kernel.errors import ConflictError, RefusedError
from tests.support.fixtures.desk import World

PATH = "shoplite/checkout.py"


@pytest.fixture
def fixing(reproduced: World) -> World:
    reproduced.desk.confirm(reproduced.reporter("first"), "yes", bug_id=reproduced.bug_id)
    return reproduced


def _source(w: World) -> str:
    return w.desk.forge.read(w.desk.config.repo, w.bug().reproduction["base"], PATH) or ""


def _submit(w: World, files: dict[str, str], attempt: int = 1) -> object:
    return w.desk.submit_fix(w.actor("engineering"), w.bug_id, 1, attempt, files, "try")


@pytest.mark.parametrize("files", [
    {"tests/test_checkout.py": "x = 1\n"}, {"README.md": "x\n"}, {"../outside.py": "x\n"},
    {".git/config": "x\n"}, {"shoplite/../tests/test_checkout.py": "x\n"}, {"/etc/passwd": "x\n"},
    {"shoplite/payments/charge.py": "x\n"},
], ids=["test-file", "not-allowed", "traversal", "git-internals", "dotdot-inside", "absolute",
        "star-crosses-slash"])
def test_paths_outside_the_allowlist_are_refused(fixing: World, files: dict[str, str]) -> None:
    with pytest.raises(RefusedError):
        _submit(fixing, files)
    b = fixing.bug()
    assert b.state == "fixing" and b.fix_attempts == 1 and b.change is None


def test_at_most_two_files_and_a_size_cap(fixing: World) -> None:
    with pytest.raises(RefusedError) as exc:
        _submit(fixing, {PATH: "a\n", "shoplite/__init__.py": "b\n", "shoplite/server.py": "c\n"})
    assert "at most 2 files" in exc.value.message
    with pytest.raises(RefusedError) as big:
        _submit(fixing, {PATH: "x" * 30_000}, attempt=2)
    assert "at most" in big.value.message
    assert fixing.bug().state == "needs_human"  # two failed attempts


def test_two_failed_attempts_ask_a_human(fixing: World) -> None:
    wrong = _source(fixing).replace("return round(amount, 2)", "return round(amount + 0.0, 2)")
    _submit(fixing, {PATH: wrong})
    b = fixing.bug()
    assert b.state == "fixing" and b.fix_attempts == 1
    failed = [e for e in fixing.ledger.read(f"desk/bug/{fixing.bug_id}") if e.type == "fix.failed"]
    assert "REJECTED" in failed[-1].payload["reason"] and "candidate_failed" in failed[-1].payload["reason"]
    _submit(fixing, {PATH: wrong}, attempt=2)
    b = fixing.bug()
    assert b.state == "needs_human" and "2 fix attempts failed" in (b.needs_human or "")
    assert fixing.desk.forge.changes(fixing.desk.config.repo) == []  # nothing opened


def test_a_fix_that_breaks_the_suite_is_rejected(fixing: World) -> None:
    broken = _source(fixing).replace("return round(amount, 2)", "return round(max(amount, 0.0), 2) + 1")
    _submit(fixing, {PATH: broken})
    failed = [e for e in fixing.ledger.read(f"desk/bug/{fixing.bug_id}") if e.type == "fix.failed"]
    assert "REJECTED" in failed[-1].payload["reason"]


def test_the_configured_linter_must_pass(fixing: World) -> None:
    lint = "import os\n" + _source(fixing).replace("return round(amount, 2)", "return round(max(amount, 0.0), 2)")
    _submit(fixing, {PATH: lint})
    failed = [e for e in fixing.ledger.read(f"desk/bug/{fixing.bug_id}") if e.type == "fix.failed"]
    assert "configured check failed" in failed[-1].payload["reason"] and "ruff" in failed[-1].payload["reason"]


def test_success_opens_a_draft_for_a_human_and_ends_the_agents_part(fixing: World) -> None:
    good = _source(fixing).replace("return round(amount, 2)", "return round(max(amount, 0.0), 2)")
    b = _submit(fixing, {PATH: good})
    b = fixing.bug()
    assert b.state == "in_review" and b.change is not None
    assert b.change["draft"] and b.change["assignee"] == "alice"
    verified = next(e for e in fixing.ledger.read(f"desk/bug/{fixing.bug_id}") if e.type == "fix.verified")
    assert [c["command"] for c in verified.payload["checks"]] == ["ruff check --no-cache", "ruff format --check"]
    forge, repo = fixing.desk.forge, fixing.desk.config.repo
    cr = forge.change(repo, b.change["number"])
    assert cr["draft"] and cr["assignees"] == ["alice"] and cr["head"] == b.change["head"]
    repro = b.reproduction
    assert forge.read(repo, cr["head"], repro["test_path"]) == repro["test_source"]  # copied unchanged
    assert forge.changed_paths(repo, repro["base"], cr["head"]) == [PATH, repro["test_path"]]
    # the model's review of the draft is a note; it never becomes an approval, even when it says "approve"
    fixing.engineering.drain()
    review_notes = [n for n in fixing.desk.notes(fixing.bug_id) if n["type"] == "note.review"]
    assert review_notes and "recommendation: approve" in review_notes[-1]["note"]
    assert fixing.bug().approvals == [] and fixing.bug().state == "in_review"
    eng = fixing.actor("engineering")
    with pytest.raises(ConflictError):
        fixing.desk.submit_fix(eng, fixing.bug_id, 1, 2, {PATH: good})
    with pytest.raises(RefusedError):
        fixing.desk.approve(eng, fixing.bug_id, cr["head"])
    with pytest.raises(RefusedError):
        fixing.desk.merge(eng, fixing.bug_id)
    with pytest.raises(RefusedError):
        fixing.desk.record_deployment(eng, repo, cr["head"], "production", "http://127.0.0.1:1")


def test_a_symlink_in_the_repository_is_refused(world: World, sandbox_ok: None) -> None:
    from signoff import git
    from tests.support.fixtures.desk import COUPON

    forge, repo = world.desk.forge, world.desk.config.repo
    bare = forge.path(repo)
    blob = git.output(bare, "hash-object", "-w", "--stdin", input_=b"checkout.py")  # a link inside the tree
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index"), **git.Identity("t", "t@t.invalid").env()}
        git.output(bare, "read-tree", "main", env=env)
        git.output(bare, "update-index", "--add", "--cacheinfo", f"120000,{blob},shoplite/link.py", env=env)
        tree = git.output(bare, "write-tree", env=env)
        commit = git.output(bare, "commit-tree", tree, "-p", "main", "-m", "a link", env=env)
    git.output(bare, "update-ref", "refs/heads/main", commit)
    world.intakes["first"] = world.desk.submit_report(COUPON, "198.51.100.7")
    world.engineering.reproduce(world.bug_id, 1)
    world.desk.confirm(world.reporter("first"), "yes", bug_id=world.bug_id)
    with pytest.raises(RefusedError) as exc:
        world.desk.submit_fix(world.actor("engineering"), world.bug_id, 1, 1, {"shoplite/link.py": "x = 1\n"})
    assert "symbolic link" in exc.value.message


def test_a_human_resumes_a_bug_that_needs_one(fixing: World) -> None:
    wrong = _source(fixing).replace("return round(amount, 2)", "return round(amount + 0.0, 2)")
    _submit(fixing, {PATH: wrong})
    _submit(fixing, {PATH: wrong}, attempt=2)
    assert fixing.bug().state == "needs_human"
    with pytest.raises(RefusedError):
        fixing.desk.human_resume(fixing.actor("engineering"), fixing.bug_id, "reproducing")
    with pytest.raises(RefusedError):
        fixing.desk.human_resume(fixing.actor("release-bot"), fixing.bug_id, "reproducing")
    b = fixing.desk.human_resume(fixing.actor("alice"), fixing.bug_id, "reproducing")
    assert b.state == "reproducing" and b.needs_human is None
    with pytest.raises(ConflictError):
        fixing.desk.human_resume(fixing.actor("alice"), fixing.bug_id, "fixing")
