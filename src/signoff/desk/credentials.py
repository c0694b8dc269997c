"""Who may do what: one credential per role, checked on every call.

Roles: `public` (no credential), `reporter` (a per-report capability, see workflow), `concierge`
(delivers notifications), `engineering` (claims work, submits reproductions and fixes, opens draft
change requests), `owner` (a human, or the shared owner key), `recorder` (records deployments).
Tokens are minted, digested and compared by trust.credentials (256-bit secrets shown once; only
their SHA-256 is stored, in ledger case `desk/credentials`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from signoff.desk.records import CredentialBook, CredentialIssued, CredentialRevoked, credential_fold
from signoff.kernel.errors import NotFoundError, RefusedError, Unauthenticated, UsageError
from signoff.ledger import SqlLedger
from signoff.trust import credentials

CASE = "desk/credentials"
ROLES = ("concierge", "engineering", "owner", "recorder")
PREFIX = {"concierge": "dkc", "engineering": "dke", "owner": "dko", "recorder": "dkr"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,38}$")


@dataclass(frozen=True)
class DeskCaller:
    """Who is calling the desk, as their credential (or a reporter's capability) says."""

    role: str  # public | reporter | concierge | engineering | owner | recorder
    name: str  # login for owners; the service name otherwise
    human: bool = False  # owners only: a person (not a bot)
    shared: bool = False  # the shared owner key: never counts as a distinct human
    report_id: str | None = None  # reporters only


PUBLIC = DeskCaller("public", "public")


class Credentials:
    def __init__(self, ledger: SqlLedger) -> None:
        self.ledger = ledger

    def issue(self, role: str, name: str, human: bool = True, shared: bool = False) -> str:
        """A new credential; the token is returned once and never stored."""
        if role not in ROLES:
            raise UsageError(f"unknown role {role!r}", f"use one of {', '.join(ROLES)}")
        if not _NAME.match(name):
            raise UsageError(f"credential name {name!r} is not a valid login",
                             "use lower-case letters, digits, '.', '_' or '-'")
        token = credentials.mint(PREFIX[role])
        self.ledger.append(CASE, None, [CredentialIssued(
            role=role, name=name, human=bool(human) and role == "owner", shared=bool(shared) and role == "owner",
            token_sha256=credentials.digest(token)).new_event()])
        return token

    def authenticate(self, token: str | None) -> DeskCaller:
        if not token:
            raise Unauthenticated("missing credential", "send Authorization: Bearer <token>")
        # every digest is compared (constant time each), not only up to the first match
        matched = [DeskCaller(c.role, c.name, bool(c.human), bool(c.shared)) for c, gone in self._issued()
                   if credentials.matches(c.token_sha256, token) and not gone]
        found = matched[-1] if matched else None
        if found is None:
            raise Unauthenticated("unknown credential",
                                  "use a token issued by `signoff desk init` or `signoff desk credential`")
        return found

    def revoke(self, token: str) -> None:
        self.ledger.append(CASE, None, [CredentialRevoked(token_sha256=credentials.digest(token)).new_event()])

    def _issued(self) -> list[tuple[CredentialIssued, bool]]:
        """Every credential issued, and whether it was revoked since."""
        book = credential_fold.over(CredentialBook(), self.ledger.read(CASE))
        return [(c, c.token_sha256 in book.revoked) for c in book.issued]

    def revoke_named(self, role: str, name: str) -> int:
        """Revoke every live credential of `role` issued to `name` (the admin has no token to hand:
        a person left, or a token leaked); the number revoked. NotFoundError when none is live."""
        if role not in ROLES:
            raise UsageError(f"unknown role {role!r}", f"use one of {', '.join(ROLES)}")
        if not _NAME.match(name):
            raise UsageError(f"credential name {name!r} is not a valid login",
                             "use lower-case letters, digits, '.', '_' or '-'")
        live = [c.token_sha256 for c, gone in self._issued() if not gone and c.role == role and c.name == name]
        if not live:
            raise NotFoundError(f"no live {role} credential named {name}",
                                "list the credentials with `signoff desk credentials`")
        self.ledger.append(CASE, None, [CredentialRevoked(token_sha256=digest, role=role, name=name).new_event()
                                        for digest in live])
        return len(live)

    def list(self) -> list[dict[str, object]]:
        """Every credential issued (never its digest), each with `revoked`."""
        return [{**{k: v for k, v in c.payload().items() if k != "token_sha256"}, "revoked": gone}
                for c, gone in self._issued()]

    def human_owner(self, name: str) -> DeskCaller | None:
        """The owner `name` is, when a live (not revoked) human, not shared, owner credential carries
        that name: what the pages check on every request for the person signed in."""
        for c, gone in self._issued():
            if not gone and c.role == "owner" and c.human and not c.shared and c.name == name:
                return DeskCaller("owner", name, human=True)
        return None


def require(actor: DeskCaller, *roles: str, what: str) -> None:
    """RefusedError (403) unless the actor holds one of `roles`. The concierge asking for
    engineering work is answered as unauthenticated (401): that credential does not exist there."""
    if actor.role in roles:
        return
    if actor.role == "public":
        raise Unauthenticated(f"{what} needs a credential", "send Authorization: Bearer <token>")
    if actor.role == "concierge" and "engineering" in roles:
        raise Unauthenticated(f"the concierge credential is not valid for {what}",
                              "engineering work is read with the engineering credential")
    raise RefusedError(f"{actor.role} may not {what}", f"only {' or '.join(roles)} may")
