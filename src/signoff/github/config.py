"""`[github]` settings: which API, and how signoff authenticates to it.

```toml
[github]
api_url = "https://api.github.com"        # GitHub Enterprise: https://HOST/api/v3
git_url = "https://github.com"            # where `git push` goes
# a GitHub App (recommended): permissions contents, pull requests, checks, deployments (read)
app_id = "123456"
installation_id = 7890
private_key_file = "/etc/signoff/github-app.pem"
# or a fine-grained token instead (SIGNOFF_GITHUB_TOKEN also works)
# token = "github_pat_..."
max_wait = 60                             # the longest rate-limit wait before giving up, seconds
```
"""

from __future__ import annotations

import os
from pathlib import Path

from signoff.github.auth import AppAuth, Auth, TokenAuth
from signoff.github.client import API_URL, GitHubClient
from signoff.kernel.errors import UsageError
from signoff.kernel.settings import Settings


def github_auth(settings: Settings, env: dict[str, str] | None = None) -> Auth:
    env = dict(os.environ) if env is None else env
    cfg = settings.section("github")
    token = env.get("SIGNOFF_GITHUB_TOKEN") or cfg.get("token")
    if cfg.get("app_id"):
        key_file = cfg.get("private_key_file")
        if not key_file or not cfg.get("installation_id"):
            raise UsageError("[github] app_id needs private_key_file and installation_id",
                             "set all three, or use token instead")
        try:
            pem = Path(str(key_file)).read_text()
        except OSError as exc:
            raise UsageError(f"cannot read [github] private_key_file {key_file}: {exc.strerror}",
                             "point it at the .pem file GitHub generated for the App") from exc
        try:
            installation = int(cfg["installation_id"])
        except (TypeError, ValueError) as exc:
            raise UsageError("[github] installation_id must be a number",
                             "copy it from the installation's URL") from exc
        return AppAuth(str(cfg["app_id"]), pem, installation)
    if token:
        return TokenAuth(str(token))
    raise UsageError("GitHub is not configured", "set [github] app_id, installation_id and private_key_file, "
                     "or a token in [github] token or SIGNOFF_GITHUB_TOKEN (see docs/github.md)")


def github_client(settings: Settings, env: dict[str, str] | None = None) -> GitHubClient:
    cfg = settings.section("github")
    try:
        max_wait = float(cfg.get("max_wait", 60))
    except (TypeError, ValueError) as exc:
        raise UsageError("[github] max_wait must be a number of seconds", "e.g. max_wait = 60") from exc
    return GitHubClient(github_auth(settings, env), str(cfg.get("api_url", API_URL)), max_wait=max_wait)


def git_url(settings: Settings) -> str:
    return str(settings.section("github").get("git_url", "https://github.com"))
