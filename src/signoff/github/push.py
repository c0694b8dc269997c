"""Push a branch to GitHub over HTTPS with the App's installation token (or the configured token).

Git runs through the one git adapter (clean environment, no user or system config). The token
travels in an `http.extraHeader` given through git's environment (`GIT_CONFIG_COUNT`),
never in the URL or on the command line, so it shows up neither in `ps`, nor in the remote's
configuration, nor in git's error messages.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from signoff import git
from signoff.github.client import GitHubClient
from signoff.kernel.errors import UnavailableError, UsageError

_BRANCH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,200}")


def _run(client: GitHubClient, checkout: Path, url: str, args: list[str], what: str, fix: str) -> None:
    token = client.auth.git_token(client.http, client.api_url)
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    # The header is bound to the URL itself: a checkout's `url.<base>.insteadOf` may rewrite where git
    # connects, and the token must not follow it there.
    proc = git.run(checkout, *args, check=False, timeout=300,
                   config=((f"http.{url}.extraHeader", f"Authorization: Basic {basic}"),))
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).decode(errors="replace").strip().replace(token, "***")[-300:]
        raise UnavailableError(f"{what} failed: {detail}", fix)


def fetch_commits(client: GitHubClient, checkout: Path, full_name: str, refs: list[str],
                  git_url: str = "https://github.com") -> None:
    """Fetch refs (e.g. `refs/pull/12/head`, a branch or a SHA) from GitHub into `checkout`."""
    url = f"{git_url.rstrip('/')}/{full_name}.git"
    _run(client, checkout, url, ["fetch", "--quiet", "--no-tags", url, *refs], f"git fetch from {full_name}",
         "check that the token or App can read the repository")


def push_branch(client: GitHubClient, checkout: Path, full_name: str, branch: str, commit: str,
                git_url: str = "https://github.com") -> None:
    """Make `branch` on GitHub point at `commit` of the local repository `checkout`."""
    if not _BRANCH.fullmatch(branch) or ".." in branch or branch.endswith((".lock", "/")):
        raise UsageError(f"{branch!r} is not a branch name signoff pushes", "use letters, digits, '-', '_', '/'")
    url = f"{git_url.rstrip('/')}/{full_name}.git"
    _run(client, checkout, url, ["push", "--quiet", "--force", url, f"{commit}:refs/heads/{branch}"],
         f"git push of {branch} to {full_name}", "check that the App has contents: write on the repository")
