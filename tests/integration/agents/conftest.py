"""The agents fixtures (tests/support/fixtures/agents.py) for tests/integration/agents."""

from tests.support.fixtures.agents import configure  # noqa: F401  (a fixture, found by name)
