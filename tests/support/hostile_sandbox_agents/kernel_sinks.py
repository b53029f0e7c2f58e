"""Hostile: kernel memory held through sinks other than raised buffers (issue 30, class 5 variants).

The query (JSON) names the sink, the processes and the MiB each tries to hold:

- ``pairs``: Unix socket pairs and pipes at the kernel's default sizes (no setsockopt), filled from
  both ends and never read, in many processes;
- ``memfd``: anonymous memory files (``memfd_create``) written and kept open: shmem pages in no
  address space (nothing mapped), bound per file by RLIMIT_FSIZE only;
- ``inflight``: socket pairs filled, then sent as SCM_RIGHTS over a carrier pair and closed: the
  queues live on in the kernel, held by a message no process has read;
- ``sysv_shm``: System V shared memory segments, filled through a mapping and detached: held by no
  descriptor and in no address space (only ``shmall``/``shmmni`` bound them);
- ``a+b``: each sink in turn, each to the MiB given.

Each process prints ``QUEUED pid bytes`` as it goes (per sink); they all hold what they queued until every one
is done, and ``SURVIVED`` names those that lived to the end (their totals were held at once).
"""

import array
import functools
import json
import os
import select
import socket
import time

CHUNK = b"x" * 65536


def fill_pairs(target: int) -> list:
    held, queued = [], 0
    while queued < target:
        try:
            a, b = socket.socketpair()
            r, w = os.pipe()
        except OSError as exc:
            print("PAIRS-REFUSED", os.getpid(), exc.errno, flush=True)
            break
        held += [a, b, r, w]
        a.setblocking(False)
        b.setblocking(False)
        os.set_blocking(w, False)
        for send in (a.send, b.send, functools.partial(os.write, w)):
            while queued < target:
                try:
                    queued += send(CHUNK)
                except (BlockingIOError, OSError):
                    break
        print("QUEUED", os.getpid(), queued, "pairs", flush=True)
    return held


def fill_memfd(target: int) -> list:
    held, queued = [], 0
    while queued < target:
        try:
            fd = os.memfd_create("sink")
        except OSError as exc:
            print("MEMFD-REFUSED", os.getpid(), exc.errno, flush=True)
            break
        held.append(fd)
        try:
            for _ in range(256):  # 16 MiB a file
                if queued >= target:
                    break
                queued += os.write(fd, CHUNK)
        except OSError as exc:
            print("MEMFD-STOPPED", os.getpid(), exc.errno, flush=True)
            break
        print("QUEUED", os.getpid(), queued, "memfd", flush=True)
    return held


def fill_inflight(target: int) -> list:
    carrier_a, carrier_b = socket.socketpair()
    carrier_a.setblocking(False)
    queued = 0
    while queued < target:
        try:
            a, b = socket.socketpair()
        except OSError as exc:
            print("PAIRS-REFUSED", os.getpid(), exc.errno, flush=True)
            break
        a.setblocking(False)
        b.setblocking(False)
        for sock in (a, b):
            while True:
                try:
                    queued += sock.send(CHUNK)
                except (BlockingIOError, OSError):
                    break
        try:
            carrier_a.sendmsg(
                [b"f"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [a.fileno(), b.fileno()]))]
            )
        except OSError as exc:
            print("INFLIGHT-REFUSED", os.getpid(), exc.errno, flush=True)
            a.close()
            b.close()
            break
        a.close()
        b.close()
        print("QUEUED", os.getpid(), queued, "inflight", flush=True)
    return [carrier_a, carrier_b]


def fill_sysv_shm(target: int) -> list:
    """System V shared memory, filled through a mapping and detached: the pages stay in the segment,
    in no address space, until it is removed (or its IPC namespace dies with the sandbox)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    size, queued, segments = 16 * 1024**2, 0, []
    while queued < target:
        segment = libc.shmget(0, size, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
        if segment < 0:
            print("SHM-REFUSED", os.getpid(), ctypes.get_errno(), flush=True)
            break
        address = libc.shmat(segment, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            print("SHM-REFUSED", os.getpid(), ctypes.get_errno(), flush=True)
            break
        ctypes.memset(address, 1, size)
        libc.shmdt(ctypes.c_void_p(address))
        segments.append(segment)
        queued += size
        print("QUEUED", os.getpid(), queued, "sysv_shm", flush=True)
    return segments


SINKS = {"pairs": fill_pairs, "memfd": fill_memfd, "inflight": fill_inflight, "sysv_shm": fill_sysv_shm}


def agent_main(problem):
    spec = json.loads(problem["query"])
    ways, target, processes = spec["way"].split("+"), spec["mib"] * 1024**2, spec["processes"]

    def fill(target: int) -> list:  # "a+b": each sink in turn, each to the target
        return [fill_one(target) for fill_one in (SINKS[way] for way in ways)]

    done_r, done_w = os.pipe()
    go_r, go_w = os.pipe()
    children = []
    for _ in range(processes - 1):
        try:
            pid = os.fork()
        except OSError as exc:
            print("FORK-REFUSED", exc.errno, flush=True)
            break
        if pid == 0:
            os.close(go_w)
            held = fill(target)
            os.write(done_w, b"1")
            os.read(go_r, 1)
            del held
            os._exit(0)
        children.append(pid)
    os.close(go_r)
    held = fill(target)
    finished, deadline = 0, time.monotonic() + 30
    while finished < len(children) and time.monotonic() < deadline:
        if select.select([done_r], [], [], 0.5)[0]:
            finished += len(os.read(done_r, 64))
    print("ALL-HELD", finished + 1, flush=True)
    time.sleep(0.5)  # let the runner sample the peak
    os.close(go_w)
    survivors = [os.getpid()] + [pid for pid in children if os.waitpid(pid, 0)[1] == 0]
    print("SURVIVED", *survivors, flush=True)
    del held
