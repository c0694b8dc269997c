"""An organisation's approver as its own process (`signoff incident approver`), as a run calls it.

A run signs an organisation's approvals through that organisation's approver process when the host's
`signoff.toml` names it:

    [incident.approvers.ledgerly]
    url = "https://ledgerly.example:8796"   # where `signoff incident approver --org ledgerly` serves
    token_env = "LEDGERLY_APPROVER_TOKEN"   # the environment variable holding the caller token it takes

    [incident.notary]                       # the notary ledger that approver reads (--notary-db/--notary-id)
    db = "postgresql://notary@db.example/notary"
    id = "n1"

The run's approver agent then sends that organisation's approvals (disclosures and fixes) to the
process; its key never is in the host's key store (`Workspace.setup` pins the organisation's trusted
public key, `signoff evidence key trust incident-approver-<org> <org>.pub`, instead of making one).
What the process hands back counts only when it is signed by that pinned key, for that organisation
and that id (`chain.trusted_record`); the guards count a disclosure as approved only from the record
the process serves (`GET /v1/records/{d_id}`), checked the same way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signoff.incident.chain import trusted_record
from signoff.kernel.errors import IntegrityError, RefusedError, SignoffError, UnavailableError, UsageError
from signoff.kernel.settings import Settings
from signoff.rooms.domain.decisions import Message
from signoff.trust import PublicKey

if TYPE_CHECKING:
    from signoff.incident.approver_service import ApproverClient
    from signoff.incident.disclosure import Disclosure

MIN_TOKEN = 16  # as the approver process requires of its caller's token
TIMEOUT = 10.0  # seconds: an approver that does not answer refuses the approval, it does not hold the run
FIELDS = frozenset({"url", "token_env"})
RUN_FILE = "approvers.json"  # in a run folder: organisation -> its approver process's address (no token)


@dataclass(frozen=True)
class ApproverEndpoint:
    org: str
    url: str
    token: str = ""  # read from the environment variable the setting names; never written anywhere


@dataclass(frozen=True)
class NotaryLedger:
    """The notary ledger a run's notary keeps its salts in, which the approver processes read."""

    db: str
    notary_id: str


def remote_orgs(settings: Settings | None) -> tuple[str, ...]:
    """The organisations whose approver is a process of its own (`[incident.approvers.<org>]`)."""
    return tuple(sorted(settings.section("incident", "approvers"))) if settings is not None else ()


def approver_endpoints(settings: Settings, env: Mapping[str, str] | None = None) -> dict[str, ApproverEndpoint]:
    """Each `[incident.approvers.<org>]` table, checked, with its token read from the environment."""
    env = os.environ if env is None else env
    out = {}
    for org, table in settings.section("incident", "approvers").items():
        where = f"[incident.approvers.{org}]"
        if not isinstance(table, dict) or set(table) - FIELDS or not FIELDS <= set(table):
            raise UsageError(f"{where} must set exactly url and token_env",
                             f"write {where} with url = \"https://...\" and token_env = \"NAME_OF_A_VARIABLE\"")
        url, name = table["url"], table["token_env"]
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise UsageError(f"{where} url is not an http(s) address", "give the address the approver printed")
        if not isinstance(name, str) or not name:
            raise UsageError(f"{where} token_env is not a variable name", "name the variable holding the token")
        token = env.get(name, "")
        if len(token) < MIN_TOKEN:
            raise UsageError(f"{where}: the environment variable {name} holds no token of {MIN_TOKEN} or more "
                             "characters", f"export {name} with the token {org}'s approver was started with "
                             "(its SIGNOFF_APPROVER_TOKEN)")
        out[str(org)] = ApproverEndpoint(str(org), url.rstrip("/"), token)
    return out


def notary_ledger(settings: Settings) -> NotaryLedger | None:
    """`[incident.notary]`: the notary ledger shared with the approver processes, or None."""
    table = settings.section("incident", "notary")
    if not table:
        return None
    db, notary_id = table.get("db"), table.get("id")
    if not isinstance(db, str) or not db.startswith(("sqlite:", "postgresql")) or not isinstance(notary_id, str) \
            or not 0 < len(notary_id) <= 100:
        raise UsageError("[incident.notary] must set db (a sqlite:/// or postgresql:// URL) and id",
                         "give the --notary-db and --notary-id the approvers were started with")
    return NotaryLedger(db, notary_id)


