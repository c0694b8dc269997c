"""The incident's pinned controls, beyond the guards: the playbooks every service runs and the
settings that choose the company agents' models. `Workspace.setup` pins them beside the guards
(pins.json); `pin_checks` compares what is on disk now with what was pinned, for `signoff doctor`
and `signoff incident preflight`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from signoff.kernel.canonical import canonical_bytes
from signoff.kernel.checks import Check
from signoff.kernel.digests import sha256_bytes, sha256_file, tree_digest
from signoff.kernel.settings import Settings

if TYPE_CHECKING:
    from signoff.incident.workspace import Workspace

PLAYBOOKS = Path(__file__).parent / "playbooks"
SETTINGS_SECTIONS = ("agents", "incident")  # what the company agents and the incident read
REPIN = "or re-run `signoff incident setup` on purpose (this re-pins every control)"


def playbooks_digest() -> str:
    return tree_digest(PLAYBOOKS, exclude=("__pycache__",))


def settings_digest(settings: Settings) -> str:
    return sha256_bytes(canonical_bytes({s: settings.section(s) for s in SETTINGS_SECTIONS}))


def control_pins(settings: Settings | None) -> dict[str, str]:
    pins = {"playbooks": playbooks_digest()}
    if settings is not None:
        pins["settings"] = settings_digest(settings)
    return pins


def pin_checks(ws: Workspace, settings: Settings) -> list[Check]:
    """Each guard, the playbooks and the settings against their pins (`ws` is set up)."""
    pins = ws.pins()
    checks = []
    ok = sha256_file(ws.parties_path) == pins.get("parties")
    checks.append(Check("organisations match their pin", ok,
                        f"{', '.join(ws.orgs)}, as set up" if ok else f"{ws.parties_path} differs from its pin",
                        f"restore the organisations, {REPIN}"))
    for org in ws.local_orgs:
        ok = ws.guard_file_digest(org) == pins.get(org)
        checks.append(Check(f"{org} guard matches its pin", ok,
                            "the guard configuration is the pinned one" if ok else
                            f"{ws.guard_config_path(org)} differs from its pin",
                            f"restore the guard configuration, {REPIN}"))
    now = {"playbooks": playbooks_digest(), "settings": settings_digest(settings)}
    what = {"playbooks": f"the playbooks in {PLAYBOOKS}",
            "settings": f"the [{'] and ['.join(SETTINGS_SECTIONS)}] settings"}
    for name, digest in now.items():
        pinned = pins.get(name)
        ok = pinned == digest
        detail = (f"{what[name]} are the pinned ones" if ok else f"{what[name]} were never pinned"
                  if pinned is None else f"{what[name]} changed since they were pinned")
        checks.append(Check(f"{name} match their pin", ok, detail, f"restore {what[name]}, {REPIN}"))
    return checks


__all__ = ["control_pins", "pin_checks", "playbooks_digest", "settings_digest"]
