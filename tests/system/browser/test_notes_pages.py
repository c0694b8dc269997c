"""Release notes review in a real browser against a real `signoff serve`: the runs, a run's
sentences with their cited facts, verifier codes and the editor's OVERCLAIM marks; approve all,
reject after it, an edit checked live and verified again on save (then unapprovable), approve
with the keyboard, ship; the preview with [F#] tags graded beside the one-shot baseline. From the
attacker's side: no CSRF token, a person who is not a decider, paths out of the notes folder, bad
commands, approving text that does not verify; each refused with nothing recorded."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from signoff.demo.notes import BASELINE, build_history
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.notes.decisions import shown_of
from signoff.notes.run import start_run
from tests.support.deciding import decide, decisions, state_of
from tests.support.requires import require_binary
from tests.system.browser.conftest import Site, axe_violations, click, make_site, overflow, submit_with_enter, tab_to


@dataclass
class Review:
    site: Site
    ledger: SqlLedger
    flow: Path  # the run the flow test ships
    attacked: Path  # a run the attacks leave as it was

    def actions(self, run: Path) -> list[tuple[str, str | None, str, str]]:
        return [(d["action"], d.get("target"), d["by"], d["source"]) for d in decisions(self.ledger, run)]


@pytest.fixture(scope="module")
def review(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Review]:
    require_binary("git", "apt-get install -y git")
    site = make_site(tmp_path_factory, '[notes]\ndeciders = ["alice"]\n')
    site.add_user("alice", "Alice")
    site.add_user("bob", "Bob")
    settings = Settings.load(home=str(site.home), env={})
    repo = site.root / "studio"
    build_history(repo)
    runs = []
    for name in ("release-0.2", "attacked"):
        run = site.home / "notes" / name
        run.mkdir(parents=True)
        start_run(repo, None, run, settings, script="demo")  # the demo writer embellishes once
        (run / "baseline.md").write_text(BASELINE, encoding="utf-8")
        runs.append(run)
    ledger = SqlLedger.open(settings)
    site.start()
    try:
        yield Review(site, ledger, runs[0], runs[1])
    finally:
        site.stop()
        ledger.close()


@pytest.mark.slow
def test_review_notes_with_reject_after_approve_all_and_ship(review: Review, tabs: Any) -> None:
    tab = tabs(review.site)
    tab.expect_refusal(403)
    tab.sign_in("alice")
    page = tab.page
    click(page.get_by_role("link", name="Notes", exact=True))
    runs = page.get_by_role("table", name="Runs")
    assert "in review" in runs.get_by_role("row", name="release-0.2").inner_text()
    tab.screenshot("notes-runs")
    assert axe_violations(page) == [] and overflow(page) == 0
    click(runs.get_by_role("link", name="release-0.2"))

    s7 = page.locator("li#S7")
    # The editor's OVERCLAIM marks on the first draft that was sent back, and the revision beside them.
    marks = s7.get_by_role("list", name="Marks on the first draft of S7").inner_text()
    assert "OVERCLAIM" in marks and "improved" in marks
    assert "improved" not in s7.locator("p.text").inner_text()
    # A cited fact expands to the full commit hash.
    click(s7.get_by_role("list", name="Facts cited by S7").get_by_text("[F1]"))
    fact = s7.locator("p.fact").inner_text()
    assert fact.startswith("commit ") and len(fact.split()[1].rstrip(":")) == 40
    click(page.locator("li#S1").get_by_text("[F8]"))
    assert "count commits (range): 4" in page.locator("li#S1 p.fact").first.inner_text()
    tab.screenshot("notes-run")
    assert axe_violations(page) == [] and overflow(page) == 0

    reader = tabs(review.site)  # bob reads the same run while alice decides
    reader.sign_in("bob")
    reader.page.goto("/notes/runs/release-0.2")
    assert "This release brings" not in reader.page.locator("#preview-rendered").inner_text()
    click(reader.page.get_by_text("The Markdown, as it ships"))  # the part of the preview kept current live
    click(page.get_by_role("button", name="Approve all"))
    assert page.locator("li.sentence.status-approved").count() == 10
    # The reader's preview follows the decisions live, with its [F#] tags and its grade.
    first = "This release brings 4 commits from 3 contributors. [F8][F12]"
    reader.page.locator("#preview-text", has_text=first).wait_for()
    assert reader.page.locator("#decision-count").inner_text() == "1"
    assert reader.page.locator("#grade-ours").inner_text().endswith("(100.0%)")
    assert "Decisions changed (1 so far" in reader.page.locator("#live-status").inner_text()
    click(page.get_by_role("button", name="Reject S3"))  # after approve all: the last decision wins
    assert page.locator("li#S3 .badge.status").inner_text() == "rejected"
    assert "1157.1%" not in page.locator("#preview-rendered").inner_text()

    # An edit that adds an unsupported number: the live check says so before saving ...
    s2 = page.locator("li#S2")
    click(s2.get_by_text("Edit S2"))
    field = s2.get_by_label("New text of S2", exact=False)
    field.fill("The changes touch 3 files, adding 99 lines and deleting 7.")
    s2.locator("output.live-check").filter(has_text="NUMBER_UNSUPPORTED '99'").wait_for()
    # ... and the saved edit is verified again: it needs approval, and cannot have it.
    click(s2.get_by_role("button", name="Save the edit of S2"))
    s2 = page.locator("li#S2")
    assert s2.locator(".badge.status").inner_text() == "pending" and "does not verify" in s2.inner_text()
    assert "NUMBER_UNSUPPORTED" in s2.get_by_role("list", name="Verifier codes for S2").inner_text()
    assert s2.get_by_role("button", name="Approve S2").count() == 0
    click(page.get_by_role("button", name="Ship"))
    alert = page.get_by_role("alert").inner_text()
    assert "S2: not approved since its edit; NUMBER_UNSUPPORTED '99'" in alert and "Nothing was recorded" in alert

    page.goto("/notes/runs/release-0.2")
    s2 = page.locator("li#S2")
    click(s2.get_by_text("Edit S2"))
    s2.get_by_label("New text of S2", exact=False).fill("The changes touch 3 files.")
    s2.locator("output.live-check").filter(has_text="Verifies.").wait_for()
    click(s2.get_by_role("button", name="Save the edit of S2"))
    # Keyboard only: Tab to the button, Enter.
    click(page.locator("h1"))
    tab_to(page, "Approve S2")
    submit_with_enter(page)
    page.locator("li#S2.status-approved").wait_for()
    tab_to(page, "Ship")
    submit_with_enter(page)
    page.locator(".ready", has_text="Shipped").wait_for()

    rendered = page.locator("#preview-rendered")  # the notes as they read, not their Markdown
    preview = rendered.inner_text()
    assert "This release brings 4 commits from 3 contributors. [F8][F12]" in preview
    assert "The changes touch 3 files. [F9][F10][F11]" in preview and "<a id" not in preview
    assert rendered.get_by_role("heading", name="Facts").count() == 1 and "## Facts" not in preview
    assert page.locator("#grade-ours").inner_text().endswith("(100.0%)")
    # 4 commits and 3 contributors supported, "6 commits" not (git says 4); 35% and 2 seconds not checkable
    assert page.locator("#grade-baseline").inner_text() == "2/3 (66.7%)"
    assert page.get_by_role("button", name="Ship").count() == 0
    tab.screenshot("notes-shipped")
    assert axe_violations(page) == [] and overflow(page) == 0
    assert review.actions(review.flow) == [
        ("approve", "all", "alice", "web"), ("reject", "S3", "alice", "web"), ("edit", "S2", "alice", "web"),
        ("edit", "S2", "alice", "web"), ("approve", "S2", "alice", "web"), ("ship", None, "alice", "web")]
    assert state_of(review.ledger, review.flow).shipped


def test_attacks_on_the_decisions_are_refused_and_record_nothing(review: Review) -> None:
    run = review.attacked
    decide(review.ledger, run, "edit S1 This release brings 12 commits.", "alice")  # no longer verifies
    decide(review.ledger, run, 'edit S4 <img src=x onerror="document.title=1"> wrote 2 of the 4 commits.', "alice")
    alice, csrf = review.site.signed_in("alice")
    bob, bob_csrf = review.site.signed_in("bob")
    before = decisions(review.ledger, run)
    url = "/notes/decide/attacked"
    try:
        for token in ("", "forged", bob_csrf):
            r = alice.post(url, data={"csrf": token, "action": "approve_all"})
            assert r.status_code == 403 and "CSRF" in r.text
        r = bob.post(url, data={"csrf": bob_csrf, "action": "approve_all"})
        assert r.status_code == 403 and "bob may not decide" in r.text
        shown = bob.get("/notes/runs/attacked").text
        assert "You can read this run" in shown  # reading is open to everyone signed in
        assert "&lt;img src=x" in shown and "<img src=x" not in shown  # an edit's markup is text
        shown = shown_of(state_of(review.ledger, run), "approve", "S1")
        r = alice.post(url, data={"csrf": csrf, "action": "approve", "sentence": "S1", "shown": shown})
        assert r.status_code == 403 and "S1 does not verify: NUMBER_UNSUPPORTED" in r.text
        r = alice.post(url, data={"csrf": csrf, "action": "approve", "sentence": "S1"})
        assert r.status_code == 400 and "does not say which text it was shown" in r.text
        for form, message in (({"action": "frobnicate"}, "not a decision"),
                              ({"action": "approve", "sentence": "S99"}, "no sentence S99"),
                              ({"action": "approve", "sentence": "S1 S2"}, "takes nothing after the id"),
                              ({"action": "edit", "sentence": "S2", "text": "one\n# two"}, "line break"),
                              ({"action": "edit", "sentence": "S2", "text": "  "}, "needs the new text")):
            r = alice.post(url, data={"csrf": csrf, "shown": shown, **form})
            assert r.status_code == 400 and message in r.text, form
        # Spelt so that the client sends them as they are (it would resolve a plain `..` itself).
        for name in ("%2e%2e", "%2e%2e%2F%2e%2e", "..%2Fsignoff.db", "%2e%2e/%2e%2e/etc", "attacked/%2e%2e/%2e%2e/web",
                     "%2Fetc", "attacked%5C..%5C..", "missing-run"):
            assert alice.get(f"/notes/runs/{name}").status_code == 404, name
            assert alice.post(f"/notes/decide/{name}", data={"csrf": csrf, "action": "ship"}).status_code == 404
        check = "/notes/check/attacked"
        assert alice.get(check, params={"sentence": "S9", "text": "Commit 2dfd2d1c7a by Ritweek."}).json()["ok"]
        bad = alice.get(check, params={"sentence": "S9", "text": "Commit 2dfd2d1c7b by Ritweek."}).json()
        assert not bad["ok"] and bad["errors"][0]["code"] == "HASH_UNSUPPORTED"
        assert alice.get(check, params={"sentence": "S99", "text": "x"}).status_code == 404
        assert alice.get(check, params={"sentence": "S9", "text": "a\nb"}).status_code == 400
        assert alice.get("/notes/live/%2e%2e%2Fsignoff.db").status_code == 404
    finally:
        alice.close()
        bob.close()
    assert decisions(review.ledger, run) == before
    assert review.actions(run) == [("edit", "S1", "alice", "cli"), ("edit", "S4", "alice", "cli")]
