"""The agents fixtures (tests/support/fixtures/agents.py) for tests/system/agents."""

from tests.support.fixtures.agents import (  # noqa: F401  (fixtures, found by name)
    configure,
    ledger_of,
    wire,
)
