"""`signoff demo incident`: the Crosswire part-1 flow in a fresh folder under the home."""

from __future__ import annotations

from typing import Any

from signoff.cli.context import console, settings
from signoff.cli.demo import register
from signoff.incident.walkthrough import run_incident
from signoff.incident.workspace import Workspace
from signoff.kernel.errors import UnavailableError
from signoff.kernel.ids import new_id
from signoff.trust import KeyStore


@register("incident", "Two organisations find a shared bug from salted fingerprints; disclosures signed and guarded.")
def demo_incident(as_json: bool) -> dict[str, Any]:
    s = settings()
    ws = Workspace(s.home / "demo-incident" / new_id()[:8], KeyStore(s.keys_dir))
    try:
        summary = run_incident(ws)
    except UnavailableError as exc:
        # The ShopCo side is JavaScript; without node there is nothing real to show.
        if not as_json:
            console.print(f"[bold red]incident demo needs node:[/] {exc.message} ({exc.fix})")
        return {"ok": False, "problem": exc.message, "fix": exc.fix}
    if not as_json:
        console.print(f"PayCo -> ShopCo: {len(summary['bug']['rejected'])} of {summary['bug']['events']} "
                      "webhooks rejected (real node process)")
        console.print(summary["notary_table"], highlight=False, markup=False)
        console.print(f"signed and posted: {', '.join(summary['disclosures'])}; guard blocked: "
                      f"{', '.join(summary['blocked'])}; ledgers {'ok' if summary['ledger']['ok'] else 'FAIL'}")
        console.print(f"after the fix: {len(summary['fixed']['rejected'])} rejected; state in {summary['root']}")
    return summary
