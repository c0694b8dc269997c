"""The files signoff places in /runner to watch a run from inside it (see `repair/guard.py`).

They are real source files in `runner_files/` (package data, so ruff, mypy and the tests reach them),
read once here. They run in the sandbox beside the code under test, with the project's Python and
pytest, so they import nothing from signoff, and they can be attacked like anything else in that
process; each is one layer among several and never the only evidence. What they do:

- the pytest bootstrap (`run_pytest.py`) starts isolated (`-I`: no PYTHON* variables, no user site,
  no script folder on the path), reads the run's secret key from the environment and removes it,
  takes an integrity snapshot of the framework, installs an audit hook, and lets the checkout join
  the import path (after the standard library, before the environment's packages) only after pytest
  has loaded its plugins (so entry points, `.pth`, `sitecustomize`, `usercustomize` and `conftest.py`
  shipped in the checkout are never loaded as such);
- the guard plugin (`signoff_guard.py`) records every test's outcome from pytest's own reports,
  checks the snapshot after each test and at the end, and writes an HMAC-authenticated record after
  the JUnit report, including that report's SHA-256;
- the node preload (`signoff_guard.cjs`) does the same for each test file's process under `node --test`;
- the test wrapper (`run_tests.mjs`) starts Vitest, stops every process the run left behind once it
  has ended, and records how it ended and its JUnit report's SHA-256 (HMAC-authenticated).
"""

from __future__ import annotations

from pathlib import Path

# Read from the installed folder itself: `importlib.resources` (with the zipfile module it brings)
# cost `signoff repair verify` about 7 ms of start-up per run; a package not unpacked on disk (a zip)
# still goes through it.
RUNNER_FOLDER = Path(__file__).parent / "runner_files"


def runner_file(name: str) -> str:
    """The text of one shipped runner file, byte for byte (no newline translation)."""
    if RUNNER_FOLDER.is_dir():
        return (RUNNER_FOLDER / name).read_bytes().decode("utf-8")
    from importlib import resources

    return resources.files("signoff.repair").joinpath("runner_files").joinpath(name).read_bytes().decode("utf-8")


PYTEST_BOOTSTRAP = runner_file("run_pytest.py")
PYTEST_GUARD = runner_file("signoff_guard.py")
NODE_GUARD = runner_file("signoff_guard.cjs")
NODE_WRAPPER = runner_file("run_tests.mjs")
