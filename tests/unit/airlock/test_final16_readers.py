"""The readers of the seventeenth pass's final set (`bench/airlock_final16.py`), on synthetic files
laid out as its sources are: no text of the real set is in here, and nothing is scanned."""

from __future__ import annotations

import json
import sys

from tests.support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import airlock_final16 as final

MAIL_MODULE = '''
attacks = [
    Email(subject="Weekly sync", content="""First planted mail body, long enough to count."""),
    Email(subject="Weekly sync", content="""First planted mail body, long enough to count."""),
    Email(subject="Other", content=f"""A body with a {hole} is filled at run time"""),
    Other(content="""Not an Email call, so not an injected mail body at all."""),
]
'''
PAGE_MODULE = '''
"""A module docstring that is long enough to count, and must not be read."""
BANNER = """An injected banner text of at least eight words in it."""
SHORT = "too short to be page text"
POPUP = f"""An f-string popup {with_a_hole} of eight words or more here"""

class Attack:
    """A class docstring that is long enough to count as well, skipped."""
    message: str = "A forum comment an attack writes into the page for the agent."
'''


def test_advweb_reads_the_chosen_and_rejected_string_of_every_row() -> None:
    rows = [{"prompt": "the attacker's own prompt", "chosen": " first ", "rejected": "second"},
            {"prompt": "p", "chosen": "third", "rejected": ""}]
    assert final.advweb_rows("\n".join(json.dumps(row) for row in rows) + "\n") == ["first", "second", "third"]


def test_advweb_deduplicates_over_both_files() -> None:
    row = json.dumps({"chosen": "same", "rejected": "other"})
    assert final.advweb(lambda path: row) == [("advweb html injection", "other"), ("advweb html injection", "same")]


def test_doomarena_mail_reads_only_literal_email_contents() -> None:
    assert final.mail_contents(MAIL_MODULE) == ["First planted mail body, long enough to count."] * 2


def test_doomarena_page_texts_skip_docstrings_short_strings_and_fstrings() -> None:
    assert sorted(final.page_texts(PAGE_MODULE)) == [
        "A forum comment an attack writes into the page for the agent.",
        "An injected banner text of at least eight words in it.",
    ]


def test_doomarena_groups_mails_and_pages_by_module_and_deduplicates() -> None:
    def read(path: str) -> str:
        return MAIL_MODULE if path == final.DOOM_MAIL else PAGE_MODULE

    groups = [group for group, _ in final.doomarena(read)]
    assert groups.count("doomarena mail") == 1
    assert groups.count("doomarena web banner_attacks") == 2  # the first module's texts; later copies dropped
    assert len(groups) == 3
