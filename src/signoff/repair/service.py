"""The repair service: the one facade every face calls (the CLI, the web pages, the MCP tools and
the repair room agents), with typed commands.

It reads what a decision needs (the case, the harness digest as it is now, the clock, a
verification's measurements), asks the pure rules (`decisions`) and records what they decide on
the case (`case.record`, through the aggregate contract), so no face holds a rule. Approvals of a
harness, of a candidate and rejections all go through `signoff.ledger.approval.approve` with the
digest of what was shown. The verifier itself (`verify`) runs its I/O steps here too, and
`verify_fix` is the one way to run it for an agent: only with a harness a person approved.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from signoff import git
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import ConflictError, NotFoundError, RefusedError, UsageError
from signoff.kernel.progress import Progress, silent
from signoff.kernel.settings import Settings
from signoff.kernel.shown import shown_digest
from signoff.ledger import Event, Ledger
from signoff.ledger.aggregate import NOTHING, Decision
from signoff.repair import decisions
from signoff.repair.case import cases, read_case, read_cases
from signoff.repair.decisions import DefectReport, Move, OperatorCommand, StartVerification
from signoff.repair.harness import FrozenHarness, HarnessFile, digest_now, freeze, load, shown_files
from signoff.repair.model import (
    FINAL,
    REPAIR_ROOM,
    VERIFIER_LOG,
    CaseState,
    CommandRefused,
    Contract,
    Watch,
    case_key,
    initial,
)
from signoff.repair.verifier import VerifyRequest, VerifyResult, harness_store, verify

HARNESS_QUESTION = "Approve this frozen repair harness as the definition of fixed?"
CARD_TEXT = 60 * 1024  # what a harness card may hold: the gate's card limit (a test keeps them in step)


@dataclass(frozen=True)
class HarnessApproval:
    """What a face learnt about an approval of a harness: the digest of the content the person
    approved (as the server that showed it recorded it), who, and whether they approved."""

    request_id: str
    approved: bool
    content_digest: str | None  # sha256 hex of the content the card showed (None: it binds none)
    by: str | None
    reason: str = ""  # why it does not approve (declined, expired, pending, other content)


class RepairService:
    """Repair cases and verifications, over one ledger and one home."""

    def __init__(self, ledger: Ledger, settings: Settings, agent_id: str = "verifier") -> None:
        self.ledger, self.settings = ledger, settings
        self.agent_id = agent_id  # the verifier whose log keeps refusals outside any case

    # -- reading ---------------------------------------------------------------------------------

    def case(self, case_id: str) -> CaseState:
        return read_case(self.ledger, case_id)

    def cases(self) -> list[CaseState]:
        return read_cases(self.ledger)

    def history(self, case_id: str) -> list[Event]:
        """The case's stored events (a timeline, the evidence files they name)."""
        return self.ledger.read(case_key(case_id))

    def stream(self, case_id: str) -> str:
        """The ledger case a live page follows."""
        return case_key(case_id)

    def harness_store(self) -> Path:
        return harness_store(self.settings)

    def harness_files(self, digest: str) -> list[HarnessFile]:
        """The frozen harness's files, each checked against the digest it is shown under."""
        return shown_files(harness_store(self.settings), digest)

    def freeze(self, harness: Path) -> FrozenHarness:
        return freeze(harness, harness_store(self.settings))

    # -- what a face shows, by its digest --------------------------------------------------------

    @staticmethod
    def contract_shown(st: CaseState) -> str:
        """The digest of the contract as presented (what "approve" approves)."""
        return shown_digest(decisions.presented_contract(st, st.harness_digest))

    @staticmethod
    def review_shown(st: CaseState) -> str:
        """The digest of the review of the last verdict (what "accept" and "reject" decide on)."""
        return shown_digest(decisions.review(st.last_verdict))

    # -- set-up ----------------------------------------------------------------------------------

    def watch(self, room_id: str, contract: Contract, operator_sender: str, operator_name: str,
              verifier_name: str) -> None:
        """Cases reported in `room_id` use `contract`; the operator is the person whose commands count,
        bound by the sender id the server writes, never by a name in a message; commands address the
        agent `verifier_name`."""
        watch = Watch(room_id=room_id, contract=contract.as_json(), operator=operator_sender,
                      operator_name=operator_name, verifier_name=verifier_name)
        self.ledger.append(REPAIR_ROOM.prefix + room_id, None, [watch.new_event()],
                           idempotency_key=f"repair:watch:{room_id}:{canonical_digest(contract.as_json())}")

    def watched(self, room_id: str) -> Watch | None:
        events = self.ledger.read(REPAIR_ROOM.prefix + room_id)
        return Watch.model_validate(events[-1].payload) if events else None

    def watched_since(self, room_id: str) -> int | None:
        """When `room_id` was first watched (epoch ms): where the verifier's and fixer's work there
        begins, whenever they first run."""
        events = self.ledger.read(REPAIR_ROOM.prefix + room_id)
        return int(datetime.fromisoformat(events[0].recorded_at).timestamp() * 1000) if events else None

    def watched_rooms(self) -> list[str]:
        return [case.removeprefix(REPAIR_ROOM.prefix) for case in self.ledger.case_ids(REPAIR_ROOM.prefix)]

    # -- people's decisions ----------------------------------------------------------------------

    def _now(self) -> str:
        return utc_iso(self.ledger.clock.now())

    def _as_read(self, command: OperatorCommand, st: CaseState) -> OperatorCommand:
        """The command with what the rules need read now: the harness (for an approval), the time."""
        harness = digest_now(Path(st.contract.harness)) if command.verb == "approve" else command.harness_digest
        return replace(command, harness_digest=harness, at=command.at or self._now())

    def check(self, command: OperatorCommand, verifier_name: str) -> None:
        """Refuse (RefusedError for someone who may not decide, ConflictError for a decision on other
        content or state than the case holds) what `decide` would refuse; records nothing. A page asks
        this before it sends the person's command, so a refused click leaves nothing behind."""
        st = self.case(command.case_id)
        _, why = decisions.judge(st, self._as_read(command, st), verifier_name)
        if why is not None:
            kind = RefusedError if command.sender != st.operator else ConflictError
            raise kind(why, "only the linked operator acts on a case, in the state the case page shows; "
                            "reload the case and review it")

    def decide(self, command: OperatorCommand, verifier_name: str) -> None:
        """An operator's approve, accept or reject (a room message, a card's answer), decided against
        the case as it is when it is written; a refusal is recorded and said in the room."""
        try:
            st = self.case(command.case_id)
        except NotFoundError:
            refused = decisions.refuse_unknown(command.verb, command.case_id, command.message_id, command.room_id)
            self._log(refused, command.key)
            return
        # The harness is read once; the rules apply to the case as it is when the decision is written.
        command = self._as_read(command, st)
        cases(self.ledger).execute(command.case_id, lambda now: decisions.decide(now, command, verifier_name),
                                   command.key)

    def move(self, case_id: str, move: Move) -> CaseState:
        """Resume or abandon a stuck case, or ask for another attempt once its attempts have ended
        (retry). From the room (`move.via == "room"`) a refusal is recorded
        and said there; from the command line it is raised (RefusedError, UsageError) and nothing is
        written."""
        try:
            st = self.case(case_id)
        except NotFoundError:
            if move.via != "room":
                raise
            message_id = move.key.removeprefix("repair:msg:")
            self._log(Decision.of(CommandRefused(message_id=message_id, reason="unknown"),
                                  jobs=[decisions.say(str(move.room_id), f"{move.verb} refused: there is no case "
                                                                         f"{case_id}.", move.key)]), move.key)
            return initial(case_id)
        if move.via == "room":
            return cases(self.ledger).execute(case_id, lambda now: decisions.decide(now, move), move.key)
        why = decisions.move_refusal(st, move)
        if why is not None:
            if move.verb in ("abandon", "retry") and not move.reason:
                raise UsageError(why, "pass --reason TEXT")
            fix = "ask the case's operator" if move.sender != st.operator else f"see `signoff repair show {case_id}`"
            raise RefusedError(why, fix)

        def decide(now: CaseState) -> Decision:
            if decisions.move_refusal(now, move) is not None:
                return NOTHING  # moved meanwhile: said below
            return decisions.decide(now, move)

        after = cases(self.ledger).execute(case_id, decide, f"repair:{move.verb}:{move.key}")
        if (move.verb == "abandon" and after.state != "ABANDONED") or (
                move.verb == "resume" and after.resumed == st.resumed) or (
                move.verb == "retry" and len(after.retries) == len(st.retries)):
            raise RefusedError(f"{move.verb} refused: {case_id} moved meanwhile (now {after.state})",
                               "read it again with `signoff repair show` and decide on what it is now")
        return after

    def start_verification(self, case_id: str, start: StartVerification) -> int:
        """Ask the verifier to verify one of the case's candidates with its approved contract (the
        verifier's outbox job runs it, reporting each step on the case); returns the run's number.
        Refused before anything is written: RefusedError (not the operator), UsageError (not a
        candidate of the case), ConflictError (the case abandoned, a run of it still pending)."""
        st = self.case(case_id)
        refusal = decisions.verification_refusal(st, start)
        if refusal is not None:
            kind = {"refused": RefusedError, "usage": UsageError}.get(refusal.kind, ConflictError)
            raise kind(refusal.text, "pick a candidate the case page lists; only the case's operator starts a run")
        after = cases(self.ledger).execute(case_id, lambda now: decisions.decide(now, start), start.key)
        run = next((n for n, c in after.checks.items() if c["key"] == start.key), None)
        if run is None:
            raise ConflictError(f"verify refused: {case_id} moved meanwhile (now {after.state})",
                                "reload the case page and start it again")
        return run

    def report(self, report: DefectReport) -> None:
        """A report in a watched room opens a case with the room's contract (or notes the open one)."""
        watch = self.watched(report.room_id)
        if watch is None:
            return
        open_cases = [c for c in self.cases() if c.room_id == report.room_id and c.state not in FINAL]
        if open_cases:
            self._log(decisions.note_open(open_cases[0], report), report.key)
            return
        contract = Contract.from_json(watch.contract)
        repo = git.open_repo(Path(contract.repo))
        base = git.resolve(repo, contract.base)
        # The case names its repository as people know it, beside the base revision it resolved.
        contract = replace(contract, repository=contract.repository or repository_reference(repo))
        frozen = freeze(Path(contract.harness), harness_store(self.settings))
        number = self.ledger.next_number(f"repair.{contract.name}")
        case_id = f"{contract.name}-{number:02d}"
        decision = decisions.open_case(case_id, report, {**watch.payload(), "contract": contract.as_json()}, base,
                                       frozen.digest)
        self.ledger.append(case_key(case_id), 0, [e.new_event() for e in decision.events], list(decision.jobs),
                           idempotency_key=report.key)

    def _log(self, decision: Decision, key: str) -> None:
        self.ledger.append(VERIFIER_LOG.prefix + self.agent_id, None, [e.new_event() for e in decision.events],
                           list(decision.jobs), idempotency_key=key)

    # -- verification ----------------------------------------------------------------------------

    def verify(self, request: VerifyRequest, progress: Progress = silent) -> VerifyResult:
        """Run a verification (the sandbox, the evidence) as `signoff repair verify` does."""
        return verify(request, self.settings, progress)


