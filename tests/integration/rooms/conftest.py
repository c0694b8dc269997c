"""The rooms fixtures (tests/support/fixtures/rooms.py) for tests/integration/rooms."""

from tests.support.fixtures.rooms import (  # noqa: F401  (fixtures, found by name)
    clock,
    person_in_process_or_asgi,
    service,
    world,
)
