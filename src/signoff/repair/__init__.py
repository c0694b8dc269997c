"""Repair: judge an agent's fix against a frozen, human-approved harness.

This is the facade every face (the CLI, the web pages, the MCP tools, the agents' processes)
imports; the modules behind it are the package's own. The verifier (`verify`) is usable on its own;
`RepairService` reads, decides and records repair cases (people's approvals, resume and abandon,
reports) and runs verifications, `verify_fix` only with a harness a person approved; the room
workflow (`RepairWorkflow`, with the fixer agent's `FixerWorker`) drives a case from a report to a
person's acceptance.
"""

from signoff.repair.agent_process import run_fixer, run_until_idle, run_verifier, watched_rooms
from signoff.repair.case import read_case, read_cases
from signoff.repair.decisions import Move, OperatorCommand, StartVerification
from signoff.repair.evidence import PREDICATE_TYPE, fingerprint, identity
from signoff.repair.github_check import CHECK_NAME, post_verdict, pull_revisions
from signoff.repair.harness import FrozenHarness, HarnessFile, freeze, harness_digest
from signoff.repair.model import CaseState, Contract
from signoff.repair.pytest_config import stage_test_file
from signoff.repair.rooms import SyncRepairRooms
from signoff.repair.service import (
    HARNESS_QUESTION,
    HarnessApproval,
    RepairService,
    frozen_harness,
    harness_content,
    verify_fix,
)
from signoff.repair.signals import summary as signal_summary
from signoff.repair.verdict import EXIT_CODES, INCONCLUSIVE, REJECTED, VERIFIED, classify, summarize
from signoff.repair.verifier import VerifyRequest, VerifyResult, harness_store, verify
from signoff.repair.workflow import FixerWorker, RepairWorkflow

__all__ = [
    "CHECK_NAME",
    "EXIT_CODES",
    "HARNESS_QUESTION",
    "INCONCLUSIVE",
    "PREDICATE_TYPE",
    "REJECTED",
    "VERIFIED",
    "CaseState",
    "Contract",
    "FixerWorker",
    "FrozenHarness",
    "HarnessApproval",
    "HarnessFile",
    "Move",
    "OperatorCommand",
    "RepairService",
    "RepairWorkflow",
    "StartVerification",
    "SyncRepairRooms",
    "VerifyRequest",
    "VerifyResult",
    "classify",
    "fingerprint",
    "freeze",
    "frozen_harness",
    "harness_content",
    "harness_digest",
    "harness_store",
    "identity",
    "post_verdict",
    "pull_revisions",
    "read_case",
    "read_cases",
    "run_fixer",
    "run_until_idle",
    "run_verifier",
    "signal_summary",
    "stage_test_file",
    "summarize",
    "verify",
    "verify_fix",
    "watched_rooms",
]
