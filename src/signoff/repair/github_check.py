"""Repair as a required GitHub check: verify a pull request's head against its base with a frozen
harness, and post the verdict as a check run on the head commit.

Only VERIFIED concludes `success`. REJECTED and INCONCLUSIVE both conclude `failure`, because
GitHub counts `neutral` and `skipped` as passing for a required check, and an inconclusive run must
never let a merge through (DESIGN rule 7). The title says which verdict it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff.github import GitHubClient, Repo, fetch_commits
from signoff.kernel.digests import sha256_file

CHECK_NAME = "signoff/repair"
_CONCLUSION = {"VERIFIED": "success", "REJECTED": "failure", "INCONCLUSIVE": "failure"}


def pull_revisions(client: GitHubClient, checkout: Path, full_name: str, number: int,
                   git_url: str) -> tuple[str, str]:
    """(base SHA, head SHA) of the pull request, fetched into `checkout` when it lacks them."""
    pr = Repo(client, full_name).pull(number)
    base, head = str(pr["base"]["sha"]), str(pr["head"]["sha"])
    fetch_commits(client, checkout, full_name, [f"refs/heads/{pr['base']['ref']}", f"refs/pull/{number}/head"],
                  git_url)
    return base, head


def check_run(result: Any, evidence_url: str | None = None) -> dict[str, Any]:
    """The check run's fields for a VerifyResult: conclusion, title, summary and text."""
    reasons = "\n".join(f"- `{r['code']}`: {r['text']}" for r in result.reasons) or "- none"
    digest = sha256_file(result.evidence) if result.evidence else None
    evidence = (f"[{Path(result.evidence).name}]({evidence_url})" if evidence_url and result.evidence
                else (Path(result.evidence).name if result.evidence else "none written"))
    summary = (f"**{result.verdict}**: candidate `{result.candidate[:12]}` against base `{result.base[:12]}` "
               f"with the frozen harness `{result.harness_digest[:16]}`.\n\n"
               f"Reasons:\n{reasons}\n\n"
               f"Evidence: {evidence}" + (f" (sha256 `{digest}`)" if digest else "") + "\n\n"
               "Check it offline with `signoff evidence verify FILE`.")
    stages = "\n".join(f"- {name}: {s.summary.outcome}" + (f" ({', '.join(s.tests)})" if s.tests else "")
                       for name, s in result.stages.items())
    tamper = (f"\n\nTamper signal (shown to a person; the verdict uses the frozen harness): "
              f"{', '.join(result.tamper)}") if result.tamper else ""
    return {"conclusion": _CONCLUSION[result.verdict], "title": f"signoff repair: {result.verdict}",
            "summary": summary, "text": f"Stages:\n{stages}{tamper}\n\nFingerprint `{result.fingerprint}`",
            "evidence_sha256": digest}


def post_verdict(client: GitHubClient, full_name: str, result: Any, name: str = CHECK_NAME,
                 evidence_url: str | None = None) -> dict[str, Any]:
    fields = check_run(result, evidence_url)
    return Repo(client, full_name).create_check_run(
        name, result.candidate, fields["conclusion"], fields["title"], fields["summary"], fields["text"],
        details_url=evidence_url, external_id=result.fingerprint)
