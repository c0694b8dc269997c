"""The fifteenth pass's training options (`airlock_train.py --forms`, `--tracker-threshold`): issue
templates filled in the way GitHub writes a form's answers, the same texts every time, and a
threshold read over the tracker-like honest groups only."""

from __future__ import annotations

import random
import sys

from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import airlock_train as tr

FORM = {"name": "Bug report", "body": [
    {"type": "markdown", "attributes": {"value": "Thanks for taking the time to fill out this bug report!"}},
    {"type": "textarea", "attributes": {"label": "Describe the bug"}},
    {"type": "input", "attributes": {"label": "Version"}},
    {"type": "dropdown", "attributes": {"label": "Operating system", "options": ["Linux", "macOS"]}},
    {"type": "checkboxes", "attributes": {"label": "Checks", "options": [{"label": "I searched the issues"}]}},
]}
TEMPLATE = ("---\nname: Bug report\nabout: Report a bug\n---\n<!-- Fill in the sections below. -->\n\n"
            "**Describe the bug**\n\n**To Reproduce**\n1. Go to '...'\n\n**Desktop**\n - OS: [e.g. iOS]\n"
            "- [ ] I read the docs\n")
LINES = ["The export drops the header row of every CSV file.", "It started after the upgrade to 2.3 last week."]


def test_a_form_is_written_as_github_writes_its_answers() -> None:
    text = tr._fill_yaml_form(FORM, random.Random(36), LINES)
    assert "Thanks for taking the time" not in text  # a form's Markdown is never written into the issue
    headings = [line for line in text.split("\n") if line.startswith("### ")]
    assert headings == ["### Describe the bug", "### Version", "### Operating system", "### Checks"]
    assert "I searched the issues" in text


def test_a_markdown_template_loses_its_front_matter_and_gets_answers() -> None:
    text = tr._fill_markdown(TEMPLATE, random.Random(36), LINES)
    assert not text.startswith("---") and "about: Report a bug" not in text
    assert "**Describe the bug**" in text and "[e.g. iOS]" not in text
    assert any(line in text for line in LINES)
    assert text == tr._fill_markdown(TEMPLATE, random.Random(36), LINES)


def test_the_tracker_threshold_reads_reports_records_requests_and_forms_only() -> None:
    assert all(tr.tracker_like(group) for group in (
        "bugzilla reports (mozilla/bugbug)", "webcompat issues (mozilla/bugbug)", "github issues (InEx-Bug npm)",
        "signoff honest reports", "tool-output records", tr.REQUESTS, tr.FORMS))
    assert not any(tr.tracker_like(group) for group in (
        "carriers", "commit messages + issue templates", "translated docs and messages", "sep task data"))
