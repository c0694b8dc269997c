"""`git.popen`: a streamed git keeps printing while its reader works on what it already read."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

import pytest

from signoff import git


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="pipe sizes are a Linux feature")
def test_a_streamed_git_writes_into_a_pipe_wide_enough_to_run_ahead_of_its_reader(tmp_path: Path) -> None:
    git.run(tmp_path, "init", "-q")
    proc = git.popen(tmp_path, "rev-parse", "--git-dir", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    try:
        # The default is 64 KB: git would stop at every chunk the parser is busy with.
        assert fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ) == git.command.PIPE_BYTES
        assert proc.stdout.read().strip() == b".git"
    finally:
        proc.stdout.close()
        assert proc.wait() == 0


def test_a_descriptor_the_kernel_will_not_widen_is_used_as_it_is(tmp_path: Path) -> None:
    read, write = os.pipe()
    try:
        with (tmp_path / "plain").open("wb") as plain:
            git.command.widen_pipe(plain.fileno())  # not a pipe: the kernel says no, nothing is raised
        os.write(write, b"still a pipe")
        assert os.read(read, 100) == b"still a pipe"
    finally:
        os.close(read)
        os.close(write)
