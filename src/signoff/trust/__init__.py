"""Ed25519 keys, DSSE envelopes, in-toto statements and offline verification."""

from signoff.trust.dsse import INTOTO_PAYLOAD_TYPE, pae, sign_envelope, verify_envelope
from signoff.trust.evidence import (
    EvidenceReport,
    register_predicate_check,
    verify_bytes,
    verify_file,
    write_evidence,
)
from signoff.trust.intoto import EVIDENCE_KINDS, STATEMENT_TYPE, check_statement, statement, subject
from signoff.trust.keys import KeyStore, PublicKey, SigningKey, key_id
from signoff.trust.policy import DEFAULT_SIGNERS, TrustPolicy

__all__ = [
    "DEFAULT_SIGNERS",
    "EVIDENCE_KINDS",
    "INTOTO_PAYLOAD_TYPE",
    "STATEMENT_TYPE",
    "EvidenceReport",
    "KeyStore",
    "PublicKey",
    "SigningKey",
    "TrustPolicy",
    "check_statement",
    "key_id",
    "pae",
    "register_predicate_check",
    "sign_envelope",
    "statement",
    "subject",
    "verify_bytes",
    "verify_envelope",
    "verify_file",
    "write_evidence",
]
