"""The notes fixtures (tests/support/fixtures/notes.py) for tests/system/notes."""

from tests.support.fixtures.notes import (  # noqa: F401  (fixtures, found by name)
    built,
    history,
    notes_home,
)
