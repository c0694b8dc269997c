"""The calls signoff makes on one repository, in GitHub's documented request and response shapes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from signoff.github.client import GitHubClient
from signoff.kernel.errors import NotFoundError, UsageError

_FULL_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
_SHA = re.compile(r"[0-9a-f]{40}")
CONCLUSIONS = ("success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required")


def parse_pull(ref: str) -> tuple[str, int]:
    """`owner/repo#12` -> ("owner/repo", 12)."""
    m = re.fullmatch(r"(.+)#(\d+)", ref.strip())
    if not m or not _FULL_NAME.fullmatch(m.group(1)):
        raise UsageError(f"{ref!r} does not name a pull request", "write it as owner/repo#NUMBER")
    return m.group(1), int(m.group(2))


@dataclass(frozen=True)
class Repo:
    client: GitHubClient
    full_name: str

    def __post_init__(self) -> None:
        if not _FULL_NAME.fullmatch(self.full_name):
            raise UsageError(f"{self.full_name!r} is not a repository's full name", "write it as owner/repo")

    @property
    def _base(self) -> str:
        return f"/repos/{self.full_name}"

    def info(self) -> dict[str, Any]:
        body: dict[str, Any] = self.client.request("GET", self._base)
        return body

    def commit(self, ref: str) -> dict[str, Any] | None:
        """The commit, or None when GitHub does not have it (404, or its 422 "No commit found": the
        client's UnknownCommit, a NotFoundError)."""
        try:
            body: dict[str, Any] = self.client.request("GET", f"{self._base}/commits/{ref}")
        except NotFoundError:
            return None
        return body

    def compare(self, base: str, head: str) -> str:
        """`ahead`, `behind`, `identical` or `diverged`; NotFoundError when either commit is unknown."""
        body = self.client.request("GET", f"{self._base}/compare/{base}...{head}")
        status = body.get("status") if isinstance(body, dict) else None
        if status not in ("ahead", "behind", "identical", "diverged"):
            raise NotFoundError(f"GitHub's comparison of {base[:12]}...{head[:12]} has no status",
                                "the commits may be unknown to GitHub")
        return str(status)

    def pull(self, number: int) -> dict[str, Any]:
        body: dict[str, Any] = self.client.request("GET", f"{self._base}/pulls/{number}")
        return body

    def pulls(self, state: str = "open") -> list[dict[str, Any]]:
        return list(self.client.paginate(f"{self._base}/pulls", {"state": state}))

    def create_pull(self, title: str, head: str, base: str, body: str, draft: bool = True) -> dict[str, Any]:
        pr: dict[str, Any] = self.client.request("POST", f"{self._base}/pulls", json_body={
            "title": title, "head": head, "base": base, "body": body, "draft": draft})
        return pr

    def assign(self, number: int, logins: list[str]) -> dict[str, Any]:
        issue: dict[str, Any] = self.client.request("POST", f"{self._base}/issues/{number}/assignees",
                                                    json_body={"assignees": logins})
        return issue

    def reviews(self, number: int) -> list[dict[str, Any]]:
        return list(self.client.paginate(f"{self._base}/pulls/{number}/reviews"))

    def check_runs(self, sha: str) -> list[dict[str, Any]]:
        return list(self.client.paginate(f"{self._base}/commits/{sha}/check-runs", key="check_runs"))

    def workflow_runs(self, sha: str) -> list[dict[str, Any]]:
        return list(self.client.paginate(f"{self._base}/actions/runs", {"head_sha": sha}, key="workflow_runs"))

    def required_checks(self, branch: str) -> list[str]:
        """Names of the status checks branch protection requires ([] when the branch is unprotected)."""
        try:
            body = self.client.request("GET", f"{self._base}/branches/{branch}/protection/required_status_checks")
        except NotFoundError:
            return []
        names = {str(c["context"]) for c in body.get("checks", []) if isinstance(c, dict) and "context" in c}
        names |= {str(c) for c in body.get("contexts", [])}
        return sorted(names)

    def create_check_run(self, name: str, head_sha: str, conclusion: str, title: str, summary: str,
                         text: str = "", details_url: str | None = None,
                         external_id: str | None = None) -> dict[str, Any]:
        if not _SHA.fullmatch(head_sha):
            raise UsageError(f"{head_sha!r} is not a full commit SHA", "pass the 40-character SHA")
        if conclusion not in CONCLUSIONS:
            raise UsageError(f"check conclusion {conclusion!r} is not one GitHub accepts", ", ".join(CONCLUSIONS))
        payload: dict[str, Any] = {"name": name, "head_sha": head_sha, "status": "completed",
                                   "conclusion": conclusion,
                                   "output": {"title": title[:255], "summary": summary[:65535], "text": text[:65535]}}
        if details_url:
            payload["details_url"] = details_url
        if external_id:
            payload["external_id"] = external_id
        run: dict[str, Any] = self.client.request("POST", f"{self._base}/check-runs", json_body=payload)
        return run
