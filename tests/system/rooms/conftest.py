"""The rooms fixtures (tests/support/fixtures/rooms.py) for tests/system/rooms."""

from tests.support.fixtures.rooms import (  # noqa: F401  (fixtures, found by name)
    clock,
    http_world,
    person_for,
    serve_app,
    service,
    world,
)
