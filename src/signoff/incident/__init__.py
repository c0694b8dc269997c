"""Incident evidence (Crosswire, part 1): two organisations compare bytes without sharing them.

The in-process API (see docs/incident.md for the full description):

- `Parties`/`Organisation` (the incident's organisations, from configuration: `Parties.load(toml)`)
  and `Captured`/`load_capture` (what each brings as evidence). The PayCo/ShopCo fixture that the
  demos run is not here: `signoff.demo.payco_shopco` (its simulator and guard corpus too).
- `scan(raw)` (wirecheck) and `fingerprint(event_id, raw, salt, incident)`.
- `Notary` issues salts and compares fingerprints (`state()`/`Notary.from_state` persist it);
  `EvidenceStore`/`make_app`/`LoopbackServer`/`EvidenceClient` serve an organisation's captures,
  with `SaltBudget` (in a ledger) limiting the fingerprints per salt.
- `draft`, `Disclosure`, `published_text`; `Approver`, `Message`, `approver_app`/`ApproverClient` (the
  approver as an HTTP service holding its key); `Chain` (signed records in a ledger case), `verify_records`.
- `Guard`, `GuardConfig`, `build_config`, `Post`, `GuardVerdict`; `GuardedSender`; `WorkspaceRooms` (part 1's rooms).
- `Workspace` (layout, setup, pins, guards) and `verify_ledger`. The whole flow in one process, people
  scripted (`run_incident`), is a demo: `signoff.demo.incident_walkthrough`.

Faces (cli/, web/, mcp/, bridges/) call `signoff.incident.service`, the facade with typed commands;
the cases are typed in `model`, the decisions are pure in `decisions`. Importing the package
registers its evidence checks (`signoff evidence verify`).
"""

import signoff.incident.evidence  # noqa: F401  (registers the disclosure predicate's check)
from signoff.incident.approvals import Approver
from signoff.incident.approver_service import ApproverClient, approver_app
from signoff.incident.budget import SaltBudget
from signoff.incident.captures import Captured, load_capture, load_captures
from signoff.incident.chain import Chain, RecordChainReport, verify_records
from signoff.incident.disclosure import Disclosure, draft, published_text
from signoff.incident.evidence_server import EvidenceClient, EvidenceStore, LoopbackServer, make_app
from signoff.incident.fingerprint import fingerprint, salt_id
from signoff.incident.guard import Guard, GuardConfig, GuardVerdict, Post, build_config
from signoff.incident.notary import Comparison, IssuedSalt, Notary
from signoff.incident.parties import Organisation, Parties
from signoff.incident.scenario import Rerun, Scenario
from signoff.incident.sender import GuardedSender
from signoff.incident.wirecheck import Leaf, WireError, scan
from signoff.incident.workspace import LedgerReport, Workspace, verify_ledger
from signoff.incident.workspace_rooms import WorkspaceRooms
from signoff.rooms.domain.decisions import Message

__all__ = [
    "Approver",
    "ApproverClient",
    "Captured",
    "Chain",
    "Comparison",
    "Disclosure",
    "EvidenceClient",
    "EvidenceStore",
    "Guard",
    "GuardConfig",
    "GuardVerdict",
    "GuardedSender",
    "IssuedSalt",
    "Leaf",
    "LedgerReport",
    "LoopbackServer",
    "Message",
    "Notary",
    "Organisation",
    "Parties",
    "Post",
    "RecordChainReport",
    "Rerun",
    "SaltBudget",
    "Scenario",
    "WireError",
    "Workspace",
    "WorkspaceRooms",
    "approver_app",
    "build_config",
    "draft",
    "fingerprint",
    "load_capture",
    "load_captures",
    "make_app",
    "published_text",
    "salt_id",
    "scan",
    "verify_ledger",
    "verify_records",
]
