"""The desk fixtures (tests/support/fixtures/desk.py) for tests/system/desk."""

from tests.support.fixtures.desk import (  # noqa: F401  (fixtures, found by name)
    _shared_env_cache,
    reproduced,
    review,
    sandbox_ok,
    templates,
    world,
)
