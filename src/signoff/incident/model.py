"""The incident's cases on the ledger contract: case types, typed events, states and their folds.

Five case types, each with the prefix and event type string old code wrote (both are hashed into
existing ledgers, so neither ever changes):

- `incident.chain`, `incident-chain/<org>/approvals` and `.../guard-log`, events `incident.record`:
  an organisation's signed, hash-chained records (the approver's, the guard's);
- `incident.notary`, `incident-notary/<notary id>`, events `incident.salt_issued`: every salt a
  notary issued, the last one current;
- `incident.fingerprints`, `incident-fingerprints/<org>/<salt id>`, events `incident.fingerprinted`:
  the events an evidence server fingerprinted under one salt (its budget);
- `incident.cursors`, `incident-cursors/<service>`, events `incident.cursors_saved`: how far a
  service handled each room's event stream;
- `incident.names`, the one case `incident-names`, events `incident.named`: the incident names a
  workspace gave out.

A chain record's payload is the record itself, `{seq, prev, body, keyid, sig}`: the organisation's
signature covers `{seq, prev, body}`, so the body is kept exactly as it was signed (a JSON object
whose fields depend on what signed it, see `ApprovalBody`) and is checked by the signature, not by
this class. Verification (`chain.verify_records`) reads the stored payloads as they are, so a record
someone damaged behind the ledger's back is named there rather than refused here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from signoff.incident.notary import IssuedSalt
from signoff.ledger.aggregate import EventBody, Fold, Stamp, case_type

CHAIN = case_type("incident.chain", "incident-chain/")
NOTARY = case_type("incident.notary", "incident-notary/")
FINGERPRINTS = case_type("incident.fingerprints", "incident-fingerprints/")
CURSORS = case_type("incident.cursors", "incident-cursors/")
# Written before case ids had keys: the workspace's one names case is the prefix itself.
NAMES = case_type("incident.names", "incident-names")
NAMES_CASE = NAMES.prefix

CHAINS = ("approvals", "guard-log")


def chain_key(org: str, chain: str) -> str:
    """The key of `org`'s chain `chain` (approvals or guard-log)."""
    if chain not in CHAINS:
        raise ValueError(f"unknown record chain {chain!r}")
    return f"{org}/{chain}"


# -- events -------------------------------------------------------------------------------------


class RecordAppended(EventBody, type="incident.record", case=CHAIN):
    """One signed chain record: the link `{seq, prev}` and `body` are signed with key `keyid`."""

    seq: int
    prev: str
    body: dict[str, Any]
    keyid: str
    sig: str


class SaltIssued(EventBody, type="incident.salt_issued", case=NOTARY):
    """A salt the notary issued for `incident` (hex); `salt_id` names it (old hand-written rows may lack it)."""

    incident: str
    salt: str
    issued_at: str
    salt_id: str | None = None


class Fingerprinted(EventBody, type="incident.fingerprinted", case=FINGERPRINTS):
    """`event_id` was fingerprinted under the salt `salt_id` for `org` (one slot of the salt's budget)."""

    org: str
    salt_id: str
    event_id: str


class CursorsSaved(EventBody, type="incident.cursors_saved", case=CURSORS):
    """A service's position in each room's event stream, after the handlers up to it returned."""

    cursors: dict[str, int]


class IncidentNamed(EventBody, type="incident.named", case=NAMES):
    """A workspace gave out the incident name `incident`."""

    incident: str


# -- states and folds ---------------------------------------------------------------------------


@dataclass
class RecordChain:
    """A chain case: its records as stored (the last one is what the next record links to)."""

    key: str
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> dict[str, Any] | None:
        return self.records[-1] if self.records else None

    def find(self, d_id: str, incident: str | None = None) -> dict[str, Any] | None:
        """The record whose body names `d_id` (a disclosure or a fix request), if any; with
        `incident`, that incident's (an approver's chain outlives one incident, and every run
        numbers its disclosures from 1)."""
        for record in self.records:
            if record["body"].get("d_id") == d_id and incident in (None, record["body"].get("incident")):
                return record
        return None


chain_fold = Fold[RecordChain](CHAIN)


@chain_fold.on(RecordAppended)
def _record(chain: RecordChain, ev: RecordAppended, at: Stamp) -> None:
    chain.records.append(ev.payload())


@dataclass
class NotarySalts:
    """Every salt one notary issued, oldest first. `Notary.restore(salts)` checks them (an incident
    or a salt named twice, a salt that does not match its id is an IntegrityError)."""

    key: str
    issued: list[dict[str, Any]] = field(default_factory=list)


notary_fold = Fold[NotarySalts](NOTARY)


@notary_fold.on(SaltIssued)
def _salt(state: NotarySalts, ev: SaltIssued, at: Stamp) -> None:
    # kept as stored: IssuedSalt.from_json checks salt_id only where the row has one
    state.issued.append({k: v for k, v in ev.payload().items() if v is not None})


def issued_salts(state: NotarySalts) -> list[IssuedSalt]:
    return [IssuedSalt.from_json(s) for s in state.issued]


@dataclass
class SaltSpent:
    """The distinct events fingerprinted under one (organisation, salt), in the order first spent."""

    key: str
    events: list[str] = field(default_factory=list)


fingerprints_fold = Fold[SaltSpent](FINGERPRINTS)


@fingerprints_fold.on(Fingerprinted)
def _spent(state: SaltSpent, ev: Fingerprinted, at: Stamp) -> None:
    if ev.event_id not in state.events:
        state.events.append(ev.event_id)


@dataclass
class Cursors:
    """A service's last saved cursor per room key (the last save counts)."""

    key: str
    cursors: dict[str, int] = field(default_factory=dict)


cursors_fold = Fold[Cursors](CURSORS)


@cursors_fold.on(CursorsSaved)
def _cursors(state: Cursors, ev: CursorsSaved, at: Stamp) -> None:
    state.cursors = dict(ev.cursors)


@dataclass
class IncidentNames:
    """The incident names a workspace gave out, in order."""

    key: str = NAMES_CASE
    names: list[str] = field(default_factory=list)


names_fold = Fold[IncidentNames](NAMES)


@names_fold.on(IncidentNamed)
def _named(state: IncidentNames, ev: IncidentNamed, at: Stamp) -> None:
    state.names.append(ev.incident)


FOLDS: tuple[Fold[Any], ...] = (chain_fold, notary_fold, fingerprints_fold, cursors_fold, names_fold)

__all__ = [
    "CHAIN", "CHAINS", "CURSORS", "FINGERPRINTS", "FOLDS", "NAMES", "NAMES_CASE", "NOTARY", "Cursors",
    "CursorsSaved", "Fingerprinted", "IncidentNamed", "IncidentNames", "NotarySalts", "RecordAppended",
    "RecordChain", "SaltIssued", "SaltSpent", "chain_fold", "chain_key", "cursors_fold", "fingerprints_fold",
    "issued_salts", "names_fold", "notary_fold",
]
