"""The PayCo/ShopCo fixture, as the demos run it: a real cross-language webhook bug
(`examples/payco-shopco/`: PayCo signs Python's `\\u`-escaped JSON, ShopCo verifies the bytes
JavaScript writes again).

- `fixture` — where the fixture lives, its code and customers, and `parties`: PayCo and ShopCo as
  an incident configuration (`signoff.incident.Parties`);
- `simulate` — both sides run for real on loopback, each writing its capture;
- `corpus` — variants of each side's code lines and plain incident prose, to measure the guard;
- `responder` — the scripted responder that writes the company agents' drafts in those runs;
- `scenario` — all of it as the `Scenario` the scripted runs take (`signoff incident demo`,
  `redteam`, `preflight`).

Only the faces (`signoff.demo`, `signoff.cli`) import this package; the incident workflow takes
its organisations and evidence as data (tests/unit/test_layers.py holds them to it).
"""

from __future__ import annotations

from pathlib import Path

import signoff.demo.payco_shopco.responder  # noqa: F401  (registers the scripted runs' responder)
from signoff.incident.scenario import Rerun, Scenario
from signoff.kernel.checks import Check
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings


def scenario(fixture: Path | None = None) -> Scenario:
    """PayCo/ShopCo as a scripted incident: the traffic is the fixture run for real."""
    from signoff.demo.payco_shopco.fixture import parties
    from signoff.demo.payco_shopco.simulate import simulate

    def reproduce(folder: Path) -> dict[str, Path]:
        result = simulate(folder, fixture=fixture)
        return {"payco": result.payco_capture, "shopco": result.shopco_capture}

    def rerun(folder: Path) -> Rerun:
        result = simulate(folder, fixed_payco=True, fixed_shopco=True, fixture=fixture)
        return Rerun(len(result.accepted) + len(result.rejected), len(result.accepted), len(result.rejected))

    return Scenario("payco-shopco", parties(fixture), reproduce, rerun)


def doctor_checks(settings: Settings) -> list[Check]:
    """`signoff doctor`: whether the demo's fixture is here (optional: only the demos need it)."""
    from signoff.demo.payco_shopco.fixture import fixture_dir

    del settings
    try:
        return [Check("incident fixture", True, f"PayCo/ShopCo fixture at {fixture_dir()}")]
    except SignoffError as exc:
        return [Check("incident fixture", False, exc.message, exc.fix, required=False)]


__all__ = ["doctor_checks", "scenario"]
