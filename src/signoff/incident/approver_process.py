"""The approver as a process of its own, one per organisation (`signoff incident approver`).

Its point is to hold the organisation's approver key apart: on the organisation's own host it runs
with a key store that no other service reads, and nothing but what it answers leaves it. It serves
`approver_app` (`POST /v1/approve`, `GET /v1/records/{id}`, `GET /v1/public-key`) to one caller, the
room server or bridge that saw the messages, by its token. It signs on the organisation's chain in
its workspace (`<org>/records.db`), under the same rules as in a run, and reads the notary's salts
from the notary's ledger at every approval, so it needs no restart when a new incident opens.

It refuses to start when its workspace is not set up for the organisation, or when its key is not
the one the organisation's pinned guard trusts (the guard would refuse every record it signed).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from fastapi import FastAPI

from signoff.incident.approvals import Approver
from signoff.incident.approver_service import approver_app
from signoff.incident.guard import GuardConfig
from signoff.incident.salts import IssuedSalts
from signoff.incident.workspace import Workspace
from signoff.kernel.errors import RefusedError, UsageError
from signoff.ledger import SqlLedger

MIN_TOKEN = 16  # characters of the caller's token


@dataclass
class ApproverProcess:
    org: str
    approver: Approver
    app: FastAPI
    ledger: SqlLedger
    _closed: bool = field(default=False, repr=False)

    def describe(self) -> str:
        return (f"approver of {self.org} (for {self.approver.approver}, in {self.approver.private_room}), "
                f"key {self.approver.public.keyid}")

    def close(self) -> None:
        if not self._closed:
            self.ledger.close()
            self._closed = True


def start(ws: Workspace, org: str, token: str, notary_db: str, notary_id: str) -> ApproverProcess:
    """The approver of `org` over the workspace `ws`, answering the caller holding `token`."""
    if len(token) < MIN_TOKEN:
        raise UsageError(f"the caller's token is shorter than {MIN_TOKEN} characters",
                         "give the room server's token, e.g. from `python -c 'import secrets; "
                         "print(secrets.token_urlsafe(24))'`")
    if not ws.is_set_up():
        raise UsageError(f"no incident set up at {ws.root}", "run `signoff incident setup` there first")
    who = ws.parties.get(org)
    if org not in ws.local_orgs:
        raise UsageError(f"{org} is not set up in {ws.root}", f"run `signoff incident setup --org {org}` there")
    key = ws.keys.load(f"incident-approver-{org}")
    pinned = GuardConfig.read(ws.guard_config_path(org)).approver_key
    if not secrets.compare_digest(pinned, key.public.hex()):
        raise RefusedError(f"this key store's approver key for {org} is not the one {org}'s pinned guard trusts",
                           "run the approver with the key store the incident was set up with (--keys)")
    pin = ws.pins()[org]
    ledger = SqlLedger.from_url(notary_db)
    try:
        salts = IssuedSalts(ledger, notary_id)
        approver = Approver(org, who.approver, who.private_room, key, ws.approvals(org, key), salts.notary,
                            lambda: ws.guard_file_digest(org), pin)
        return ApproverProcess(org, approver, approver_app(approver, token), ledger)
    except BaseException:
        ledger.close()
        raise


__all__ = ["ApproverProcess", "start"]
