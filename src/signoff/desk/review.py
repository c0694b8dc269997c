"""Review and merge: the change's tier (from its changed paths), approvals of the exact head by
people, the merge check (a human merges the reviewed head with the approvals its tier needs), the
merge as the forge reports it, and a person resuming a bug that needs one."""

from __future__ import annotations

import re
from typing import Any

from signoff.desk import codeowners, decisions
from signoff.desk.approvals import SHIP, review_approval
from signoff.desk.credentials import Credentials, DeskCaller, require
from signoff.desk.model import Bug
from signoff.desk.release import ReleaseSteps
from signoff.kernel.clock import utc_iso
from signoff.kernel.errors import ConflictError, RefusedError, UsageError


class ReviewSteps(ReleaseSteps):
    def changed_paths(self, bug: Bug) -> list[str]:
        assert bug.change is not None
        return self.forge.changed_paths(bug.change["repo"], bug.change["base"], bug.change["head"])

    def tier(self, bug: Bug) -> tuple[int, list[str]]:
        """The change's tier (0 documentation, 1 code, 2 sensitive) and its changed paths."""
        paths = self.changed_paths(bug)
        return decisions.tier(paths, self.config), paths

    def codeowners(self, bug: Bug, paths: list[str]) -> frozenset[str]:
        """The code owners of `paths`, from CODEOWNERS at the change's base (never its head)."""
        assert bug.change is not None
        text = self.forge.read(bug.change["repo"], bug.change["base"], "CODEOWNERS") or self.forge.read(
            bug.change["repo"], bug.change["base"], ".github/CODEOWNERS") or ""
        rules = codeowners.parse(text)
        owners: set[str] = set()
        for p in paths:
            owners.update(codeowners.owners_of(rules, p))
        return frozenset(owners)

    def approve(self, actor: DeskCaller, bug_id: str, head: str, note: str = "") -> Bug:
        """A human owner approves the exact head SHA through the desk."""
        require(actor, "owner", what="approve a change")
        if not actor.human:
            raise RefusedError(f"{actor.name} is not a human user", "approvals come from people")
        return self.record_approval(bug_id, head, actor.name.lower(), "desk", shared=actor.shared, note=note)

    def person_of(self, face: str, login: str) -> str | None:
        """The person behind `login` on `face` (desk, forge), or None when no person record binds it:
        approvals count people, not logins (see signoff.desk.people)."""
        owners = {str(c["name"]) for c in Credentials(self.ledger).list()
                  if c["role"] == "owner" and c.get("human") and not c.get("shared")}
        return self.config.people.person(face, login, owners, self.config.forge == "local")

    def record_approval(self, bug_id: str, head: str, login: str, via: str, shared: bool = False,
                        note: str = "", key: str | None = None, review_id: str | None = None) -> Bug:
        """An approval of `head`, by the desk (`approve`) or from the forge's signed review webhook,
        attributed to the person behind the login (the shared owner key is nobody)."""
        person = None if shared else self.person_of("desk" if via == "desk" else "forge", login)
        logins = self.config.people.forge_logins(person, self.config.forge == "local") if person else frozenset()

        def command(b: Bug) -> decisions.RecordApproval:
            owners = self.codeowners(b, self.changed_paths(b)) if b.change is not None else frozenset()
            return decisions.RecordApproval(head, login, person, shared, via, owners, logins, note, review_id,
                                            at=utc_iso(self.clock.now()))
        return self.decide(bug_id, command, idempotency_key=key)

    def merge_check(self, bug: Bug, head: str, merged_by: str, merged_by_type: str) -> str | None:
        """Why this merge may not count (None: it may)."""
        paths = self.changed_paths(bug) if bug.change is not None else []
        return decisions.merge_check(bug, head, merged_by, merged_by_type, paths, self.config)

    def merge(self, actor: DeskCaller, bug_id: str, head: str | None = None) -> str:
        """Merge in the local forge, as the owner. The desk checks first, and records the merge only
        from the forge's signed webhook. `head` is the head the person reviewed (every face sends
        the one it showed): a change request whose head moved since is not merged."""
        require(actor, "owner", what="merge a change")
        if not actor.human or actor.shared:
            raise RefusedError(f"{actor.name} cannot merge: a named human user must",
                               "merge with your own owner credential")
        bug = self.bug(bug_id)
        if bug.change is None:
            raise ConflictError(f"{bug_id} has no change request", "nothing to merge")
        if head is not None and head != bug.change["head"]:
            raise ConflictError(f"the head of {bug_id}'s change is now {bug.change['head'][:12]}, not the "
                                f"{head[:12] or 'nothing'} you reviewed; nothing was merged",
                                "reload the bug and review the new head")
        # The person merges the review they were shown: the same content-bound check as an approval
        # (the forge's signed webhook records the merge itself).
        review_approval(bug, bug.change["head"] if head is None else head, actor.name,
                                  utc_iso(self.clock.now()), "desk", SHIP.id)
        why = self.merge_check(bug, bug.change["head"], actor.name, "User")
        if why:
            raise RefusedError(f"merge refused: {why}", "get the approvals the change needs first")
        return self.forge.merge(bug.change["repo"], bug.change["number"], actor.name, "User", sha=bug.change["head"])

    def record_merge(self, bug_id: str, head: str, login: str, kind: str, merge_commit: str,
                     key: str) -> dict[str, Any]:
        """The merge the forge reported: recorded if it keeps the rules (and released at once if a
        recorded deployment already contains it), otherwise refused and handed to a person."""
        made: list[tuple[Bug, decisions.RecordMerge]] = []
        if re.fullmatch(r"[0-9a-f]{40}", merge_commit):
            # Keep the merge commit here too: if the forge's history is rewritten later, its tree is
            # what tells a rewrite from a new change (see ReleaseSteps.observe_rewrite).
            self.forge.fetch(self.config.repo, merge_commit)

        def command(b: Bug) -> decisions.RecordMerge:
            paths = tuple(self.changed_paths(b)) if b.change is not None else ()
            made.append((b, decisions.RecordMerge(head, login, kind, merge_commit, paths,
                                                  self.deployment_containing(merge_commit))))
            return made[-1][1]
        self.decide(bug_id, command, idempotency_key=key)
        # The outcome of the last decision made (a conflict, or a redelivery, decides again).
        decided_on, cmd = made[-1]
        why = decisions.merge_check(decided_on, head, login, kind, cmd.paths, self.config)
        if why:
            return {"outcome": "merge_refused", "bug_id": bug_id, "why": why}
        out: dict[str, Any] = {"outcome": "merged", "bug_id": bug_id, "merge_commit": merge_commit}
        if cmd.deployed is not None:
            out["released"] = cmd.deployed["commit"]
        return out

    def human_resume(self, actor: DeskCaller, bug_id: str, state: str) -> Bug:
        """A person takes a bug out of needs_human (back to reproduction, fixing or review)."""
        require(actor, "owner", what="resume a bug")
        if not actor.human:
            raise RefusedError("only a person may resume a bug", "use a human owner credential")
        if state not in decisions.RESUMABLE:
            raise UsageError(f"cannot resume into {state!r}", "use reproducing, fixing or in_review")
        cmd = decisions.HumanResume(state, actor.name)
        return self.decide(bug_id, cmd)
