"""Repair: judge an agent's fix against a frozen, human-approved harness.

This is the facade every face (the CLI, the web pages, the MCP tools, the agents' processes)
imports; the modules behind it are the package's own. The verifier (`verify`) is usable on its own;
`RepairService` reads, decides and records repair cases (people's approvals, resume and abandon,
reports) and runs verifications, `verify_fix` only with a harness a person approved; the room
workflow (`RepairWorkflow`, with the fixer agent's `FixerWorker`) drives a case from a report to a
person's acceptance.

Each name is imported from its module on first use: `signoff repair verify` needs the verifier
alone, and the ledger, rooms and GitHub stacks behind the rest cost a CLI run about a second.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# name -> (module, its name there)
_PUBLIC: dict[str, tuple[str, str]] = {
    "run_fixer": ("signoff.repair.agent_process", "run_fixer"),
    "run_until_idle": ("signoff.repair.agent_process", "run_until_idle"),
    "run_verifier": ("signoff.repair.agent_process", "run_verifier"),
    "watched_rooms": ("signoff.repair.agent_process", "watched_rooms"),
    "read_case": ("signoff.repair.case", "read_case"),
    "read_cases": ("signoff.repair.case", "read_cases"),
    "Move": ("signoff.repair.decisions", "Move"),
    "OperatorCommand": ("signoff.repair.decisions", "OperatorCommand"),
    "StartVerification": ("signoff.repair.decisions", "StartVerification"),
    "EVIDENCE_STAGES": ("signoff.repair.evidence", "EVIDENCE_STAGES"),
    "PREDICATE_TYPE": ("signoff.repair.evidence", "PREDICATE_TYPE"),
    "fingerprint": ("signoff.repair.evidence", "fingerprint"),
    "identity": ("signoff.repair.evidence", "identity"),
    "CHECK_NAME": ("signoff.repair.github_check", "CHECK_NAME"),
    "post_verdict": ("signoff.repair.github_check", "post_verdict"),
    "pull_revisions": ("signoff.repair.github_check", "pull_revisions"),
    "FrozenHarness": ("signoff.repair.harness", "FrozenHarness"),
    "HarnessFile": ("signoff.repair.harness", "HarnessFile"),
    "freeze": ("signoff.repair.harness", "freeze"),
    "harness_digest": ("signoff.repair.harness", "harness_digest"),
    "CaseState": ("signoff.repair.model", "CaseState"),
    "Contract": ("signoff.repair.model", "Contract"),
    "REPAIR_CASE": ("signoff.repair.model", "REPAIR_CASE"),
    "stage_test_file": ("signoff.repair.pytest_config", "stage_test_file"),
    "SyncRepairRooms": ("signoff.repair.rooms", "SyncRepairRooms"),
    "HARNESS_QUESTION": ("signoff.repair.service", "HARNESS_QUESTION"),
    "HarnessApproval": ("signoff.repair.service", "HarnessApproval"),
    "RepairService": ("signoff.repair.service", "RepairService"),
    "frozen_harness": ("signoff.repair.service", "frozen_harness"),
    "harness_content": ("signoff.repair.service", "harness_content"),
    "verify_fix": ("signoff.repair.service", "verify_fix"),
    "signal_summary": ("signoff.repair.signals", "summary"),
    "EXIT_CODES": ("signoff.repair.verdict", "EXIT_CODES"),
    "INCONCLUSIVE": ("signoff.repair.verdict", "INCONCLUSIVE"),
    "REJECTED": ("signoff.repair.verdict", "REJECTED"),
    "VERIFIED": ("signoff.repair.verdict", "VERIFIED"),
    "classify": ("signoff.repair.verdict", "classify"),
    "summarize": ("signoff.repair.verdict", "summarize"),
    "VerifyRequest": ("signoff.repair.verifier", "VerifyRequest"),
    "VerifyResult": ("signoff.repair.verifier", "VerifyResult"),
    "harness_store": ("signoff.repair.verifier", "harness_store"),
    "verify": ("signoff.repair.verifier", "verify"),
    "FixerWorker": ("signoff.repair.workflow", "FixerWorker"),
    "RepairWorkflow": ("signoff.repair.workflow", "RepairWorkflow"),
}

if TYPE_CHECKING:
    from signoff.repair.agent_process import run_fixer, run_until_idle, run_verifier, watched_rooms
    from signoff.repair.case import read_case, read_cases
    from signoff.repair.decisions import Move, OperatorCommand, StartVerification
    from signoff.repair.evidence import EVIDENCE_STAGES, PREDICATE_TYPE, fingerprint, identity
    from signoff.repair.github_check import CHECK_NAME, post_verdict, pull_revisions
    from signoff.repair.harness import FrozenHarness, HarnessFile, freeze, harness_digest
    from signoff.repair.model import REPAIR_CASE, CaseState, Contract
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


def __getattr__(name: str) -> Any:
    found = _PUBLIC.get(name)
    if found is None:
        raise AttributeError(f"module 'signoff.repair' has no attribute {name!r}")
    value = getattr(import_module(found[0]), found[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


__all__ = [
    "CHECK_NAME",
    "EVIDENCE_STAGES",
    "EXIT_CODES",
    "HARNESS_QUESTION",
    "INCONCLUSIVE",
    "PREDICATE_TYPE",
    "REJECTED",
    "REPAIR_CASE",
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
