"""`signoff demo incident`: the whole Crosswire incident in rooms (part 2, which runs part 1's flow inside it)."""

from __future__ import annotations

from typing import Any

from signoff.cli.context import console, settings
from signoff.demo.commands import register
from signoff.kernel.errors import UnavailableError
from signoff.kernel.progress import Progress


@register("incident", "Two organisations find a shared bug in three rooms without code crossing: fingerprints, "
                      "a notary, signed disclosures, a guard; graded through the room server.")
def demo_incident(as_json: bool, progress: Progress) -> dict[str, Any]:
    """The whole workflow (part 2): rooms, roles, policies, scripted humans, graded; part 1's
    evidence flow runs inside it (fingerprints, notary, approvals, guard, ledgers)."""
    from signoff.cli.incident_workflow import demo_summary, print_demo
    from signoff.incident import service

    s = settings()
    progress("three rooms, scripted people, both organisations' agents, graded")
    try:
        # Where the console and `signoff incident` look for runs: the demo's run is one to open at once.
        summary = demo_summary(base=service.runs_base(s.home))
    except UnavailableError as exc:
        # The ShopCo side is JavaScript; without node there is nothing real to show.
        if not as_json:
            console.print(f"[bold red]incident demo needs node:[/] {exc.message} ({exc.fix})")
        return {"ok": False, "problem": exc.message, "fix": exc.fix}
    if not as_json:
        print_demo(summary)
    return summary
