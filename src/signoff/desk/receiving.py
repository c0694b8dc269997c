"""Receiving the forge's webhooks: a signed delivery (signoff.desk.webhooks checks the signature over
the raw bytes) is refused when replayed or from a repository not on the allowlist, then applied: a
push clears approvals, a member's review approves the exact head, a merge is checked and recorded,
a successful production deployment is recorded."""

from __future__ import annotations

from typing import Any

from signoff.desk import decisions, webhooks
from signoff.desk.credentials import DeskCaller, require
from signoff.desk.model import Bug
from signoff.desk.records import WebhookProcessed
from signoff.desk.review import ReviewSteps
from signoff.kernel.digests import sha256_bytes
from signoff.kernel.errors import ConflictError, RefusedError

MEMBERS = ("OWNER", "MEMBER", "COLLABORATOR")  # the associations whose reviews count


class AlreadyProcessed(ConflictError):
    """A webhook delivery the desk applied before (the same id, or the same signed content): refused,
    and for a forge redelivering at least once, nothing left to do."""


class ReceivingSteps(ReviewSteps):
    def webhook_secret(self) -> bytes:
        return webhooks.signing_secret(self.settings)

    def receive_webhook(self, headers: dict[str, str], body: bytes) -> dict[str, Any]:
        """A signed GitHub-format delivery: verified over the raw bytes, refused when replayed or
        from a repository not on the allowlist, then applied."""
        event, delivery, payload = webhooks.verify(self.webhook_secret(), headers, body)
        # The signature covers the body only, so the delivery id is the sender's word: the same signed
        # body under a new id (or the same id in another case) is the same delivery. De-duplicate on
        # both the id and the signed content.
        case = f"desk/webhook/{delivery.lower()}"
        content = f"desk/webhook-content/{event}/{sha256_bytes(body)}"
        if self.ledger.version(case) or self.ledger.version(content):
            raise AlreadyProcessed(f"delivery {delivery} was already processed", "a replay is refused")
        if event == "ping":
            result: dict[str, Any] = {"outcome": "pong"}
        else:
            repo, full_name = webhooks.repo_of(payload)
            # An entry with an owner ("octo-org/shoplite") matches GitHub's full name exactly; a bare
            # name ("shoplite") matches only the local forge's repository of that name.
            allowed = self.config.repos_allowed
            if full_name not in allowed and not (full_name == f"{webhooks.LOCAL_OWNER}/{repo}" and repo in allowed):
                raise RefusedError(f"repository {full_name!r} is not on the allowlist",
                                   "add its full name to [desk] repos_allowed")
            # The desk names a GitHub repository by its full name, a local one by its bare name.
            name = full_name if full_name == self.config.repo else repo
            # keyed on the content: two copies racing past the check above apply one effect
            result = self.apply_hook(event, content, name, payload)
        try:
            self.ledger.append(content, 0, [WebhookProcessed(event=event, delivery=delivery).new_event()])
            self.ledger.append(case, 0, [WebhookProcessed(event=event, result=result).new_event()])
        except ConflictError as exc:
            raise AlreadyProcessed(f"delivery {delivery} was already processed", "a replay is refused") from exc
        return result

    def deliver_forge_webhooks(self) -> int:
        """Apply the webhooks the local forge queued in this ledger (a merge, a review), signed as the
        forge signs them, as GitHub would send its own; the number sent. At least once: a delivery
        applied before is a duplicate, not a failure. GitHub's forge queues none here."""
        def target(headers: dict[str, str], body: bytes) -> Any:
            try:
                return self.receive_webhook(headers, body)
            except AlreadyProcessed:
                return {"outcome": "duplicate"}
        return self.forge.deliver(target)

    def bug_for_change(self, repo: str, number: int) -> Bug | None:
        for bug in self.bugs():
            if bug.change and bug.change["repo"] == repo and bug.change["number"] == number:
                return bug
        return None

    def apply_hook(self, event: str, dedupe: str, repo: str, p: dict[str, Any]) -> dict[str, Any]:
        """Apply a verified delivery's payload; every effect is keyed on `dedupe`, so applying the same
        delivery twice (a crash before it was marked processed) has one effect."""
        key = f"desk:hook:{dedupe}"
        if event == "deployment_status":
            st, dep = p.get("deployment_status") or {}, p.get("deployment") or {}
            if st.get("state") != "success":
                return {"outcome": "ignored", "why": f"deployment state {st.get('state')}"}
            return self.record_deployment(DeskCaller("recorder", "github"), repo, str(dep.get("sha", "")),
                                          str(st.get("environment") or dep.get("environment") or ""),
                                          str(st.get("environment_url") or ""), key=key)
        pr = p.get("pull_request") or {}
        number = int(p.get("number") or pr.get("number") or 0)
        bug = self.bug_for_change(repo, number)
        if bug is None:
            return {"outcome": "ignored", "why": f"{repo}#{number} is not a desk change"}
        if pr and pr.get("number") is not None and int(pr["number"]) != number:
            return {"outcome": "ignored", "why": f"the delivery names #{number} and pull request #{pr['number']}"}
        head = str((pr.get("head") or {}).get("sha", ""))
        if event == "pull_request" and p.get("action") == "synchronize":
            cmd = decisions.PushChange(head, (p.get("sender") or {}).get("login"))
            self.decide(bug.bug_id, cmd, idempotency_key=key)
            return {"outcome": "approvals_cleared", "bug_id": bug.bug_id, "head": head}
        if event == "pull_request_review":
            return self._review(bug, p.get("review") or {}, key, (p.get("sender") or {}).get("login"))
        if event == "pull_request" and p.get("action") == "closed":
            if not pr.get("merged"):
                return {"outcome": "ignored", "why": "closed without merging"}
            why = self._merge_target_problem(repo, p, pr)
            if why:
                # A pull request can be retargeted at any branch and merged there: that is not the
                # bug's merge (nothing of it reaches the default branch), so it is recorded, ignored.
                return {"outcome": "ignored", "why": why}
            merged_by = pr.get("merged_by") or {}
            login, kind = str(merged_by.get("login", "")), str(merged_by.get("type", ""))
            merge_commit = str(pr.get("merge_commit_sha") or "")
            return self.record_merge(bug.bug_id, head, login, kind, merge_commit, key)
        return {"outcome": "ignored", "why": f"{event}/{p.get('action')} is not used"}

    def _merge_target_problem(self, repo: str, p: dict[str, Any], pr: dict[str, Any]) -> str | None:
        """Why a merged pull request's target is not the bug's repository's default branch (None: it is)."""
        base = pr.get("base") or {}
        target, default = str(base.get("ref", "")), self.forge.default_branch(repo)
        if target != default:
            return f"merged into {target!r}, not the default branch {default!r} of {repo}"
        delivered_in = str((p.get("repository") or {}).get("full_name", ""))
        base_repo = str((base.get("repo") or {}).get("full_name", ""))
        if base_repo != delivered_in:
            return f"merged into {base_repo!r}, not {delivered_in!r}"
        return None

    def sync_change(self, actor: DeskCaller, bug_id: str) -> dict[str, Any]:
        """Read the change's head and reviews from the forge's API (GitHub's, in GitHub mode), for
        when a webhook was lost or arrived late. The same rules apply as to webhooks, and a review
        counts once whichever way it arrives (it is keyed on the forge's review id)."""
        require(actor, "owner", what="read the change from the forge")
        bug = self.bug(bug_id)
        if bug.change is None or bug.state != "in_review":
            raise ConflictError(f"{bug_id} has no change under review (state {bug.state})", "nothing to read")
        repo, number = bug.change["repo"], int(bug.change["number"])
        head = str(self.forge.change(repo, number)["head"])
        reviews = self.forge.reviews(repo, number)  # read everything before writing anything
        if head != bug.change["head"]:
            bug = self.decide(bug_id, decisions.PushChange(head, None), idempotency_key=f"desk:sync:{bug_id}:{head}")
        outcomes = [self._review(bug, r, f"desk:sync:{bug_id}:{head}:{r.get('id')}") for r in reviews]
        return {"bug_id": bug_id, "head": head,
                "approvals": sorted({o["login"] for o in outcomes if o["outcome"] == "approval_recorded"}),
                "ignored": [o["why"] for o in outcomes if o["outcome"] == "ignored"]}

    def _review(self, bug: Bug, review: dict[str, Any], key: str, by: str | None = None) -> dict[str, Any]:
        reviewer = review.get("user") or {}
        if str(review.get("state", "")).lower() == "dismissed" and review.get("id") is not None:
            # A dismissed review no longer approves anything on the forge, so not here either.
            self.decide(bug.bug_id, decisions.WithdrawApproval(str(review["id"]), by),
                        idempotency_key=f"{key}:dismissed")
            return {"outcome": "approval_withdrawn", "bug_id": bug.bug_id, "review_id": str(review["id"])}
        if str(review.get("state", "")).lower() != "approved":
            return {"outcome": "ignored", "why": f"review state {review.get('state')}"}
        if reviewer.get("type") != "User":
            return {"outcome": "ignored", "why": f"{reviewer.get('login')} is a {reviewer.get('type')}, "
                                                 "not a human user"}
        association = str(review.get("author_association") or "").upper()
        if association and association not in MEMBERS:
            # Anyone can review a public pull request; only the repository's people count.
            return {"outcome": "ignored", "why": f"{reviewer.get('login')} is not a member ({association})"}
        commit = str(review.get("commit_id", ""))
        if bug.change is None or commit != bug.change["head"]:
            return {"outcome": "ignored", "why": "the review is of an older head"}
        login = str(reviewer.get("login", "")).lower()
        review_id = str(review["id"]) if review.get("id") is not None else None
        if review_id is not None:
            # The same review by webhook and by the API is one approval.
            key = f"desk:review:{bug.change['repo']}:{bug.change['number']}:{review_id}"
        self.record_approval(bug.bug_id, commit, login, "forge", key=key, review_id=review_id)
        return {"outcome": "approval_recorded", "bug_id": bug.bug_id, "login": login}
