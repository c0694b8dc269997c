"""The incident fixtures (tests/support/fixtures/incident.py) for tests/system/incident."""

from tests.support.fixtures.incident import (  # noqa: F401  (fixtures, found by name)
    buggy_run,
    node,
    workspace,
)
