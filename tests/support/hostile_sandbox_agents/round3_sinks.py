"""Hostile: kernel memory through sinks the earlier rounds did not try (issue 30, class 5, round 3).

The query (JSON) names the sink, the processes and the MiB each tries to hold:

- ``netlink``: NETLINK_USERSOCK sockets (protocol 2; the filter lets netlink through, and this protocol
  lets an unprivileged process send to another socket's port id). Each receiver is bound, sent
  datagrams until the kernel refuses (its receive buffer, about 208 KiB, plus the one datagram that
  overshoots it), and never read;
- ``netlink_ack``: NETLINK_ROUTE sockets with no peer: each sends the kernel requests it refuses, asking
  for an acknowledgement, which carries the whole request back into the socket's own queue;
- ``inotify``: inotify instances watching the private /tmp, fed events with 255-character names
  (created and removed) and never read: each instance queues up to ``max_queued_events`` of them;

Each process prints ``QUEUED pid bytes sink`` (netlink: the bytes the kernel accepted; inotify: its
queue by FIONREAD), they all hold what they queued until
every one is done, and the first process then prints ``KERNEL-HELD bytes``: the sum of every netlink
socket's receive queue in the sandbox's own network namespace (only the episode's sockets are there),
read from ``/proc/net/netlink`` while all of them are held.
"""

import array
import fcntl
import json
import os
import select
import socket
import struct
import termios
import time

NETLINK_USERSOCK = 2
_HEADER = b"\x10\x00\x00\x00" + bytes(12)  # an nlmsghdr: the kernel does not parse user-to-user datagrams


def _queued(fd: int) -> int:
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return buf[0]


def netlink_rmem() -> int:
    """Bytes queued on every netlink socket of this network namespace (the kernel's Rmem column)."""
    try:
        lines = open("/proc/net/netlink").read().splitlines()[1:]
    except OSError:
        return -1
    return sum(int(line.split()[4]) for line in lines if len(line.split()) > 4)  # sk Eth Pid Groups Rmem


def fill_netlink(target: int) -> list:
    try:
        sender = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_USERSOCK)
        sender.bind((0, 0))
    except OSError as exc:
        print("NETLINK-REFUSED", os.getpid(), exc.errno, flush=True)
        return []
    sender.setblocking(False)
    held, queued = [sender], 0
    # The largest datagram the sender's buffer allows, after one that leaves the receiver just under its bound.
    big = _HEADER + b"x" * (sender.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) - 1024)
    while queued < target:
        try:
            receiver = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_USERSOCK)
            receiver.bind((0, 0))
        except OSError as exc:
            print("NETLINK-STOPPED", os.getpid(), exc.errno, flush=True)
            break
        held.append(receiver)
        port = receiver.getsockname()[0]
        for payload in (_HEADER + b"x" * 8192, big):
            while True:
                try:
                    queued += sender.sendto(payload, (port, 0))
                except OSError:
                    break
        if len(held) % 16 == 0:
            print("QUEUED", os.getpid(), queued, "netlink", flush=True)
    print("QUEUED", os.getpid(), queued, "netlink", flush=True)
    return held


def fill_netlink_ack(target: int) -> list:
    """NETLINK_ROUTE, no peer at all: requests the kernel refuses (RTM_NEWLINK needs CAP_NET_ADMIN), each
    asking for an acknowledgement, which echoes the whole request back into the sender's own queue."""
    held, queued, payload = [], 0, b"x" * 65536
    # About 128 KiB of acknowledgements stay queued a socket (the kernel's figure, KERNEL-HELD, is the one read).
    for _ in range(min(240, target // (128 * 1024))):
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
            sock.bind((0, 0))
        except OSError as exc:
            print("NETLINK-REFUSED", os.getpid(), exc.errno, flush=True)
            break
        sock.setblocking(False)
        held.append(sock)
        for seq in range(64):
            message = struct.pack("=LHHLL", 16 + len(payload), 16, 0x1 | 0x4, seq, 0) + payload
            try:
                sock.sendto(message, (0, 0))
            except OSError:
                break
        queued += 128 * 1024
        if len(held) % 16 == 0:
            print("QUEUED", os.getpid(), queued, "netlink_ack", flush=True)
    print("QUEUED", os.getpid(), queued, "netlink_ack", flush=True)
    return held


def fill_inotify(target: int) -> list:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    folder = f"/tmp/ino-{os.getpid()}"
    os.mkdir(folder)
    instances = []
    for _ in range(64):
        fd = libc.inotify_init1(os.O_NONBLOCK)
        if fd < 0 or libc.inotify_add_watch(fd, folder.encode(), 0x300) < 0:  # IN_CREATE | IN_DELETE
            print("INOTIFY-STOPPED", os.getpid(), ctypes.get_errno(), flush=True)
            break
        instances.append(fd)
    queued, name = 0, os.path.join(folder, "n" * 255)
    for round_ in range(40000):
        if not instances:
            break
        open(name, "w").close()
        os.unlink(name)
        if round_ % 500 == 0:
            queued = sum(_queued(fd) for fd in instances)
            print("QUEUED", os.getpid(), queued, "inotify", flush=True)
            if queued >= target:
                break
    return instances


SINKS = {"netlink": fill_netlink, "netlink_ack": fill_netlink_ack, "inotify": fill_inotify}


def agent_main(problem):
    spec = json.loads(problem["query"])
    fill, target, processes = SINKS[spec["way"]], spec["mib"] * 1024**2, spec["processes"]
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
    if spec["way"].startswith("netlink"):
        print("KERNEL-HELD", netlink_rmem(), flush=True)
    time.sleep(0.5)  # let the runner sample the peak
    os.close(go_w)
    survivors = [os.getpid()] + [pid for pid in children if os.waitpid(pid, 0)[1] == 0]
    print("SURVIVED", *survivors, flush=True)
    del held
