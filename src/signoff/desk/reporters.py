"""Reporters: the capability that proves a report is theirs, the tracking page they may see, and
their answers to the two questions (the reproduction, the release). Only reports filed before a
question was posed decide it; later answers are kept for the owner, who may accept a "no"."""

from __future__ import annotations

import re
from typing import Any

from signoff import airlock
from signoff.desk import decisions
from signoff.desk.base import DeskBase, report_case
from signoff.desk.credentials import DeskCaller, require
from signoff.desk.intake import Quarantined
from signoff.desk.model import Bug
from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import RefusedError, UsageError
from signoff.trust.credentials import matches as credential_matches

INVALID_LINK = ("this tracking link is not valid", "use the link you were given when you reported")


def filtered_reason(reason: str | None) -> dict[str, Any]:
    """A reporter's reason for a "no", through the airlock: redacted text, or Quarantined."""
    if not reason or not reason.strip():
        raise UsageError('a "no" needs a reason', "say what still goes wrong")
    verdict = airlock.scan(reason)
    if verdict.quarantined:
        raise Quarantined(verdict.families, verdict.message)
    assert verdict.dossier is not None
    return {"reason": verdict.dossier.render(), "raw_sha256": verdict.raw_sha256}


REPORT_ID = re.compile(r"RPT-\d{4,}")  # what a report id looks like (`readable_id("RPT", n)`)


def _yes_or_no(answer: str) -> None:
    if answer not in ("yes", "no"):
        raise UsageError(f"answer {answer!r} is not yes or no", "answer yes or no")


class ReporterSteps(DeskBase):
    def reporter(self, report_id: str, capability: str | None) -> DeskCaller:
        """The reporter of `report_id` if `capability` is theirs (constant-time); RefusedError otherwise."""
        if not isinstance(report_id, str) or not REPORT_ID.fullmatch(report_id):
            raise UsageError(f"{report_id!r} is not a report id", "report ids look like RPT-0001")
        filed = self.ledger.read(report_case(report_id))
        if not filed or not capability:
            # Same answer for unknown reports and missing capabilities: no report enumeration.
            raise RefusedError(*INVALID_LINK)
        bug = self.bug(filed[0].payload["bug_id"])
        stored = bug.reports[report_id]["token_sha256"]
        if not credential_matches(stored, capability):
            raise RefusedError(*INVALID_LINK)
        return DeskCaller("reporter", report_id, report_id=report_id)

    def track(self, actor: DeskCaller) -> dict[str, Any]:
        """What a reporter may see: an allowlisted projection, never other reporters' text."""
        require(actor, "reporter", what="read a tracking page")
        assert actor.report_id is not None
        bug_id = self.report_bug_id(actor.report_id)
        bug = self.bug(bug_id)
        notices = [{"kind": e.payload["kind"], "text": e.payload["text"], "round": e.payload["round"],
                    "at": e.recorded_at} for e in self.ledger.read(f"desk/inbox/{actor.report_id}")]
        question = None
        if bug.state == "awaiting_reporter":
            question = "reproduction"
        elif bug.state in ("released", "verified") and actor.report_id not in bug.verified_by:
            question = "release"
        repro = bug.reproduction
        return {"report_id": actor.report_id, "bug_id": bug_id, "state": bug.state, "round": bug.round,
                "title": bug.reports[actor.report_id]["title"], "question": question,
                "test": {"path": repro["test_path"], "source": repro["test_source"], "message": repro["message"]}
                if repro and question == "reproduction" else None,
                "release": {"commit": bug.release["commit"]} if bug.release else None, "notices": notices}

    def _own_report(self, actor: DeskCaller, bug_id: str | None) -> tuple[str, str]:
        """(report id, bug id) of the reporter answering, who may answer only for their own bug."""
        require(actor, "reporter", what="answer for a report")
        assert actor.report_id is not None
        own = self.report_bug_id(actor.report_id)
        if bug_id is not None and bug_id != own:
            raise RefusedError(f"report {actor.report_id} is not a report of {bug_id}",
                               "only the original reporter of a report in that bug may answer")
        self.bug(own)
        return actor.report_id, own

    def confirm(self, actor: DeskCaller, answer: str, reason: str | None = None, bug_id: str | None = None,
                round_: int | None = None) -> Bug:
        """The reporter's answer to the reproduction: "yes" starts the fix, "no" (with a reason) a new round."""
        rid, own = self._own_report(actor, bug_id)
        _yes_or_no(answer)
        cmd = decisions.Confirm(rid, answer, filtered_reason(reason) if answer == "no" else None, round_)
        return self.decide(own, cmd)

    def verify_release(self, actor: DeskCaller, answer: str, reason: str | None = None,
                       bug_id: str | None = None) -> Bug:
        """The reporter's answer to the live fix: "yes" verifies, "no" (with a reason) reopens."""
        rid, own = self._own_report(actor, bug_id)
        _yes_or_no(answer)
        cmd = decisions.VerifyRelease(rid, answer, filtered_reason(reason) if answer == "no" else None)
        return self.decide(own, cmd)

    def accept_dispute(self, actor: DeskCaller, bug_id: str, index: int, shown: str | None = None,
                       via: str = "desk") -> Bug:
        """A person agrees with a "no" from a reporter who was not entitled to the question: the bug
        reopens for a new reproduction; the test is not added to the rejected list. `shown` is the
        digest of the dispute as the person was shown it (`approvals.dispute_shown`): anything else is
        refused, nothing recorded."""
        require(actor, "owner", what="accept a reporter's dispute")
        if not actor.human or actor.shared:
            raise RefusedError("only a named person may accept a dispute",
                               "use your own owner credential (not a bot's, not the shared key)")
        cmd = decisions.AcceptDispute(index, actor.name, shown, utc_iso(self.clock.now()), via)
        return self.decide(bug_id, cmd)
