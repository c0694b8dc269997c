"""The repair workflow's effects: one handler per outbox topic, run by the ledger's `Worker`.

Each handler first checks whether its effect already happened (the case's events, the room's
documents, the verifier's earlier messages), then records its outcome only while the case still
needs it, so a job delivered again after a crash or a lapsed lease repeats nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from signoff import git
from signoff.kernel.canonical import canonical_digest
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings
from signoff.ledger import SqlLedger
from signoff.repair import decisions, run_env
from signoff.repair.case import read_case, record
from signoff.repair.decisions import BaseRun, card_request_id
from signoff.repair.harness import shown_files
from signoff.repair.model import FINAL, CaseState, Verdict, VerificationMeasured
from signoff.repair.rooms import RepairRooms
from signoff.repair.verdict import INCONCLUSIVE, VERIFIED
from signoff.repair.verifier import VerifyRequest, VerifyResult, harness_store, verify
from signoff.rooms import Receipt

CARD_SECONDS = 7 * 24 * 3600.0  # how long an approval card waits for its answer
DOCUMENT_TEXT = 512 * 1024  # harness text a contract document carries (a room document holds 1 MiB)

TOPICS = ("repair.say", "repair.present", "repair.reproduce", "repair.handoff", "repair.commit",
          "repair.verify", "repair.review", "repair.contract_approved", "repair.verify_again")


class RepairJobs:
    """The handlers of the repair topics, acting as the verifier agent through its rooms."""

    def __init__(self, ledger: SqlLedger, rooms: RepairRooms, settings: Settings, fixer_name: str,
                 max_attempts: int) -> None:
        self.ledger, self.rooms, self.settings = ledger, rooms, settings
        self.fixer_name = fixer_name
        self.max_attempts = max_attempts

    def run(self, topic: str, key: str, payload: dict[str, Any]) -> None:
        handlers: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "repair.say": self.on_say, "repair.present": self.on_present, "repair.reproduce": self.on_reproduce,
            "repair.handoff": self.on_handoff, "repair.commit": self.on_commit, "repair.verify": self.on_verify,
            "repair.review": self.on_review, "repair.contract_approved": self.on_contract_approved,
            "repair.verify_again": self.on_verify_again,
        }
        if topic != "repair.say" and "case_id" in payload \
                and read_case(self.ledger, payload["case_id"]).state == "ABANDONED":
            return  # its operator abandoned the case: no effect of it happens any more
        handlers[topic](key, payload)

    def post(self, room_id: str, text: str, marker: str, targets: tuple[str, ...] = ()) -> Receipt:
        return self.rooms.post(room_id, text, marker, targets)

    # -- handlers -------------------------------------------------------------------------------

    def on_say(self, key: str, p: dict[str, Any]) -> None:
        self.post(p["room_id"], p["text"], p["marker"])

    def contract_document(self, st: CaseState) -> str:
        """The case room's contract document: the repository and base revision, the contract, every
        harness file; once approved, who approved it, from which message, and the digest approved."""
        c = st.contract
        approve = decisions.command_for(st, "approve", self.rooms.name)  # names the digest of what is shown
        lines = [
            f"# Repair contract {st.case_id}", "", f"Expected behaviour: {c.behaviour}", "",
            *([f"- repository: {c.repository}"] if c.repository else []),
            f"- base revision: {st.base}", f"- harness digest: {st.harness_digest}",
            f"- expected test (must fail on base by an assertion, then pass): {c.expect}",
            f"- regression tests (must keep passing): {', '.join(c.regression) or 'none'}",
            f"- paths the fix may change: {', '.join(c.allow) or 'any'}",
            f"- runner: {c.runner}",
            *([f"- environment variables of every test run: {run_env.shown(c.env)}"] if c.env else []),
            *(["- extension modules: built for each revision in the sandbox (its native code runs in the tests)"]
              if c.build_extensions else []),
            "", *self._harness_text(st), "",
        ]
        approval = (st.approval or {}).get("approval")
        if st.approval is None:
            lines.append(f"Approve exactly this with `{approve}` (its digest names this contract; or its approval "
                         "card, where this server has them).")
        else:
            by = st.approval["by"]
            name = self._operator_name(st) if by == st.operator else by
            lines += ["## Approved", "", f"- approved by: {name} (sender id {by})",
                      f"- approval message: {st.approval['message_id']}",
                      f"- harness digest approved: {st.approval['harness_digest']}"]
            if approval is not None:
                lines += [f"- approved at: {approval['at']} (via {approval['via']})",
                          f"- digest of the contract as shown: {approval['digest']}"]
        return "\n".join(lines)

    def on_present(self, key: str, p: dict[str, Any]) -> None:
        st = read_case(self.ledger, p["case_id"])
        name = f"contract {st.case_id}"
        approve = decisions.command_for(st, "approve", self.rooms.name)
        doc_id = self.rooms.documents(st.room_id).get(name) or self.rooms.create_document(
            st.room_id, name, self.contract_document(st), "the executable contract of a repair case")
        self.attach_repository(st)
        card = self._card(st, "contract", f"Approve the repair contract {st.case_id} (harness "
                                          f"{st.harness_digest[:12]}, base {st.base[:12]})", {"approve": "approve"})
        how = f"on the approval card {card}" if card else f"with `{approve}`"
        self.post(st.room_id, f"@{p['operator_name']} contract for {st.case_id} is in document '{name}' "
                              f"(harness {st.harness_digest[:12]}, base {st.base[:12]}, digest "
                              f"{decisions.shown_short(st, 'approve')}). Approve it {how}.", key)
        record(self.ledger, st.case_id, decisions.Present(doc_id), f"repair:done:{key}")

    def attach_repository(self, st: CaseState) -> bool:
        """The case room's reference to the repository at the case's base revision (`repository_link`),
        attached once per case (a redelivered job finds it by its name). A repository known only by
        a folder name gets none (the contract document still names it); a server that refuses the
        reference (rights to change the room) leaves the case as it was: False."""
        link = repository_link(st.contract.repository, st.base)
        if link is None:
            return False
        kind, urls = link
        name = f"repair {st.case_id}: {st.contract.repository} at {st.base[:12]}"[:200]
        try:
            listed = self.rooms.call(st.room_id, "list_references") or {}
            if any(r.get("name") == name for r in listed.get("references") or []):
                return True
            made = self.rooms.call(st.room_id, "create_reference", type=kind, name=name, value={"urls": urls},
                                   description=f"The repository of repair case {st.case_id} and its base revision "
                                               f"{st.base}.",
                                   instructions="The code the case is about; the contract document holds the test.")
            self.rooms.call(st.room_id, "attach_reference_to_room", room_id=st.room_id, reference_id=str(made["id"]))
        except SignoffError:
            return False
        return True

    def on_contract_approved(self, key: str, p: dict[str, Any]) -> None:
        """The contract document, once approved, names the approver and the approval message."""
        st = read_case(self.ledger, p["case_id"])
        doc_id = self.rooms.documents(st.room_id).get(f"contract {st.case_id}")
        if st.approval is None or doc_id is None:
            return
        content = self.contract_document(st)
        if self.rooms.read_document(st.room_id, doc_id) != content:  # a redelivery finds it done
            self.rooms.update_document(st.room_id, doc_id, content)

    def _harness_text(self, st: CaseState) -> list[str]:
        """The harness files the contract approves, as the document shows them: each file's digest
        and text (within the room's document size), so its digest is approved with its bytes seen."""
        lines = [f"## Harness files ({st.harness_digest[:12]})", ""]
        budget = DOCUMENT_TEXT
        for f in shown_files(harness_store(self.settings), st.harness_digest):
            lines.append(f"### {f.path}  sha256 {f.sha256}  {f.size} bytes{'  executable' if f.executable else ''}")
            if f.text is not None and len(f.text.encode()) <= budget:
                budget -= len(f.text.encode())
                lines += ["", "```", f.text.rstrip("\n"), "```", ""]
            else:
                lines += ["", f"(not shown here: see `signoff repair harness {st.case_id}` or the case page)", ""]
        return lines

    def _request(self, st: CaseState, **overrides: Any) -> VerifyRequest:
        c = st.contract
        fields: dict[str, Any] = dict(
            repo=Path(c.repo), base=st.base, candidate=st.base, harness=None, expect=c.expect,
            regression=list(c.regression), allow=list(c.allow), pythonpath=list(c.pythonpath), runner=c.runner,
            timeout=c.timeout, approved_digest=st.harness_digest, frozen_digest=st.harness_digest,
            requirements=list(c.requirements), project_deps=c.project_deps, extras=list(c.extras), pytest=c.pytest,
            python=c.python, allow_source_builds=c.allow_source_builds, lock=c.lock, workdir=c.workdir,
            env=dict(c.env), build_extensions=c.build_extensions)
        fields.update(overrides)
        return VerifyRequest(**fields)

    def on_reproduce(self, key: str, p: dict[str, Any]) -> None:
        st = read_case(self.ledger, p["case_id"])
        if st.reproduction is not None or st.state == "BLOCKED":
            return
        result = verify(self._request(st, stages=("base",)), self.settings)
        base = result.stages["base"].summary
        run = BaseRun(base.outcome, base.defect_shown, base.message, result.reasons, result.fingerprint,
                      str(result.evidence))
        record(self.ledger, st.case_id, decisions.Reproduce(run, key), f"repair:done:{key}")

    def on_handoff(self, key: str, p: dict[str, Any]) -> None:
        st = read_case(self.ledger, p["case_id"])
        attempt = int(p["attempt"])
        if attempt in st.handoffs:
            return
        command = {"command_id": canonical_digest({"case": st.case_id, "attempt": attempt})[:24],
                   "action": "propose_fix", "case_id": st.case_id, "base": st.base, "attempt": attempt}
        receipt = self.post(st.room_id, json.dumps(command, sort_keys=True), key, targets=(self.fixer_name,))
        record(self.ledger, st.case_id, decisions.HandOff(
            attempt, str(command["command_id"]), receipt.to_dict()), f"repair:done:{key}")

    def on_commit(self, key: str, p: dict[str, Any]) -> None:
        st = read_case(self.ledger, p["case_id"])
        attempt = int(p["attempt"])
        if attempt in st.candidates:
            return
        proposal = st.proposals[attempt]
        repo = git.open_repo(Path(st.contract.repo))
        files = {f["path"]: f["content"] for f in proposal["files"]}
        message = f"{st.case_id} attempt {attempt}: {proposal['summary'][:200]}"
        commit = git.commit_files(repo, st.base, files, message, ref=f"refs/signoff/repair/{st.case_id}/{attempt}")
        record(self.ledger, st.case_id, decisions.Commit(attempt, commit), f"repair:done:{key}")

    def on_verify(self, key: str, p: dict[str, Any]) -> None:
        st = read_case(self.ledger, p["case_id"])
        attempt = int(p["attempt"])
        if attempt in st.verdicts:
            return
        commit = st.candidates[attempt]
        result = verify(self._request(st, candidate=commit), self.settings)
        diff = git.diff_text(git.open_repo(Path(st.contract.repo)), st.base, commit, limit=20_000)
        measured = measured_verdict(attempt, commit, result, diff)
        record(self.ledger, st.case_id, decisions.Measure(measured, self.max_attempts),
               f"repair:done:{key}")

    def on_verify_again(self, key: str, p: dict[str, Any]) -> None:
        """A verification a person started: the case's approved contract against one of its
        candidates, each step recorded on the case (what the page shows while it runs)."""
        st = read_case(self.ledger, p["case_id"])
        run = int(p["run"])
        check = st.checks.get(run)
        if check is None or check["state"] == "done":
            return

        def progress(step: str, done: int | None = None, total: int | None = None) -> None:
            said = f"{step} ({done}/{total})" if total else step
            record(self.ledger, st.case_id, decisions.VerificationStep(run, said), f"repair:done:{key}:{said}")

        progress("started")
        try:
            result = verify(self._request(st, candidate=check["candidate"]), self.settings, progress)
        except SignoffError as exc:
            # It could not run at all (the repository moved, the commit is gone): fail closed, said
            # on the page and in the room, rather than a run that stays "running".
            measured = VerificationMeasured(run=run, candidate=check["candidate"], verdict=INCONCLUSIVE,
                                            reasons=[{"code": "not_run", "text": "the verification could not run",
                                                      "detail": exc.message}], fingerprint="", evidence="")
        else:
            measured = VerificationMeasured(run=run, candidate=check["candidate"], verdict=result.verdict,
                                            reasons=result.reasons, fingerprint=result.fingerprint,
                                            evidence=str(result.evidence))
        record(self.ledger, st.case_id, decisions.VerificationDone(measured, key), f"repair:done:{key}")

    def on_review(self, key: str, p: dict[str, Any]) -> None:
        st = read_case(self.ledger, p["case_id"])
        if st.state in ("AWAITING_REVIEW", *FINAL):
            return
        v = st.last_verdict
        if v is None:
            text = (f"@{self._operator_name(st)} {st.case_id}: no candidate after {self.max_attempts} attempts "
                    f"({'; '.join(st.failures.values())}). Reply "
                    f"`{decisions.command_for(st, 'reject', self.rooms.name)}`.")
        else:
            name = f"review {st.case_id} attempt {v['attempt']}"
            if name not in self.rooms.documents(st.room_id):
                self.rooms.create_document(st.room_id, name,
                                           f"verdict {v['verdict']}\nevidence {v['evidence']}\n\n{v['diff']}",
                                           "verdict, evidence and diff of a repair candidate")
            verbs = {"accept": "accept", "reject": "reject"} if v["verdict"] == VERIFIED else {"reject": "reject"}
            card = self._card(st, "review", f"{st.case_id}: {v['verdict']} for candidate {v['candidate'][:12]}",
                              verbs, candidate=v["candidate"])
            # An acceptance names the candidate reviewed, and every decision the digest of this review:
            # a later candidate, or a review presented again after a change, is never decided by it.
            action = f"on the approval card {card}" if card else " or ".join(
                f"`{decisions.command_for(st, verb, self.rooms.name)}`" for verb in verbs)
            text = (f"@{self._operator_name(st)} {st.case_id}: {v['verdict']} for candidate {v['candidate'][:12]} "
                    f"(fingerprint {v['fingerprint'][:12]}); diff and evidence in document '{name}', "
                    f"evidence file {v['evidence']}; review digest {decisions.shown_short(st, 'reject')}. "
                    f"Reply {action}.")
        self.post(st.room_id, text, key)
        record(self.ledger, st.case_id, decisions.AskReview(),
               f"repair:done:{key}")

    def _card(self, st: CaseState, stage: str, title: str, verbs: dict[str, str], candidate: str = "") -> str | None:
        """Where the server has approval cards, the card for this decision (asked once, recorded on
        the case, so a typed command no longer decides it); None where decisions are addressed
        commands, or when the server refuses the card (the command then decides)."""
        if st.card(stage) is not None:
            return st.card(stage)
        if self.rooms.decision_channel != "approval_card":
            return None
        request_id = card_request_id(st.case_id, stage, len(st.retries) if stage == "review" else 0)
        options = [{"id": option, "label": option.capitalize(),
                    "decision": "decline" if verb == "reject" else "accept"} for option, verb in verbs.items()]
        try:
            self.rooms.request_card(st.room_id, request_id, title, options, [self._operator_name(st)],
                                    self.ledger.clock.now() + CARD_SECONDS)
        except SignoffError:
            return None  # e.g. the server knows the operator by another name: the command decides
        record(self.ledger, st.case_id, decisions.AskCard(request_id, stage, verbs, candidate),
               f"repair:card:{request_id}")
        return request_id

    def _operator_name(self, st: CaseState) -> str:
        # Sender ids are opaque (a Matrix id on Switch): the name comes from the watch, never from
        # parsing the id. Cases reported before the name was recorded fall back to the id itself.
        return st.operator_name or st.operator


def repository_link(repository: str, base: str) -> tuple[str, list[str]] | None:
    """A room reference for a repository as people know it (`repository_reference`): its type and
    URLs, the web address of the repository and, on GitHub, of the base commit. An scp-like or ssh
    remote (`git@github.com:o/r.git`) is read as its https address; a bare folder name has none."""
    scp = re.fullmatch(r"[\w.-]+@([\w.-]+):([\w./~-]+)", repository)
    parts = urlsplit(f"https://{scp[1]}/{scp[2]}" if scp else repository)
    if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname or not parts.path.strip("/"):
        return None
    path = parts.path.rstrip("/").removesuffix(".git")
    scheme = parts.scheme if parts.scheme in ("https", "http") else "https"
    url = f"{scheme}://{parts.hostname}{f':{parts.port}' if parts.port and scheme == parts.scheme else ''}{path}"
    if parts.hostname == "github.com" and re.fullmatch(r"[0-9a-f]{40}", base):
        return "github", [url, f"{url}/commit/{base}"]
    return "url", [url]


def measured_verdict(attempt: int, commit: str, result: VerifyResult, diff: str) -> Verdict:
    """A verification's outcome as the case records it."""
    return Verdict(attempt=attempt, candidate=commit, verdict=result.verdict, reasons=result.reasons,
                   fingerprint=result.fingerprint, evidence=str(result.evidence), diff=diff, tamper=result.tamper,
                   signals=result.signals)
