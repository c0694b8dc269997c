"""A `--python` older than the run guard supports is refused before anything is installed, with a cause and
a fix a person can act on (BugsInPy's keras on Python 3.7: every run ended `no_report` with the guard's
`module 'sys' has no attribute 'addaudithook'`)."""

from __future__ import annotations

import pytest

from signoff.kernel.errors import UsageError
from signoff.repair.verifier import guard_python_refused
from signoff.sandbox import pyenv


@pytest.fixture
def versions(monkeypatch: pytest.MonkeyPatch) -> None:
    known = {"/opt/py37/bin/python3.7": "3.7.16", "/opt/py38/bin/python3.8": "3.8.18",
             "/opt/py313/bin/python3.13": "3.13.0"}
    monkeypatch.setattr(pyenv, "_version_of", known.get)


def test_an_interpreter_older_than_the_guard_is_refused_with_its_version_and_the_fix(versions: None) -> None:
    refused = guard_python_refused("/opt/py37/bin/python3.7")
    assert refused is not None and not isinstance(refused, UsageError)  # an INCONCLUSIVE cause, not a bad input
    assert "Python 3.7.16 (/opt/py37/bin/python3.7)" in refused.message and "audit hooks" in refused.message
    assert refused.fix is not None and "--python 3.8 or newer" in refused.fix


def test_interpreters_the_guard_supports_and_the_default_pass(versions: None) -> None:
    assert guard_python_refused("/opt/py38/bin/python3.8") is None
    assert guard_python_refused("/opt/py313/bin/python3.13") is None
    assert guard_python_refused(None) is None
