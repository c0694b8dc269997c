"""The hand-assembled seccomp filter: syscall numbers match the kernel headers, and the program is sane."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from signoff.sandbox import seccomp
from tests.support.requires import require

HEADERS = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
           "aarch64": Path("/usr/include/asm-generic/unistd.h")}


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_syscall_numbers_match_the_headers(machine: str) -> None:
    header = HEADERS[machine]
    require("linux-libc-dev", header.exists(), f"{header} is missing: apt-get install -y linux-libc-dev")
    text = header.read_text()
    table = seccomp.ARCHES[machine][1]
    checked = 0
    for name, number in table.items():
        m = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)\b", text)
        if m:
            assert int(m.group(1)) == number, name
            checked += 1
    assert checked >= len(table) - 6  # a few legacy calls exist only on x86_64


def test_program_shape() -> None:
    prog = seccomp.assemble("x86_64", deny_inet=True)
    assert len(prog) % 8 == 0 and len(prog) // 8 < 4096
    code, _jt, _jf, k = struct.unpack("<HBBI", prog[-8:])
    assert (code, k) == (0x06, seccomp.RET_ALLOW)
    assert seccomp.assemble("x86_64", deny_inet=False) != prog
    assert seccomp.filter_bytes() is seccomp.filter_bytes()  # built once per process
