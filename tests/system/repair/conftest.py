"""The repair fixtures (tests/support/fixtures/repair.py) for tests/system/repair."""

from tests.support.fixtures.repair import (  # noqa: F401  (fixtures, found by name)
    _shared_env_cache,
    coupon,
    coupon_js,
)