def repository_reference(repo: Path) -> str:
    """How people know `repo`: its `origin` remote's URL with no credentials, query or fragment
    (`https://github.com/o/r`, `git@github.com:o/r.git`), else the name of its folder (a path on
    this machine means nothing in a shared room)."""
    url = git.run(repo, "config", "--get", "remote.origin.url", check=False).stdout.decode(errors="replace").strip()
    return public_url(url) or Path(repo).resolve().name


def public_url(url: str) -> str:
    """`url` as it may be shown to anyone: a `scheme://host[:port]/path` URL without its user,
    password, query or fragment, or an scp-like `user@host:path`; "" for anything else."""
    if re.fullmatch(r"[\w.-]+@[\w.-]+:[\w./~-]+", url):
        return url
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ""
    if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname:
        return ""
    netloc = parts.hostname + (f":{port}" if port else "")
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return shown if shown.isprintable() and len(shown) <= 300 else ""


# -- a harness a person approves, and verification with it (no ledger needed: the MCP tools) --------


def frozen_harness(settings: Settings, digest: str) -> FrozenHarness:
    """A frozen harness of this home's store, re-digested (an altered copy is refused)."""
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise UsageError(f"bad harness id {digest!r}", "pass the 64-hex digest `signoff repair freeze DIR` printed")
    return load(harness_store(settings), digest)


