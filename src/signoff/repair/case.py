"""A repair case: its contract, its state folded from its events, and reading and recording it.

The events on `repair.case.<id>` are the source of truth; `fold` turns them into a `CaseState`
without I/O. `record` writes a decision through `Ledger.update`, so a rule is always applied to the
case as it is when the decision is written.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from signoff.kernel.errors import NotFoundError, UsageError
from signoff.ledger import Event, NewEvent, NewJob, SqlLedger

FINAL = ("ACCEPTED", "DECLINED", "BLOCKED", "ABANDONED")

_STATE_OF = {
    "repair.reported": "REPORTED", "repair.contract_proposed": "CONTRACT_PROPOSED", "repair.approved": "APPROVED",
    "repair.reproduced": "REPRODUCED", "repair.blocked": "BLOCKED", "repair.fix_requested": "FIX_REQUESTED",
    "repair.candidate": "CANDIDATE", "repair.review_requested": "AWAITING_REVIEW", "repair.accepted": "ACCEPTED",
    "repair.declined": "DECLINED", "repair.abandoned": "ABANDONED",
}


def case_key(case_id: str) -> str:
    return f"repair.case.{case_id}"


@dataclass(frozen=True)
class Contract:
    """What "fixed" means for cases reported in one room: authored in advance, presented, approved."""

    name: str
    behaviour: str
    repo: str
    base: str
    harness: str
    expect: str
    regression: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    runner: str = "pytest"
    timeout: float = 60.0
    fixer_script: str = "default"
    # The test environment, as `signoff repair verify` takes it (read at the base revision).
    requirements: list[str] = field(default_factory=list)
    project_deps: bool = False
    extras: list[str] = field(default_factory=list)
    pytest: str | None = None
    python: str | None = None
    allow_source_builds: bool = False

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Contract:
        return cls(**d)

    @classmethod
    def load(cls, path: Path) -> Contract:
        """A contract file (TOML): name, behaviour, repo, base, harness, expect, regression, allow, ...
        Relative paths are taken from the file's folder."""
        if not path.is_file():
            raise NotFoundError(f"contract file not found: {path}", "pass a TOML file describing the contract")
        try:
            data = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path} is not valid TOML: {exc}", "fix the contract file") from exc
        for key in ("repo", "harness"):
            if isinstance(data.get(key), str) and not Path(data[key]).is_absolute():
                data[key] = str((path.parent / data[key]).resolve())
        try:
            contract = cls.from_json(data)
        except TypeError as exc:
            raise UsageError(f"{path}: {exc}", "use the keys name, behaviour, repo, base, harness, expect, "
                                               "regression, allow, pythonpath, runner, timeout, fixer_script, "
                                               "requirements, project_deps, extras, pytest, python, "
                                               "allow_source_builds"
                             ) from exc
        if not contract.name or not contract.expect:
            raise UsageError(f"{path}: the contract needs a name and an expected test", "set name and expect")
        return contract


@dataclass
class CaseState:
    case_id: str
    state: str
    room_id: str
    operator: str  # the linked operator's sender id, opaque (as the server writes it)
    contract: Contract
    base: str
    harness_digest: str
    operator_name: str = ""  # whom replies @-mention (display only: commands are checked by `operator`)
    verifier_name: str = ""  # the verifier agent commands address (empty for cases opened before it was kept)
    attempt: int = 0
    handoffs: dict[int, dict[str, Any]] = field(default_factory=dict)  # attempt -> {command_id, receipt}
    proposals: dict[int, dict[str, Any]] = field(default_factory=dict)
    failures: dict[int, str] = field(default_factory=dict)
    candidates: dict[int, str] = field(default_factory=dict)
    verdicts: dict[int, dict[str, Any]] = field(default_factory=dict)
    reproduction: dict[str, Any] | None = None
    approval: dict[str, Any] | None = None  # the approval event: who approved, from which message
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)  # request id -> {stage, verbs, candidate}
    history: list[str] = field(default_factory=list)
    resumed: int = 0  # times the operator resumed the case (`repair.stuck`)

    @property
    def last_verdict(self) -> dict[str, Any] | None:
        return self.verdicts[max(self.verdicts)] if self.verdicts else None

    def card(self, stage: str) -> str | None:
        """The request id of the approval card asked for `stage` (contract, review), if any."""
        return next((rid for rid, c in self.cards.items() if c["stage"] == stage), None)

    def open_attempt(self, attempt: int) -> bool:
        """The fixer has not acted on this attempt yet."""
        return attempt not in self.proposals and attempt not in self.failures


