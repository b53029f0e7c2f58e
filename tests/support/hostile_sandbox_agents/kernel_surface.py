"""Hostile: asks the kernel for what a sandbox escape starts with; prints what it got."""

import ctypes
import errno
import os

libc = ctypes.CDLL(None, use_errno=True)
SYSCALLS = {  # x86_64 numbers
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "ptrace": 101,
    "keyctl": 250, "add_key": 248, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "clone": 56, "clone3": 435, "io_uring_setup": 425, "open_tree": 428,
    "fsopen": 430, "process_vm_readv": 310,
}  # fmt: skip
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID = 0x10000000, 0x20000, 0x40000000, 0x20000000


def attempt(name, *args):
    ctypes.set_errno(0)
    result = libc.syscall(SYSCALLS[name], *[ctypes.c_long(a) for a in args])
    code = ctypes.get_errno()
    if result == -1:
        print("REFUSED", name, errno.errorcode.get(code, code))
    else:
        print("ALLOWED", name, result)
        if name == "clone" and result == 0:
            os._exit(0)  # the child of a clone that should never have happened
    return result


def agent_main(problem):
    if attempt("unshare", CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) == 0:
        try:  # the escape: become uid 0 of the new namespace
            with open("/proc/self/uid_map", "w") as handle:
                handle.write(f"0 {os.getuid()} 1")
            print("UIDMAP written")
        except OSError as exc:
            print("UIDMAP refused", exc)
    attempt("setns", 0, 0)
    attempt("mount", 0, 0, 0, 0, 0)
    attempt("umount2", 0, 0)
    attempt("pivot_root", 0, 0)
    attempt("ptrace", 16, os.getppid(), 0, 0)  # PTRACE_ATTACH to the parent
    attempt("keyctl", 0, 0, 0, 0)
    attempt("add_key", 0, 0, 0, 0, 0)
    attempt("bpf", 0, 0, 0)
    attempt("perf_event_open", 0, 0, -1, -1, 0)
    attempt("userfaultfd", 0)
    attempt("kexec_load", 0, 0, 0, 0)
    attempt("kexec_file_load", -1, -1, 0, 0, 0)
    attempt("init_module", 0, 0, 0)
    attempt("finit_module", -1, 0, 0)
    attempt("delete_module", 0, 0)
    attempt("io_uring_setup", 1, 0)
    attempt("open_tree", -100, 0, 0)
    attempt("fsopen", 0, 0)
    attempt("process_vm_readv", os.getppid(), 0, 0, 0, 0, 0)
    for flag in (CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID):
        attempt("clone", flag | 17, 0, 0, 0, 0)  # 17: SIGCHLD
    attempt("clone3", 0, 0)
    pid = os.fork()  # plain processes still work (Python forks through clone)
    if pid == 0:
        os._exit(7)
    print("FORK", os.waitpid(pid, 0)[1] >> 8)