class RemoteApprover:
    """One organisation's approver process, with the face the run's approver agent uses (`approve`,
    `approve_fix`): each record it hands back is checked against the key the organisation's pinned
    guard trusts, or refused."""

    def __init__(self, endpoint: ApproverEndpoint, pinned: PublicKey) -> None:
        from signoff.incident.approver_service import ApproverClient

        self.org = endpoint.org
        self.url = endpoint.url
        self.pinned = pinned
        self.client: ApproverClient = ApproverClient(endpoint.url, endpoint.token, timeout=TIMEOUT)

    def close(self) -> None:
        self.client.close()

    def _checked(self, record: dict[str, Any], d_id: str) -> dict[str, Any]:
        if not trusted_record(record, self.pinned, self.org, d_id):
            raise IntegrityError(f"{self.org}'s approver at {self.url} answered with a record for {d_id} that "
                                 f"{self.org}'s pinned approver key did not sign", "check that the address is "
                                 f"{self.org}'s approver, started with the key its guard pinned; nothing crosses")
        return record

    def approve(self, d: Disclosure, draft_msg: Message, approval: Message) -> dict[str, Any]:
        return self._checked(self.client.approve(d, draft_msg, approval), d.d_id)

    def approve_fix(self, request_id: str, incident: str, fix: str, request_msg: Message,
                    approval: Message) -> dict[str, Any]:
        return self._checked(self.client.approve_fix(request_id, incident, fix, request_msg, approval), request_id)

    def record(self, d_id: str, incident: str) -> dict[str, Any] | None:
        """The record the process serves for `d_id` of `incident` as it answered (the guard checks it
        itself), or None: none, or the process did not answer (then nothing counts as approved)."""
        try:
            return self.client.record(d_id, incident)
        except SignoffError:
            return None

    def check_key(self) -> str:
        """Ask the process for its key: it must be the pinned one (preflight)."""
        answered = self.client.public_key()
        if answered.get("public_key") != self.pinned.hex():
            raise RefusedError(f"{self.org}'s approver at {self.url} holds key {str(answered.get('keyid'))[:12]}, "
                               f"not the one {self.org}'s pinned guard trusts ({self.pinned.keyid[:12]})",
                               f"start {self.org}'s approver with its own key store, or trust its key and run "
                               "`signoff incident setup` again")
        return f"answers at {self.url} with {self.org}'s pinned key {self.pinned.keyid[:12]}"


def note_in_run(run_dir: Path, processes: Mapping[str, RemoteApprover]) -> None:
    """Say in the run folder which organisations' approvers are processes of their own, and where
    (never the token), so that a page deciding for one of them can tell first whether it answers."""
    (Path(run_dir) / RUN_FILE).write_text(json.dumps({org: p.url for org, p in processes.items()}, sort_keys=True),
                                          encoding="utf-8")


def check_answers(run_dir: Path, org: str, title: str) -> None:
    """Before a person's approval is posted: `org`'s approver process, if it has one, answers. A
    decision it could not sign is refused here with nothing posted (UnavailableError: 503 on a page)."""
    import httpx

    from signoff.kernel.tls import tls_context

    path = Path(run_dir) / RUN_FILE
    url = json.loads(path.read_text(encoding="utf-8")).get(org) if path.is_file() else None
    if not isinstance(url, str):
        return
    try:
        httpx.get(f"{url}/v1/public-key", timeout=TIMEOUT, verify=tls_context()).raise_for_status()
    except httpx.HTTPError as exc:
        raise UnavailableError(f"{title}'s approver at {url} does not answer ({type(exc).__name__}), so it could "
                               "sign nothing; nothing was posted", f"start {title}'s approver (`signoff incident "
                               f"approver --org {org}`), then decide again") from exc


__all__ = [
    "ApproverEndpoint",
    "NotaryLedger",
    "RemoteApprover",
    "approver_endpoints",
    "check_answers",
    "notary_ledger",
    "note_in_run",
    "remote_orgs",
]
