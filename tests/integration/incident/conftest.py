"""The incident fixtures (tests/support/fixtures/incident.py) for tests/integration/incident."""

from tests.support.fixtures.incident import (  # noqa: F401  (fixtures, found by name)
    workspace,
)
