"""Hostile: queues kernel memory in Unix socket pairs, in several processes at once.

Each socket's buffers are raised to the most the host allows (SO_SNDBUF/SO_RCVBUF, and the
*FORCE variants that need CAP_NET_ADMIN), then every pair is filled from both ends and never
read: the bytes sit in the kernel, in no process's address space. The query is the MiB each of
the processes tries to hold (the parent and three children; any other query: until refused); they all hold what they queued
until every one is done, so the queued totals of the processes that live to the end (``SURVIVED``)
were held at the same time.
Pipes get the same treatment (F_SETPIPE_SZ), one per pair, and so do loopback TCP connections,
whose buffers the kernel grows by itself (about 8 MB a connection, no setsockopt needed). Before
that, queues that outlive their fillers: a listener's unaccepted connections, a datagram socket's
closed senders.
"""

import fcntl
import functools
import os
import select
import socket
import time

PROCESSES = 4
CHUNK = b"x" * 65536
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def tcp_listener():
    try:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        return listener
    except OSError as exc:
        print("TCP-REFUSED", os.getpid(), exc.errno, flush=True)
        return None


def unaccepted_backlog(limit: int = 64) -> int:
    """Connections nobody accepts, filled and closed: a listener keeps what they sent."""
    path = f"/tmp/backlog-{os.getpid()}"
    queued = 0
    try:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4096)
        for _ in range(limit):
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(path)
            client.setblocking(False)
            try:
                while True:
                    queued += client.send(CHUNK)
            except BlockingIOError:
                client.close()
    except OSError as exc:
        print("LISTEN-REFUSED", os.getpid(), exc.errno, flush=True)
    return queued


def closed_datagram_senders(limit: int = 64) -> int:
    """A bound datagram socket keeps the datagrams of senders already closed."""
    path = f"/tmp/dgram-{os.getpid()}"
    queued = 0
    try:
        receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        receiver.bind(path)
        for _ in range(limit):
            sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sender.setblocking(False)
            try:
                queued += sender.sendto(b"x" * 200_000, path)
            except BlockingIOError:
                break
            finally:
                sender.close()
    except OSError as exc:
        print("DGRAM-REFUSED", os.getpid(), exc.errno, flush=True)
    return queued


def fill(target: float) -> list:
    queued = raised = refused = pairs = 0
    listener = tcp_listener()
    held = [listener]
    queued += unaccepted_backlog() + closed_datagram_senders()
    try:
        while queued < target:
            if listener is not None:
                try:
                    client = socket.create_connection(listener.getsockname())
                    server, _ = listener.accept()
                    held += [client, server]
                    for sock in (client, server):
                        sock.setblocking(False)
                        for _ in range(3):  # the kernel grows the send buffer as the connection goes
                            while queued < target:
                                try:
                                    queued += sock.send(CHUNK)
                                except BlockingIOError:
                                    break
                            time.sleep(0.01)
                except OSError as exc:
                    print("TCP-STOPPED", os.getpid(), exc.errno, flush=True)
                    listener = None
            try:
                a, b = socket.socketpair()
                r, w = os.pipe()
            except OSError as exc:
                print("PAIRS-REFUSED", os.getpid(), exc.errno, flush=True)
                break
            held += [a, b, r, w]
            for sock in (a, b):
                for option in (socket.SO_SNDBUF, socket.SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE):
                    try:
                        sock.setsockopt(socket.SOL_SOCKET, option, 1 << 30)
                        raised += 1
                    except OSError:
                        refused += 1
                sock.setblocking(False)
            try:
                fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
                raised += 1
            except OSError:
                refused += 1
            os.set_blocking(w, False)
            for send in (a.send, b.send, functools.partial(os.write, w)):
                while queued < target:
                    try:
                        queued += send(CHUNK)
                    except BlockingIOError:
                        break
            pairs += 1
            if pairs % 4 == 0:
                print("QUEUED", os.getpid(), queued, "RAISED", raised, "REFUSED", refused, flush=True)
    finally:
        print("QUEUED", os.getpid(), queued, "RAISED", raised, "REFUSED", refused, "DONE", flush=True)
    return held


def agent_main(problem):
    target = int(problem["query"]) * 1024**2 if problem["query"].isdigit() else float("inf")  # else: until refused
    done_r, done_w = os.pipe()
    go_r, go_w = os.pipe()
    children = []
    for _ in range(PROCESSES - 1):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            held = fill(target)
            os.write(done_w, b"1")
            os.read(go_r, 1)  # hold everything until the parent lets go (EOF)
            del held
            os._exit(0)
        children.append(pid)
    os.close(go_r)
    held = fill(target)
    finished, deadline = 0, time.monotonic() + 30
    while finished < len(children) and time.monotonic() < deadline:
        if select.select([done_r], [], [], 0.5)[0]:
            finished += len(os.read(done_r, 16))
    print("ALL-HELD", finished + 1, flush=True)
    os.close(go_w)
    # The processes that lived to the end held what they queued at the same time: a process the
    # kernel killed gave its bytes back, and the others may have queued more after it.
    survivors = [os.getpid()] + [pid for pid in children if os.waitpid(pid, 0)[1] == 0]
    print("SURVIVED", *survivors, flush=True)
    del held
