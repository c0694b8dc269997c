"""Wiring for one machine: the ShopLite repository in the local forge, one credential per role,
and the forge's webhooks delivered (signed) to the desk. Used by `signoff desk init`, the demo
and the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from signoff.desk.credentials import Credentials
from signoff.desk.workflow import Desk, open_desk
from signoff.kernel.errors import NotFoundError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger


def shoplite_source() -> Path:
    from signoff.repair.fixture import examples_root

    path = examples_root() / "shoplite" / "repo"
    if not path.is_dir():
        raise NotFoundError("examples/shoplite/repo was not found", "run from a source checkout of signoff")
    return path


@dataclass
class LocalDesk:
    desk: Desk
    tokens: dict[str, str] = field(default_factory=dict)

    def deliver_webhooks(self) -> int:
        """Send the forge's pending deliveries to the desk (a replayed delivery is already applied)."""
        return self.desk.deliver_forge_webhooks()


def init_local(settings: Settings, ledger: SqlLedger | None = None, source: Path | None = None,
               people: tuple[str, ...] = ("alice", "bob", "carol")) -> LocalDesk:
    """Create the forge repository (if missing) and issue credentials: engineering, concierge,
    recorder, one owner per person, and the shared owner key. Tokens are returned once."""
    desk = open_desk(settings, ledger)
    if not desk.forge.exists(desk.config.repo):
        desk.forge.create_repo(desk.config.repo, source or shoplite_source(), "shoplite: checkout with coupons")
    creds = Credentials(desk.ledger)
    tokens = {"engineering": creds.issue("engineering", "signoff-engineering"),
              "concierge": creds.issue("concierge", "concierge"),
              "recorder": creds.issue("recorder", "recorder")}
    for person in people:
        tokens[person] = creds.issue("owner", person, human=True)
    tokens["shared"] = creds.issue("owner", "owners", human=True, shared=True)
    tokens["release-bot"] = creds.issue("owner", "release-bot", human=False)
    return LocalDesk(desk, tokens)
