"""The bridges fixtures (tests/support/fixtures/bridges.py) for tests/system/bridges."""

from tests.support.fixtures.bridges import (  # noqa: F401  (fixtures, found by name)
    pytest_collection_modifyitems,
)
