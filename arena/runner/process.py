"""Run the sandbox process: wall-clock limit, capped output, resource usage.

It runs in a worker thread (the episode server keeps the event loop): the
child is reaped with ``os.wait4`` to get its own resource usage, which
asyncio's child watchers do not give per process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO


@dataclass
class ProcessResult:
    exit_code: int | None
    signal: int | None
    timed_out: bool
    output_exceeded: bool
    stdout_tail: str
    stderr_tail: str
    wall_s: float
    cpu_user_s: float = 0.0
    cpu_system_s: float = 0.0
    max_rss_kib: int = 0
    started: float = field(default=0.0)


class _CappedReader(threading.Thread):
    """Drains a pipe, keeping only the last ``keep`` bytes; reports when the
    total exceeds ``kill_after`` so a flood cannot run until the wall clock."""

    def __init__(self, pipe: IO[bytes], keep: int, kill_after: int, on_flood: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.pipe, self.keep, self.kill_after, self.on_flood = pipe, keep, kill_after, on_flood
        self.chunks: deque[bytes] = deque()
        self.kept = 0
        self.total = 0

    def run(self) -> None:
        while True:
            chunk = self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536)
            if not chunk:
                break
            self.total += len(chunk)
            self.chunks.append(chunk)
            self.kept += len(chunk)
            while self.kept - len(self.chunks[0]) >= self.keep:
                self.kept -= len(self.chunks.popleft())
            if self.total > self.kill_after:
                self.on_flood()
                self.kill_after = float("inf")  # type: ignore[assignment]

    def tail(self) -> str:
        data = b"".join(self.chunks)[-self.keep :]
        return data.decode("utf-8", errors="replace")


def run_process(
    argv: list[str],
    *,
    wall_s: float,
    output_bytes: int,
    preexec: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> ProcessResult:
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,  # noqa: PLW1509 - rlimits must be set between fork and exec
        start_new_session=True,  # one process group to kill
        env=env,
        cwd=cwd,
        close_fds=True,
    )
    flags = {"timed_out": False, "flooded": False}

    def kill(reason: str) -> None:
        flags[reason] = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(wall_s, kill, args=("timed_out",))
    timer.daemon = True
    readers = [
        _CappedReader(stream, output_bytes, output_bytes * 256, lambda: kill("flooded"))
        for stream in (proc.stdout, proc.stderr)
    ]
    timer.start()
    for reader in readers:
        reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    # Whatever the agent left behind in the session dies with it.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
    for reader in readers:
        reader.join(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return ProcessResult(
        exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        timed_out=flags["timed_out"],
        output_exceeded=flags["flooded"],
        stdout_tail=readers[0].tail(),
        stderr_tail=readers[1].tail(),
        wall_s=time.perf_counter() - started,
        cpu_user_s=usage.ru_utime,
        cpu_system_s=usage.ru_stime,
        max_rss_kib=usage.ru_maxrss,
        started=started,
    )
