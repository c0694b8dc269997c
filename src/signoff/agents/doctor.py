"""`signoff doctor` checks for agents: every role's provider is configured, hosted roles have their
key in the environment, and what is left of the budget."""

from __future__ import annotations

import os

from signoff.agents import config
from signoff.agents.budget import Budget
from signoff.agents.roles import roles
from signoff.kernel.checks import Check
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger


def doctor_checks(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    offline: list[str] = []
    for spec in roles():
        name = f"agent {spec.name}"
        try:
            ps = config.provider_settings(spec.name, settings)
        except SignoffError as exc:
            checks.append(Check(name, False, exc.message, exc.fix))
            continue
        if ps.provider in ("scripted", "replay"):
            offline.append(spec.name if ps.provider == "scripted" else f"{spec.name} (replay)")
            continue
        key_ok = not ps.api_key_env or bool(os.environ.get(ps.api_key_env))
        detail = f"{ps.provider} {ps.model} at {ps.base_url}" + (
            "" if key_ok else f"; ${ps.api_key_env} is not set")
        checks.append(Check(name, key_ok, detail, f"export {ps.api_key_env}=... (the key never goes in a file)"))
    if offline:
        checks.insert(0, Check("agents offline", True, f"scripted, simulated evidence: {', '.join(offline)}"))
    try:
        lim = config.limits(settings)
        ledger = SqlLedger.open(settings)
        try:
            usage = Budget(ledger, lim).usage()
        finally:
            ledger.close()
    except SignoffError as exc:
        checks.append(Check("agent budget", False, exc.message, exc.fix))
        return checks
    left = usage.remaining_micros / 1e6
    checks.append(Check(
        "agent budget", usage.remaining_micros > 0,
        f"${left:.4f} of ${lim.budget_usd:.2f} left this {lim.period}; "
        f"{usage.calls_last_hour}/{lim.calls_per_hour} calls in the last hour",
        "raise [agents] budget_usd or wait for the reset (`signoff agents budget`)", required=False))
    return checks
