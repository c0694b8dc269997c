"""A project that says, in its own words, that a build step is missing is one signoff cannot verify as it is."""

from __future__ import annotations

from signoff.repair import verdict


def test_a_run_stopped_by_the_projects_own_build_step_message_says_signoff_builds_nothing() -> None:
    """hydra (blind17) prints "Error importing generated parsers, run `python setup.py antlr` to regenerate." and
    exits 1 when its ANTLR parsers were never generated (no exception names a module): the `fix:` said "fix what
    stopped it", and running that step in a checkout changes nothing signoff exports."""
    hydra = ("base: exit 1, no JUnit report; Error importing generated parsers, run `python setup.py antlr` to "
             "regenerate.")
    assert verdict.reason("no_report", hydra)["fix"] == verdict.UNBUILT_FIX
    assert verdict.reason("no_report", "base: exit 1, no JUnit report; run python3 setup.py build_ext")["fix"] == \
        verdict.UNBUILT_FIX
    # Not for a run stopped otherwise, nor for the usual commands that install or test.
    assert verdict.reason("no_report", "base: exit 1, no JUnit report; RuntimeError: boom")["fix"] == \
        verdict.FIXES["no_report"]
    assert verdict.reason("no_report", "base: exit 4, no JUnit report; use `python setup.py test` instead")["fix"] == \
        verdict.FIXES["no_report"]
