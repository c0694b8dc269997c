"""tests/unit is the inner loop (`make unit`): pure tests, the whole tier in well under a minute.

While a test here is set up, runs and is torn down, any socket it connects or binds, any process it
starts and any database file it opens (SQLite on a file, PostgreSQL) fails the test with the tier
rule instead of happening (tests/support/tier_rules.py). An in-memory SQLite database is fine.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.tier_rules import UNIT_RULE, watching


def _refuse(kind: str, detail: str) -> None:
    pytest.fail(f"{UNIT_RULE}; this test tried to {detail} ({kind})")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with watching(_refuse):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with watching(_refuse):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if nextitem is None:
        # The run's last test also tears down the session's fixtures, which other tiers' tests set up
        # (the PostgreSQL cluster stops with a process): those are not this test's doing.
        return (yield)
    with watching(_refuse):
        return (yield)
