"""Why bubblewrap could not create its namespaces here, and what to change."""

from __future__ import annotations

from pathlib import Path

from signoff.sandbox.model import SandboxUnavailable


def _sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def userns_blockers() -> list[tuple[str, str]]:
    """Known kernel settings that stop unprivileged user namespaces: (cause, fix)."""
    found: list[tuple[str, str]] = []
    if _sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        found.append((
            "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, "
            "Ubuntu 23.10 and later)",
            "apt-get install -y bubblewrap (Ubuntu's /usr/bin/bwrap has an AppArmor profile that allows it), "
            "or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
        ))
    if _sysctl("kernel.unprivileged_userns_clone") == "0":
        found.append(("unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)",
                      "sysctl -w kernel.unprivileged_userns_clone=1"))
    if _sysctl("user.max_user_namespaces") == "0":
        found.append(("user namespaces are disabled (user.max_user_namespaces=0)",
                      "sysctl -w user.max_user_namespaces=15000"))
    return found


def namespace_failure(stderr: str, binary: object) -> SandboxUnavailable:
    said = next((line for line in stderr.splitlines() if line.startswith("bwrap:")), stderr.strip()[:300])
    blockers = userns_blockers()
    if blockers:
        cause, fix = blockers[0]
        return SandboxUnavailable(f"bubblewrap cannot create a sandbox here: {cause} ({said})", fix)
    return SandboxUnavailable(
        f"bubblewrap cannot create a sandbox here: {said or 'it exited before starting the command'}",
        "run `signoff sandbox check` for details; inside a container, allow user namespaces "
        "(e.g. docker run --security-opt seccomp=unconfined) or use a Docker/Podman backend",
    )
