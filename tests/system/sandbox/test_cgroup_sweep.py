"""Groups a killed sandbox creator left behind are removed by the next sandbox; nothing in use is."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

from signoff.sandbox import Limits
from signoff.sandbox.cgroups import CgroupSet


def _group(parent: Path, name: str, age_s: float) -> Path:
    d = parent / name
    d.mkdir()
    os.utime(d, (time.time() - age_s, time.time() - age_s))
    return d


def test_groups_of_gone_creators_are_swept_and_groups_in_use_are_kept(sandbox: None) -> None:
    probe = CgroupSet.create(f"signoff-{os.getpid()}-probe", Limits())
    assert probe is not None
    parent = (probe.dirs.get("pids") or probe.dirs["unified"]).parent
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid whose process has ended: the creator SIGKILLed before it removed its group
    sleeper = subprocess.Popen(["sleep", "60"])
    made: list[Path] = []
    try:
        left = _group(parent, f"signoff-{gone.pid}-left", 300)
        doctor = _group(parent, f"signoff-doctor-{gone.pid}", 300)
        young = _group(parent, f"signoff-{gone.pid}-young", 0)  # its creator may be filling it yet
        mine = _group(parent, f"signoff-{os.getpid()}-mine", 300)  # the creator is alive
        busy = _group(parent, f"signoff-{gone.pid}-busy", 300)
        (busy / "cgroup.procs").write_text(str(sleeper.pid))  # a process still in it
        os.utime(busy, (time.time() - 300, time.time() - 300))
        other = _group(parent, "someone-elses-12345", 300)
        made += [left, doctor, young, mine, busy, other]

        assert CgroupSet.sweep(parent) == 2
        assert not left.exists() and not doctor.exists()
        assert young.exists() and mine.exists() and busy.exists() and other.exists()
        assert (busy / "cgroup.procs").read_text().split() == [str(sleeper.pid)]
    finally:
        sleeper.kill()
        sleeper.wait()
        for d in made:  # the sleeper, reaped, is out of its group
            with contextlib.suppress(FileNotFoundError):
                d.rmdir()
        probe.remove()
