"""`signoff doctor` checks for the incident workflow: the home's pinned controls, once set up."""

from __future__ import annotations

from signoff.incident.pins import pin_checks
from signoff.incident.workspace import Workspace
from signoff.kernel.checks import Check
from signoff.kernel.settings import Settings
from signoff.trust import KeyStore


def doctor_checks(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    ws = Workspace(settings.home / "incident", KeyStore(settings.keys_dir))
    if ws.is_set_up():
        checks += [Check(f"incident: {c.name}", c.ok, c.detail, c.fix) for c in pin_checks(ws, settings)]
    return checks
