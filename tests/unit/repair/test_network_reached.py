"""A run that timed out while its tests reached for a host says so (runs have no network)."""

from __future__ import annotations

from signoff.repair import verdict


def test_a_timeout_names_the_network_only_when_the_run_reached_for_it() -> None:
    detail = "base: timed out after 300s" + verdict.network_reached(
        "signoff-guard: the tests reached for the network: github.com:443\n")
    assert verdict.reason("timeout", detail)["fix"] == verdict.NETWORK_WAIT_FIX
    assert verdict.network_reached("downloading github.com:443") == ""
    assert verdict.reason("timeout", "base: timed out after 300s")["fix"] == verdict.FIXES["timeout"]
