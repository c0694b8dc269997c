"""A seccomp filter, assembled here as classic BPF, that bubblewrap loads just before the command runs.

It allows by default and answers host-level calls with an error (EPERM), the way Docker's default
profile does, so ordinary programs (fork, threads, subprocess, multiprocessing, AF_UNIX) keep working
while mount, ptrace, namespace changes, bpf, keyrings, kernel modules and clock setting do not.
Building it is pure and cheap; it is still built once per process and cached.

No library is needed: the program is a list of 8-byte `struct sock_filter` instructions.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0_LO = 16  # little-endian: the low 32 bits of args[0]

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

RET_KILL_PROCESS = 0x80000000
RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

_X32_SYSCALL_BIT = 0x40000000
_CLONE_NAMESPACES = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000
                     | 0x40000000 | 0x00000080)  # NEWNS CGROUP UTS IPC USER PID NET TIME
_INET_FAMILIES = (2, 10, 16, 17)  # AF_INET, AF_INET6, AF_NETLINK, AF_PACKET

# Calls that only make sense for the host's administrator or that widen what a process can reach.
DENIED = (
    "mount", "umount2", "pivot_root", "chroot", "swapon", "swapoff", "reboot", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "ptrace", "process_vm_readv",
    "process_vm_writev", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "unshare", "setns", "open_by_handle_at", "name_to_handle_at", "acct", "quotactl", "quotactl_fd",
    "syslog", "iopl", "ioperm", "kcmp", "fanotify_init", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "lookup_dcookie", "vhangup", "uselib", "nfsservctl", "_sysctl", "pidfd_getfd",
    "mbind", "migrate_pages", "move_pages",
)

_X86_64 = {
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "swapon": 167, "swapoff": 168,
    "reboot": 169, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "unshare": 272, "setns": 308, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "acct": 163, "quotactl": 179, "quotactl_fd": 443, "syslog": 103, "iopl": 172, "ioperm": 173,
    "kcmp": 312, "fanotify_init": 300, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305,
    "adjtimex": 159, "sethostname": 170, "setdomainname": 171, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "lookup_dcookie": 212, "vhangup": 153, "uselib": 134, "nfsservctl": 180, "_sysctl": 156,
    "pidfd_getfd": 438, "mbind": 237, "migrate_pages": 256, "move_pages": 279,
    "clone": 56, "clone3": 435, "socket": 41,
}

_AARCH64 = {
    "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "swapon": 224, "swapoff": 225,
    "reboot": 142, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
    "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241,
    "userfaultfd": 282, "unshare": 97, "setns": 268, "open_by_handle_at": 265, "name_to_handle_at": 264,
    "acct": 89, "quotactl": 60, "quotactl_fd": 443, "syslog": 116, "kcmp": 272, "fanotify_init": 262,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "settimeofday": 170,
    "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171, "sethostname": 161,
    "setdomainname": 162, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "mount_setattr": 442, "lookup_dcookie": 18, "vhangup": 58,
    "pidfd_getfd": 438, "mbind": 235, "migrate_pages": 238, "move_pages": 239,
    "clone": 220, "clone3": 435, "socket": 198,
}

# machine name -> (AUDIT_ARCH_*, syscall table, whether the x32 ABI must be refused)
ARCHES: dict[str, tuple[int, dict[str, int], bool]] = {
    "x86_64": (0xC000003E, _X86_64, True),
    "aarch64": (0xC00000B7, _AARCH64, False),
}


def supported(machine: str | None = None) -> bool:
    return (machine or platform.machine()) in ARCHES


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k & 0xFFFFFFFF)


def _errno(number: int) -> int:
    return _RET_ERRNO | number


def assemble(machine: str, deny_inet: bool) -> bytes:
    """The filter program for `machine`. With `deny_inet`, creating IP, netlink and packet sockets
    fails with EACCES: a second layer under the empty network namespace, which also forbids
    loopback servers inside the sandbox."""
    audit_arch, table, refuse_x32 = ARCHES[machine]
    prog = [
        _ins(_LD_W_ABS, 0, 0, _OFF_ARCH),
        _ins(_JEQ_K, 1, 0, audit_arch),
        _ins(_RET_K, 0, 0, RET_KILL_PROCESS),  # another ABI (e.g. int 0x80 on x86_64): numbers differ
        _ins(_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    if refuse_x32:
        prog += [_ins(_JGE_K, 0, 1, _X32_SYSCALL_BIT), _ins(_RET_K, 0, 0, _errno(errno.EPERM))]
    for name in DENIED:
        if name in table:
            prog += [_ins(_JEQ_K, 0, 1, table[name]), _ins(_RET_K, 0, 0, _errno(errno.EPERM))]
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc fall back to clone.
    prog += [_ins(_JEQ_K, 0, 1, table["clone3"]), _ins(_RET_K, 0, 0, _errno(errno.ENOSYS))]
    prog += [
        _ins(_JEQ_K, 0, 4, table["clone"]),
        _ins(_LD_W_ABS, 0, 0, _OFF_ARG0_LO),
        _ins(_JSET_K, 0, 1, _CLONE_NAMESPACES),
        _ins(_RET_K, 0, 0, _errno(errno.EPERM)),
        _ins(_RET_K, 0, 0, RET_ALLOW),
    ]
    if deny_inet:
        prog += [_ins(_JEQ_K, 0, 2 * len(_INET_FAMILIES) + 2, table["socket"]),
                 _ins(_LD_W_ABS, 0, 0, _OFF_ARG0_LO)]
        for family in _INET_FAMILIES:
            prog += [_ins(_JEQ_K, 0, 1, family), _ins(_RET_K, 0, 0, _errno(errno.EACCES))]
        prog += [_ins(_RET_K, 0, 0, RET_ALLOW)]
    prog.append(_ins(_RET_K, 0, 0, RET_ALLOW))
    return b"".join(prog)


@functools.lru_cache(maxsize=4)
def filter_bytes(deny_inet: bool = False) -> bytes:
    """The filter for this machine, built once per process."""
    return assemble(platform.machine(), deny_inet)


def filter_digest(deny_inet: bool = False) -> str:
    return hashlib.sha256(filter_bytes(deny_inet)).hexdigest()
