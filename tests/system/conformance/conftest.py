"""The conformance fixtures (tests/support/fixtures/conformance.py) for tests/system/conformance."""

from tests.support.fixtures.conformance import (  # noqa: F401  (fixtures, found by name)
    target,
)
