"""The first test that asks for the session's Synapse pays for installing it on a fresh machine
(pip, a few minutes): tests that use it get a longer limit than the suite's default."""

from __future__ import annotations

import pytest

SYNAPSE_TIMEOUT_S = 900


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "synapse" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(SYNAPSE_TIMEOUT_S))
