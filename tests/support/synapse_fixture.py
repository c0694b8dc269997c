"""The session's Synapse: installed (or taken from the cache) and started once, stopped at the end."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.requires import require
from tests.support.synapse import ServerFailed, Synapse, cache_root, synapse_python

HOW_TO_GET = (f"pip could not install matrix-synapse into {cache_root()} (needs PyPI, or a finished "
              "venv there from an earlier run)")


@pytest.fixture(scope="session")
def synapse() -> Iterator[Synapse]:
    """A running Synapse on SQLite at 127.0.0.1:<free port>, shared by the session's tests: each
    test registers its own accounts and rooms, so tests never see one another's state."""
    problem = ""
    try:
        python = synapse_python()
    except (ServerFailed, OSError) as exc:
        problem = str(exc).splitlines()[0]
    require("synapse", not problem, f"{HOW_TO_GET}: {problem}")
    folder = Path(tempfile.mkdtemp(prefix="signoff-synapse-"))
    server = Synapse(folder, python)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
