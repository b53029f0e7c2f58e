"""The seccomp filter every sandboxed agent runs under.

bubblewrap's own namespaces and dropped privileges keep the agent in, but
the kernel is still a large surface: an unprivileged user namespace gives
uid 0 with full capabilities inside it (enough to mount, and to reach
netfilter and raw sockets), and keyrings, bpf, perf, userfaultfd and
io_uring have each carried privilege escalations. The agent needs none of
them: a shopping agent is Python, a Unix socket and a private /tmp.

The filter is compiled once per runner with libseccomp (``pyseccomp``, a
binding to the system's ``libseccomp.so.2``), never hand-written BPF, and
handed to bubblewrap as ``--seccomp FD``: bubblewrap loads it right before it
executes the agent's command, so it binds setpriv, the interpreter and every
process the agent starts, on the root path and the user-namespace path alike.
Refused calls fail with EPERM (clone3 with ENOSYS, so the C library falls
back to clone, whose flags the filter can read); other architectures' system
calls kill the process (libseccomp's default for a foreign architecture).

Kernel memory outside the address space is bounded here too, per descriptor:
a socket's or a pipe's buffer stays at the kernel's default size (setsockopt
SO_SNDBUF/SO_RCVBUF and their FORCE variants, fcntl F_SETPIPE_SZ are refused;
the filter cannot read the size asked for, only the option). Raised to the
host's maximum, 16 socket pairs once queued 263 MB no rlimit saw. Nothing an
agent legitimately runs sets them: its one socket to the validator, Python's
asyncio self-pipe socketpair and subprocess pipes all keep the defaults. Sockets
are Unix or netlink only (EAFNOSUPPORT for the rest): loopback TCP grows its
buffers by itself. No socket listens and no Unix datagram socket is made alone,
so no queue outlives the descriptors that filled it. System V shared memory, message queues and
semaphores and memfd files are refused outright: their pages sit in no address space and behind no
descriptor bound (a detached segment, a 64 MiB memfd per descriptor). With RLIMIT_NOFILE and RLIMIT_NPROC that bounds what the
episode can queue where the host has no memory cgroup
(arena/runner/memory_cgroup.py bounds it where it has).
"""

from __future__ import annotations

import errno
import os

# New namespaces are the way from "unprivileged" to "uid 0 in a namespace".
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}

REFUSED_SYSCALLS = (
    # namespaces and mounts
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    # other processes' memory and file descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    # kernel keyrings, bpf, perf, userfaultfd, io_uring
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # loading kernels and modules
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    # host administration
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "iopl", "ioperm",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "fanotify_init", "uselib",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "vhangup", "personality",
    # kernel memory held by no descriptor or bound by no per-episode limit: System V IPC segments,
    # queues and semaphores (filled and detached, held in no address space), memfd files (only
    # RLIMIT_FSIZE a file). No agent needs them; the unprivileged path has no memory cgroup to charge them.
    "shmget", "shmat", "msgget", "msgsnd", "semget", "memfd_create", "memfd_secret",
)  # fmt: skip


SOL_SOCKET = 1
# Socket options that size a socket's kernel buffers (asm-generic/socket.h, x86 and arm alike).
BUFFER_OPTIONS = {"SO_SNDBUF": 7, "SO_RCVBUF": 8, "SO_SNDBUFFORCE": 32, "SO_RCVBUFFORCE": 33}
F_SETPIPE_SZ = 1031
# The one family a socket may have: Unix (the agent's one socket to the validator, and Python's own
# socketpairs). No network is there to reach, and loopback TCP or UDP would queue kernel memory (about
# 8 MB a connection, autotuned without any setsockopt) that a cgroup v1 does not charge to the episode.
# Netlink is refused too (issue 30, round three): datagrams queued on netlink sockets, or the kernel's own
# acknowledgements of refused requests, held 120-172 MiB against a 64 MiB episode bound and were charged to
# no memory cgroup. The C library asks netlink about interfaces (getifaddrs, getaddrinfo's AI_ADDRCONFIG) and
# takes "no such family" as "no interfaces", which is what the sandbox has.
AF_UNIX, AF_NETLINK = 1, 16  # netlink named for the tests that try it
SOCK_DGRAM, SOCK_TYPE_MASK = 2, 0xF  # the type's low bits; SOCK_CLOEXEC and SOCK_NONBLOCK sit above


class SyscallFilterUnavailable(RuntimeError):
    pass


def compile_filter() -> bytes:
    """The filter as raw BPF, ready for ``bwrap --seccomp FD``."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # the binding, or libseccomp.so.2 itself, is missing
        raise SyscallFilterUnavailable(
            f"libseccomp is needed for the sandbox's syscall filter ({exc}); "
            "install the pyseccomp package and libseccomp2 (Debian/Ubuntu: apt-get install libseccomp2)"
        ) from None
    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in REFUSED_SYSCALLS:
        try:
            rules.add_rule(refuse, name)
        except (ValueError, RuntimeError, OSError):
            # A call this libseccomp (or architecture) does not know cannot be named; the
            # ones that matter are tried from inside the sandbox by tests/arena/runner/test_hostile_resources.py.
            continue
    for flag in CLONE_NAMESPACE_FLAGS.values():
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for option in BUFFER_OPTIONS.values():
        rules.add_rule(refuse, "setsockopt", seccomp.Arg(1, seccomp.EQ, SOL_SOCKET), seccomp.Arg(2, seccomp.EQ, option))
    rules.add_rule(refuse, "fcntl", seccomp.Arg(1, seccomp.EQ, F_SETPIPE_SZ))
    # One comparison per argument and rule: every family but Unix (below it, and above it).
    no_family = seccomp.ERRNO(errno.EAFNOSUPPORT)  # what a kernel without the family says
    rules.add_rule(no_family, "socket", seccomp.Arg(0, seccomp.LT, AF_UNIX))
    rules.add_rule(no_family, "socket", seccomp.Arg(0, seccomp.GT, AF_UNIX))
    # Queues that outlive the descriptor that filled them multiply the per-descriptor bound: a
    # listening socket keeps every unaccepted connection's received bytes (somaxconn of them, 4096),
    # and a bound Unix datagram socket max_dgram_qlen datagrams from senders already closed. An
    # agent serves nothing: no listen(), no Unix datagram socket() (socketpair's are connected).
    rules.add_rule(refuse, "listen")
    rules.add_rule(
        seccomp.ERRNO(errno.ESOCKTNOSUPPORT),
        "socket",
        seccomp.Arg(0, seccomp.EQ, AF_UNIX),
        seccomp.Arg(1, seccomp.MASKED_EQ, SOCK_TYPE_MASK, SOCK_DGRAM),
    )
    # clone3 passes its flags in memory the filter cannot read: refuse it as "not
    # implemented", and the C library (and Python's os.fork) falls back to clone.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    fd = os.memfd_create("arena-seccomp-build", os.MFD_CLOEXEC)
    try:
        rules.export_bpf(_Descriptor(fd))  # libseccomp writes to a file descriptor
        program = os.pread(fd, 1 << 20, 0)
    finally:
        os.close(fd)
    if not program or len(program) % 8:
        raise SyscallFilterUnavailable("libseccomp produced no BPF program")
    return program


class _Descriptor:
    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd


def filter_fd(program: bytes) -> int:
    """A fresh descriptor holding the program at offset 0, for one bubblewrap to read."""
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
