"""After `signoff demo` and `signoff serve --demo`, a visitor does in Chromium the work the demo left
them, as a person does it: opens "Waiting for me" from the printed one-time link, answers the card,
approves a repair contract and follows the case (its verifier and fixer run in the served process,
reproducing and verifying in the real sandbox) to a fix they accept, accepts the other case's fix,
decides on a notes run and ships it, approves and merges a bug's change; each page axe-clean. The
browser's own notification is opted into on the start page and shown for an item that arrives later.
Scripted steps are labelled simulated."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.requires import require_sandbox
from tests.support.serve import Process, signoff
from tests.system.browser.conftest import axe_violations, click, overflow

LINK = re.compile(r"^(http://127\.0\.0\.1:\d+)/signin/link#(sol_\S+)$")
SLOW = 180_000  # ms: a case's reproduction, two fixer attempts and the verification in the sandbox, under load


def _env() -> dict[str, str]:
    # As after `make demo`: the default home (.signoff in the working folder), nothing configured.
    return {k: v for k, v in os.environ.items() if not k.startswith("SIGNOFF_")}


class Visit:
    def __init__(self, url: str, secret: str, folder: Path) -> None:
        self.url, self.secret, self.folder = url, secret, folder


@pytest.fixture(scope="module")
def visit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Visit]:
    require_sandbox()  # the demos and the served verifier run in the real sandbox
    folder = tmp_path_factory.mktemp("after-make-demo")
    for name in ("repair", "notes", "desk"):
        done = subprocess.run(signoff("demo", name, "--json"), cwd=folder, env=_env(), capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"signoff demo {name} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    server = Process(signoff("serve", "--demo", "--port", "0"), _env(), cwd=folder)
    try:
        found = server.printed(LINK)
        yield Visit(found.group(1), found.group(2), folder)
    finally:
        server.stop()


def _waiting(page: Any) -> list[tuple[str, str]]:
    page.goto("/")
    items = page.locator("li.waiting")
    return [(items.nth(i).get_attribute("data-kind"), items.nth(i).locator("a").first.inner_text())
            for i in range(items.count())]


def _clean(page: Any) -> None:
    assert axe_violations(page) == []
    assert overflow(page) == 0


@pytest.mark.slow
def test_a_visitor_does_the_work_the_demo_left(visit: Visit, tabs: Any) -> None:
    tab = tabs(visit, width=1280)  # (a Site's url is all a tab needs)
    page = tab.page
    # The browser's notifications, as the page makes them, also written into the page for the test to
    # read (the CSP forbids evaluating strings, so the test waits for an element rather than a script).
    page.add_init_script("""
        const Real = window.Notification;
        window.Notification = function (title, options) {
            const seen = document.createElement("p");
            seen.className = "test-notified";
            seen.hidden = true;
            seen.textContent = title + " / " + options.body;
            document.body.appendChild(seen);
            return new Real(title, options);
        };
        window.Notification.requestPermission = () => Real.requestPermission();
        Object.defineProperty(window.Notification, "permission", {get: () => Real.permission});
    """)
    tab.context.grant_permissions(["notifications"], origin=visit.url)
    page.goto(f"/signin/link#{visit.secret}")
    click(page.get_by_role("button", name="Sign in"))
    page.wait_for_url(re.compile(r"/$"))

    kinds = [k for k, _ in _waiting(page)]
    for kind in ("approval card", "repair contract", "repair accept", "notes run", "bug review"):
        assert kind in kinds, kinds
    _clean(page)
    click(page.get_by_role("button", name="Notify me in this browser"))
    page.get_by_role("status").filter(has_text="notifies you").wait_for()
    tab.screenshot("home")

    # 1. The card: a scripted assistant's question (labelled simulated), answered in place.
    card = page.locator("li.card").filter(has_text="(simulated)")
    card.get_by_label("Approve").check()
    card.get_by_label("Reason").fill("The note only says what the fix does.")
    click(card.get_by_role("button", name="Answer"))
    assert "approval card" not in [k for k, _ in _waiting(page)]

    # 2. The contract: approve it; the served verifier reproduces, the fixer fixes, the fix is verified.
    contract = next(t for k, t in _waiting(page) if k == "repair contract")
    click(page.get_by_role("link", name=contract))
    assert "(simulated: the demo wrote this for you)" in page.content()  # the report the demo wrote
    _clean(page)
    click(page.get_by_role("button", name=re.compile(r"^Approve this contract")))
    case_url = page.url.split("#")[0]
    page.locator("#case-state", has_text="awaiting review").wait_for(timeout=SLOW)
    page.goto(case_url)
    # The scripted fixer's summary is labelled simulated, not a model's advisory opinion.
    summaries = page.locator("ol.attempts p.meta", has_text="fixer's summary")
    assert summaries.count() >= 1 and all("simulated" in t and "advisory" not in t for t in summaries.all_inner_texts())
    click(page.get_by_role("button", name=re.compile(r"^Accept ")))
    page.locator("#case-state", has_text="accepted").wait_for(timeout=SLOW)  # the served verifier took it

    # The browser's own notification told of the fix waiting (it arrived after opting in).
    page.goto("/")
    page.locator("p.test-notified", has_text="/ Accept or reject the fix").first.wait_for(state="attached",
                                                                                      timeout=60_000)

    # 3. The other case's verified fix: accept it; the verifier records the acceptance.
    [accept] = [t for k, t in _waiting(page) if k == "repair accept"]  # the first case's is accepted
    click(page.get_by_role("link", name=accept))
    _clean(page)
    click(page.get_by_role("button", name=re.compile(r"^Accept ")))
    page.locator("#case-state", has_text="accepted").wait_for(timeout=SLOW)

    # 4. Release notes: approve every sentence, then ship.
    notes = next(t for k, t in _waiting(page) if k == "notes run")
    click(page.get_by_role("link", name=notes))
    _clean(page)
    click(page.get_by_role("button", name="Approve all"))
    click(page.get_by_role("button", name="Ship"))
    assert "shipped" in page.content()
    assert "notes run" not in [k for k, _ in _waiting(page)]

    # 5. The bug: the scripted agents' notes say simulated (not a model's opinion); approve, then merge.
    review = next(t for k, t in _waiting(page) if k == "bug review")
    click(page.get_by_role("link", name=review))
    notes_section = page.locator("section", has=page.locator("#notes-title"))
    assert "simulated" in notes_section.inner_text() and "Model opinions" not in notes_section.inner_text()
    _clean(page)
    click(page.get_by_role("button", name=re.compile(r"^Approve this exact head")))
    click(page.get_by_role("button", name=re.compile(r"^Merge this exact head")))
    assert "Merged as" in page.content()
    assert "bug review" not in [k for k, _ in _waiting(page)]

    # The scripted people's decisions carry the label: the demo's own notes run, decided by its script.
    page.goto("/notes")
    click(page.locator("a[href^='/notes/runs/'][href$='/run']").first)
    assert page.locator("p.meta", has_text="last decision by demo-approver").first.locator(
        ".badge.simulated").count() == 1
