"""The mcp fixtures (tests/support/fixtures/mcp.py) for tests/system/mcp."""

from tests.support.fixtures.mcp import (  # noqa: F401  (fixtures, found by name)
    mcp_http,
    served,
)
