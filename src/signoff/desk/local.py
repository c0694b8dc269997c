"""Wiring for one machine: the project's repository in the local forge, one credential per role,
and the forge's webhooks delivered (signed) to the desk. Used by `signoff desk init`, the demo
and the tests; the files of the repository come from the caller (the demo's are ShopLite's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from signoff.desk.config import DeskConfig
from signoff.desk.credentials import Credentials
from signoff.desk.workflow import Desk, open_desk
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger


@dataclass
class LocalDesk:
    desk: Desk
    tokens: dict[str, str] = field(default_factory=dict)

    def deliver_webhooks(self) -> int:
        """Send the forge's pending deliveries to the desk (a replayed delivery is already applied)."""
        return self.desk.deliver_forge_webhooks()


def configured_owners(settings: Settings) -> tuple[str, ...]:
    """Who gets an owner credential when none are named: `[desk] owner` and the people of
    `[desk.people]`, each once."""
    config = DeskConfig.load(settings)
    return tuple(dict.fromkeys([config.owner, *config.people.names()]))


def init_local(settings: Settings, ledger: SqlLedger | None = None, source: Path | None = None,
               people: tuple[str, ...] = ("alice", "bob", "carol")) -> LocalDesk:
    """Create the forge repository from the files at `source` (if it is missing) and issue
    credentials: engineering, concierge, recorder, one owner per person, and the shared owner key.
    Tokens are returned once."""
    desk = open_desk(settings, ledger)
    if not desk.forge.exists(desk.config.repo):
        if source is None:
            raise UsageError(f"the local forge has no repository {desk.config.repo!r}",
                             "pass the folder of the project's files to create it from (--source)")
        desk.forge.create_repo(desk.config.repo, source, f"{desk.config.repo}: the project's files")
    creds = Credentials(desk.ledger)
    tokens = {"engineering": creds.issue("engineering", "signoff-engineering"),
              "concierge": creds.issue("concierge", "concierge"),
              "recorder": creds.issue("recorder", "recorder")}
    for person in people:
        tokens[person] = creds.issue("owner", person, human=True)
    tokens["shared"] = creds.issue("owner", "owners", human=True, shared=True)
    tokens["release-bot"] = creds.issue("owner", "release-bot", human=False)
    return LocalDesk(desk, tokens)