def fold(events: list[Event]) -> CaseState | None:
    """The case's state from its events (the events are the source of truth)."""
    st: CaseState | None = None
    for ev in events:
        p = ev.payload
        if ev.type == "repair.reported":
            st = CaseState(p["case_id"], "REPORTED", p["room_id"], p["operator"], Contract.from_json(p["contract"]),
                           p["base"], p["harness_digest"], str(p.get("operator_name") or ""),
                           str(p.get("verifier_name") or ""))
        if st is None:
            continue
        if ev.type in _STATE_OF:
            st.state = _STATE_OF[ev.type]
            st.history.append(st.state)
        if ev.type == "repair.reproduced":
            st.reproduction = p
        elif ev.type == "repair.approved":
            st.approval = p
        elif ev.type == "repair.card_requested":
            st.cards[str(p["request_id"])] = {"stage": p["stage"], "verbs": dict(p["verbs"]),
                                              "candidate": str(p.get("candidate") or "")}
        elif ev.type == "repair.fix_requested":
            st.attempt = int(p["attempt"])
            st.handoffs[int(p["attempt"])] = p
        elif ev.type == "repair.resumed":
            # The operator resumed a stuck hand-off: the attempt is handed over again, with a new receipt.
            st.handoffs.pop(int(p["attempt"]), None)
            st.resumed += 1
        elif ev.type == "repair.proposal":
            st.proposals[int(p["attempt"])] = p
        elif ev.type == "repair.attempt_failed":
            st.failures[int(p["attempt"])] = str(p["reason"])
        elif ev.type == "repair.candidate":
            st.candidates[int(p["attempt"])] = p["commit"]
        elif ev.type == "repair.verdict":
            st.verdicts[int(p["attempt"])] = p
            st.state = p["verdict"]
            st.history.append(st.state)
    return st


def folded(history: list[Event]) -> CaseState:
    """`fold` of a case known to exist (cases are never deleted: one that was read before still exists)."""
    st = fold(history)
    if st is None:
        raise NotFoundError("the repair case has no report event", "check the ledger with `signoff ledger verify`")
    return st


def read_case(ledger: SqlLedger, case_id: str) -> CaseState:
    st = fold(ledger.read(case_key(case_id)))
    if st is None:
        raise NotFoundError(f"no repair case {case_id}", "list cases with `signoff repair cases`")
    return st


def read_cases(ledger: SqlLedger) -> list[CaseState]:
    """Every repair case in the ledger, in the order they were opened."""
    out = []
    for key in ledger.case_ids("repair.case."):
        st = fold(ledger.read(key))
        if st is not None:
            out.append(st)
    return out


def record(ledger: SqlLedger, case_id: str, still: Callable[[CaseState], bool], events: list[NewEvent],
           jobs: list[NewJob], idem: str) -> None:
    """Record an outcome on the case while `still` holds for the case as it is then; when another
    delivery of the same job got there first, nothing is written."""

    def decide(history: list[Event]) -> tuple[list[NewEvent], list[NewJob]]:
        now = folded(history)
        # An abandoned case stays as its operator left it: a job still in flight records nothing.
        return (events, jobs) if now.state != "ABANDONED" and still(now) else ([], [])

    ledger.update(case_key(case_id), decide, idempotency_key=idem)
