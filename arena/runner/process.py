"""Run the sandbox process: wall-clock limit, capped output, resource usage.

It runs in a worker thread (the episode server keeps the event loop): the
child is reaped with ``os.wait4`` (by the spawn helper, arena/runner/spawner.py,
for a sandbox) to get its own resource usage, which asyncio's child watchers do
not give per process. ``wait4`` sees only
bubblewrap, though: the sandbox's own CPU, processes and peaks come from a
:class:`~arena.runner.accounting.TreeMonitor`, and whether the agent started
and how it ended from boot's status channel (arena/runner/boot.py).
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

from arena.runner.accounting import TreeMonitor, TreeSample
from arena.runner.memory_cgroup import MemoryReport
from arena.runner.spawner import Exited, Spawner, StartSteps, apply_steps


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
    cpu_limit_hit: bool = False  # the runner killed it at the episode's CPU bound
    agent_started: bool | None = None  # boot reported its start (None: no status channel)
    reported_exit: int | None = None  # boot's exit code, reported before the runner's last look
    peak: TreeSample = field(default_factory=TreeSample)
    final: TreeSample | None = None  # the last full look, taken when boot reported its end
    stopped: bool = False  # the episode stopped it early (StopSwitch: the agent's terminate grace ran out)
    memory: MemoryReport | None = None  # the episode's memory cgroup, read after the end (None: no cgroup)
    # Start-up clocks (perf_counter): the spawn returned (bubblewrap exec'd), boot's "started" arrived.
    spawned: float = 0.0
    boot_started: float | None = None


class StopSwitch:
    """Lets the episode stop the process early, from its event loop, while the process runs:
    after the agent's ``terminate`` its grace is the episode's, not the wall clock's. A stop
    asked for before the process started, or after it ended, does nothing (a pid reaped by
    then may already be another process's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kill: Callable[[], bool] | None = None

    def stop(self) -> bool:
        """Kills the process tree now; True when it was still running (and had not reported its end)."""
        with self._lock:
            return self._kill() if self._kill is not None else False

    def _arm(self, kill: Callable[[], bool] | None) -> None:
        with self._lock:
            self._kill = kill


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
    steps: StartSteps | None = None,
    spawner: Spawner | None = None,
    standby: int | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    monitor: TreeMonitor | None = None,
    status_fd: tuple[int, int] | None = None,
    pass_fds: tuple[int, ...] = (),
    switch: StopSwitch | None = None,
) -> ProcessResult:
    """``status_fd`` is the (read, write) pipe of boot's status channel; the write
    end goes to the sandbox (in ``pass_fds`` too). Both ends are closed here.
    ``steps`` run between fork and exec (arena.runner.spawner.apply_steps): in the
    ``spawner``'s helper process when one is given, else in a fork of this one."""
    started = time.perf_counter()
    try:
        pid, streams, wait = _start(
            argv, steps=steps, spawner=spawner, standby=standby, env=env, cwd=cwd, pass_fds=pass_fds
        )
    except BaseException:
        for fd in status_fd or ():
            os.close(fd)
        raise
    spawned = time.perf_counter()
    if status_fd is not None:
        os.close(status_fd[1])  # only the sandbox may hold the write end: EOF when it is gone
    flags = {"timed_out": False, "flooded": False, "cpu": False, "reported": False, "stopped": False}

    def kill(reason: str) -> None:
        flags[reason] = True
        if monitor is not None and monitor.cgroup is not None:
            monitor.cgroup.kill()
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def stop_early() -> bool:
        if flags["reported"]:
            return False  # boot reported the agent's end: the runner's own kill is on its way
        kill("stopped")
        return True

    status_reader = _StatusReader(status_fd[0], monitor, lambda: kill("reported")) if status_fd else None
    if monitor is not None:
        monitor.on_cpu_limit = lambda: kill("cpu")
        monitor.start_on(pid)
    if status_reader is not None:
        status_reader.start()

    timer = threading.Timer(wall_s, kill, args=("timed_out",))
    timer.daemon = True
    readers = [_CappedReader(stream, output_bytes, output_bytes * 256, lambda: kill("flooded")) for stream in streams]
    timer.start()
    if switch is not None:
        switch._arm(stop_early)
    for reader in readers:
        reader.start()
    exited = wait()
    status = exited.status
    timer.cancel()
    if switch is not None:
        switch._arm(None)  # reaped: its pid is free for another process
    # Whatever the agent left behind in the session dies with it.
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for reader in readers:
        reader.join(timeout=5)
    for stream in streams:
        stream.close()
    if status_reader is not None:
        status_reader.join(timeout=5)
    peak, final = TreeSample(), None
    cpu_user, cpu_system = exited.ru_utime, exited.ru_stime
    if monitor is not None:
        monitor.stop()
        peak, final = monitor.peak, monitor.final
        cpu_user, cpu_system = max(cpu_user, peak.cpu_user_s), max(cpu_system, peak.cpu_system_s)
    return ProcessResult(
        exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        timed_out=flags["timed_out"],
        output_exceeded=flags["flooded"],
        stdout_tail=readers[0].tail(),
        stderr_tail=readers[1].tail(),
        wall_s=time.perf_counter() - started,
        cpu_user_s=cpu_user,
        cpu_system_s=cpu_system,
        max_rss_kib=exited.ru_maxrss,
        started=started,
        cpu_limit_hit=flags["cpu"] and not flags["reported"],
        agent_started=status_reader.started if status_reader is not None else None,
        reported_exit=status_reader.exit_code if status_reader is not None and flags["reported"] else None,
        peak=peak,
        final=final,
        stopped=flags["stopped"] and not flags["reported"],
        spawned=spawned,
        boot_started=status_reader.started_at if status_reader is not None else None,
    )


