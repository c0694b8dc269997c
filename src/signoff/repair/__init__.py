"""Repair: judge an agent's fix against a frozen, human-approved harness.

The verifier (`verify`) is usable on its own; the room workflow (`RepairWorkflow`, with the fixer
agent's `FixerWorker`) drives a case from a report to a person's acceptance, and `read_case` /
`read_cases` read cases back from the ledger.
"""

from signoff.repair.case import CaseState, Contract, read_case, read_cases
from signoff.repair.evidence import PREDICATE_TYPE, fingerprint, identity
from signoff.repair.harness import FrozenHarness, freeze, harness_digest
from signoff.repair.verdict import EXIT_CODES, INCONCLUSIVE, REJECTED, VERIFIED, classify, summarize
from signoff.repair.verifier import VerifyRequest, VerifyResult, verify
from signoff.repair.workflow import FixerWorker, RepairWorkflow

__all__ = [
    "EXIT_CODES",
    "INCONCLUSIVE",
    "PREDICATE_TYPE",
    "REJECTED",
    "VERIFIED",
    "CaseState",
    "Contract",
    "FixerWorker",
    "FrozenHarness",
    "RepairWorkflow",
    "VerifyRequest",
    "VerifyResult",
    "classify",
    "fingerprint",
    "freeze",
    "harness_digest",
    "identity",
    "read_case",
    "read_cases",
    "summarize",
    "verify",
]
