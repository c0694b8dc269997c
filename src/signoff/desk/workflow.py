"""The desk's workflow: the one facade over every step of the loop.

Each step is an event in the ledger (case `desk/bug/<id>`), appended at the version the decision
was made on, with the jobs it causes written in the same transaction. The rules are the pure
decisions of `signoff.desk.decisions`; each part of the desk gathers the facts a decision needs and
appends it:

    intake       public reports through the airlock, rate limits, clustering into bugs
    reporters    the report capability, the tracking page, the reporters' answers and disputes
    submissions  engineering's reading, notes, reproductions and fixes (measured in the sandbox)
    review       tiers, approvals, the merge check and merge, a person resuming a bug
    receiving    the forge's signed webhooks
    release      the recorder's deployments, their evidence, releasing merged bugs

Faces (HTTP, CLI, the demo) only authenticate and call `Desk`.
"""

from __future__ import annotations

from signoff.desk.config import DeskConfig
from signoff.desk.decisions import ENGINEERING, NOTIFY
from signoff.desk.forge import Forge
from signoff.desk.github_forge import GitHubForge
from signoff.desk.intake import Intake, IntakeSteps, Quarantined
from signoff.desk.receiving import ReceivingSteps
from signoff.desk.reporters import ReporterSteps
from signoff.desk.submissions import SubmissionSteps
from signoff.desk.webhooks import signing_secret
from signoff.github import git_url, github_client
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger


class Desk(IntakeSteps, ReporterSteps, SubmissionSteps, ReceivingSteps):
    """Every step of the desk (see the module docstring for which part holds which)."""


def forge_for(settings: Settings, ledger: SqlLedger, config: DeskConfig | None = None) -> Forge:
    """The forge `[desk] forge` names: the local one, or GitHub (through `[github]`)."""
    config = config or DeskConfig.load(settings)
    root = settings.home / "desk" / "forge"
    if config.forge == "github":
        return GitHubForge(root, ledger, signing_secret(settings), github_client(settings), git_url(settings))
    return Forge(root, ledger, signing_secret(settings))


def open_desk(settings: Settings, ledger: SqlLedger | None = None) -> Desk:
    ledger = ledger or SqlLedger.open(settings)
    config = DeskConfig.load(settings)
    return Desk(ledger, settings, forge_for(settings, ledger, config), config)


__all__ = ["ENGINEERING", "NOTIFY", "Desk", "Intake", "Quarantined", "forge_for", "open_desk"]