def _start(
    argv: list[str],
    *,
    steps: StartSteps | None,
    spawner: Spawner | None,
    standby: int | None,
    env: dict[str, str] | None,
    cwd: str | None,
    pass_fds: tuple[int, ...],
) -> tuple[int, tuple[IO[bytes], IO[bytes]], Callable[[], Exited]]:
    """The process started in its own session: its pid, its stdout and stderr, and how to wait for its end."""
    if spawner is not None:
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        try:
            pid = spawner.spawn(
                argv,
                env=env,
                cwd=cwd,
                stdout=out_write,
                stderr=err_write,
                pass_fds=pass_fds,
                steps=steps or {},
                standby=standby,
            )
        except BaseException:
            os.close(out_read)
            os.close(err_read)
            raise
        finally:
            os.close(out_write)
            os.close(err_write)
        streams = (open(out_read, "rb", buffering=0), open(err_read, "rb", buffering=0))  # noqa: SIM115 - closed by run_process
        return pid, streams, lambda: spawner.wait(pid)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # Without steps no preexec function, so subprocess can use vfork.
        preexec_fn=(lambda: apply_steps(steps)) if steps else None,  # noqa: PLW1509 - they must run between fork and exec
        start_new_session=True,  # one process group to kill
        env=env,
        cwd=cwd,
        close_fds=True,
        pass_fds=pass_fds,
    )
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes

    def wait() -> Exited:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
        return Exited(status, usage.ru_utime, usage.ru_stime, usage.ru_maxrss)

    return proc.pid, (proc.stdout, proc.stderr), wait


class _StatusReader(threading.Thread):
    """Boot's status channel: ``started``, then ``exit N``; on the end, the monitor's last
    full look, then the kill. Reads at most a few lines' worth: the agent can write here."""

    def __init__(self, fd: int, monitor: TreeMonitor | None, on_end: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.fd, self.monitor, self.on_end = fd, monitor, on_end
        self.started = False
        self.started_at: float | None = None  # perf_counter when boot said it started
        self.exit_code: int | None = None

    def run(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    return
                buffer = (buffer + chunk)[-4096:]
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line == b"started" and not self.started:
                        self.started, self.started_at = True, time.perf_counter()
                    elif line.startswith(b"exit ") and self.started and self.exit_code is None:
                        try:
                            self.exit_code = int(line[5:])
                        except ValueError:
                            continue
                        if self.monitor is not None:
                            self.monitor.settle()
                        self.on_end()
        finally:
            os.close(self.fd)
