"""What an old interpreter's ensurepip leaves beside the environment it set up: only what nobody asked for goes."""

from __future__ import annotations

import pytest

from signoff.sandbox.pyenv import bootstrap_leftovers


def test_a_requirement_the_bootstraps_copy_satisfied_stays() -> None:
    """pydicom on Python 3.8 (blind17): the plan asks for `setuptools<71` (the project imports pkg_resources), the
    setuptools 49 ensurepip brought satisfies it, so pip's report lists it nowhere; it was removed, and every test
    stopped at `No module named 'pkg_resources'`."""
    report = {"install": [{"metadata": {"name": "numpy", "requires_dist": []}}]}
    assert bootstrap_leftovers(report, ["-c constraints.txt", "numpy<2", "setuptools<71", "pytest>=6"]) == [
        "pip", "wheel", "distribute"]


def test_what_an_installed_distribution_requires_stays_and_the_rest_goes() -> None:
    report = {"install": [{"metadata": {"name": "pbr", "requires_dist": ["Setuptools>=40; extra == 'x'"]}},
                          {"metadata": {"name": "Wheel"}}]}
    assert bootstrap_leftovers(report, ["pbr"]) == ["pip", "distribute"]
    assert bootstrap_leftovers({}, ["-r other.txt", "# setuptools"]) == ["pip", "setuptools", "wheel", "distribute"]


def test_an_environment_an_older_bootstrap_rule_built_is_not_found_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environments built before the rule above kept their cache names, and pydicom's verification used them
    again, still without setuptools: an interpreter given its own pip keys its environments by that rule too."""
    from signoff.sandbox import pyenv

    monkeypatch.setattr(pyenv, "_pip_supports", lambda version: version != "3.8")
    old = pyenv.env_key("py3.8", "3.8", ["numpy<2"], None, False)
    assert old["bootstrap"] == pyenv._BOOTSTRAP
    assert "bootstrap" not in pyenv.env_key("py3.11", "3.11", ["numpy<2"], None, False)
