"""`signoff doctor` checks for the desk: git for the local forge, and the webhook secret's mode."""

from __future__ import annotations

import shutil
import stat

from signoff.desk.webhooks import secret_path
from signoff.kernel.checks import Check
from signoff.kernel.settings import Settings


def doctor_checks(settings: Settings) -> list[Check]:
    checks = [Check("desk: git", shutil.which("git") is not None,
                    "git runs the local forge and the ancestry checks", "apt-get install -y git")]
    secret = secret_path(settings)
    if secret.exists():
        mode = stat.S_IMODE(secret.stat().st_mode)
        checks.append(Check("desk: webhook secret", mode & 0o077 == 0, f"{secret} has mode {mode:o}",
                            f"chmod 600 {secret}"))
    else:
        checks.append(Check("desk: webhook secret", True, "not created yet (`signoff desk init` creates it)",
                            required=False))
    return checks
