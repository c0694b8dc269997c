"""The sandbox fixtures (tests/support/fixtures/sandbox.py) for tests/system/sandbox."""

from tests.support.fixtures.sandbox import (  # noqa: F401  (fixtures, found by name)
    checkout,
    pyenv,
    sandbox,
    world_dir,
)
