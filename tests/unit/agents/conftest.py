"""The agents' shared set-up (tests/support/fixtures/agents.py): importing it registers the `triage`
role these tests ask for."""

from tests.support.fixtures.agents import TRIAGE  # noqa: F401  (registered on import)
