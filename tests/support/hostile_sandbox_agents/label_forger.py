"""Hostile: a plain crash dressed up as a resource limit. The query says how."""

import os
import signal
import sys


def agent_main(problem):
    way = problem["query"]
    sys.stderr.write(
        "Traceback (most recent call last):\nMemoryError\nOSError: [Errno 27] File too large\n"
        "OSError: [Errno 24] Too many open files\nBlockingIOError: [Errno 11] Resource temporarily unavailable\n"
    )
    sys.stderr.flush()
    if way == "raise-memory-error":
        raise MemoryError
    if way == "exit-code":
        os._exit(5)  # boot's code for MemoryError
    if way == "status-channel":
        os.write(int(os.environ["ARENA_STATUS_FD"]), b"exit 5\n")
        raise MemoryError
    if way in ("SIGXCPU", "SIGXFSZ", "SIGKILL"):
        os.kill(os.getpid(), getattr(signal, way))
    raise RuntimeError("an ordinary bug")
