"""Repair: judge an agent's fix against a frozen, human-approved harness.

The verifier (`verify`) is usable on its own; the room workflow (`signoff.repair.workflow`) drives
a case from a report to a person's acceptance.
"""

from signoff.repair.evidence import PREDICATE_TYPE, fingerprint, identity
from signoff.repair.harness import FrozenHarness, freeze, harness_digest
from signoff.repair.verdict import EXIT_CODES, INCONCLUSIVE, REJECTED, VERIFIED, classify, summarize
from signoff.repair.verifier import VerifyRequest, VerifyResult, verify

__all__ = [
    "EXIT_CODES",
    "INCONCLUSIVE",
    "PREDICATE_TYPE",
    "REJECTED",
    "VERIFIED",
    "FrozenHarness",
    "VerifyRequest",
    "VerifyResult",
    "classify",
    "fingerprint",
    "freeze",
    "harness_digest",
    "identity",
    "summarize",
    "verify",
]
