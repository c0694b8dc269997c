"""The browser tests click through `click()` and submit with the keyboard through
`submit_with_enter()` (tests/system/browser/conftest.py), which wait for the page a click led to.

A bare Playwright `.click()` returns once the navigation it started has committed, with the new
page possibly half parsed; a read straight after raced the parser and CI once saw an empty
evidence page. This closes the class: no browser test may click or press Enter on its own."""

from __future__ import annotations

import ast

from tests.support import paths

BROWSER_TESTS = paths.ROOT / "tests" / "system" / "browser"
HELPERS = {"click", "submit_with_enter"}


def unsynchronised(source: str) -> list[int]:
    """Lines of `source` that click, or press Enter, outside the two waiting helpers."""
    tree = ast.parse(source)
    inside_helper: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in HELPERS:
            inside_helper.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in inside_helper:
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "click":
            found.append(node.lineno)
        elif (isinstance(func, ast.Attribute) and func.attr == "press"
              and any(isinstance(a, ast.Constant) and a.value == "Enter" for a in node.args)):
            found.append(node.lineno)
    return sorted(found)


def test_a_bare_click_or_enter_is_found_and_the_helpers_are_not() -> None:
    source = (
        "def click(target):\n    target.click()\n"
        "def submit_with_enter(page):\n    page.keyboard.press('Enter')\n"
        "def test_x(page):\n    page.get_by_role('link').click()\n"
        "    page.keyboard.press('Enter')\n    page.keyboard.press('Tab')\n"
        "    page.locator('a').click(timeout=5)\n    click(page.locator('a'))\n"
    )
    assert unsynchronised(source) == [6, 7, 9]


def test_no_browser_test_clicks_or_submits_without_waiting() -> None:
    files = sorted(BROWSER_TESTS.glob("*.py"))
    assert len(files) >= 10
    offenders = {f.name: lines for f in files if (lines := unsynchronised(f.read_text()))}
    # The skip link: Enter there moves the focus within the page and starts no navigation.
    assert offenders == {"test_signin.py": [53]}