def harness_content(settings: Settings, digest: str) -> str:
    """A frozen harness as a card shows it: the digest, then each file with its digest, size and
    (when it is UTF-8 and the whole fits in a card) its text, read as every face reads a harness
    (`shown_files`: each file's bytes checked against the digest it is shown under)."""
    files = shown_files(harness_store(settings), frozen_harness(settings, digest).digest)
    head = [f"signoff repair harness sha256:{digest}", f"{len(files)} files"]
    headers = [f"--- {f.path} (sha256:{f.sha256}, {f.size} bytes)" for f in files]
    bodies = [f.text if f.text is not None else "(not UTF-8 text, or too long; compare the digest)" for f in files]
    full = "\n".join(head + [part for pair in zip(headers, bodies, strict=True) for part in pair])
    if len(full.encode("utf-8")) <= CARD_TEXT:
        return full
    return "\n".join([*head, "(too large to show in a card: compare each file's digest)", *headers])


def verify_fix(settings: Settings, request: VerifyRequest, approval: HarnessApproval) -> VerifyResult:
    """"verify_fix needs an approved harness": verify with the frozen harness `request.frozen_digest`
    only when `approval` approves exactly that harness as this home shows it (`harness_content`, by
    its sha256); else RefusedError and nothing runs. The run requires that digest too."""
    digest = request.frozen_digest or ""
    content = harness_content(settings, digest)
    if not approval.approved or approval.content_digest != _sha256(content):
        why = approval.reason or ("it approves other content" if approval.approved else "not approved")
        raise RefusedError(f"harness {digest[:12]} is not approved by {approval.request_id!r}: {why}",
                           "call request_harness_approval for this harness and wait until a person approves it")
    return verify(replace(request, harness=None, approved_digest=digest, frozen_digest=digest), settings)

def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
