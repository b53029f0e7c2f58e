"""One episode's sandbox process, prepared: argv, environment, descriptors, monitor.

Everything the process holds on the host (its leased uid, its cgroups, the
descriptors of the syscall filter, of bubblewrap's options and of boot's status
channel) is taken here and given back by :meth:`SandboxLaunch.close`, whatever
failed in between.
"""

from __future__ import annotations

import os
from pathlib import Path

from arena.runner.accounting import EpisodeCgroup, TreeMonitor
from arena.runner.memory_cgroup import EpisodeMemoryCgroup
from arena.runner.process import ProcessResult, StopSwitch, run_process
from arena.runner.record import EpisodeLimits
from arena.runner.sandbox import (
    arguments_by_descriptor,
    bubblewrap_command,
    rlimit_steps,
    runner_tasks,
    sandbox_environment,
    shared_proc_masks,
    start_steps,
    unsafe_command,
)
from arena.runner.spawner import Spawner
from arena.runner.syscall_filter import filter_fd
from arena.runner.uids import UidLease


class SandboxLaunch:
    """``defences`` False (benchmarks only) leaves out the syscall filter, the bounded
    /tmp, the /proc masks, the narrowed libraries, the CPU monitor and the status channel."""

    def __init__(
        self,
        *,
        limits: EpisodeLimits,
        runtime: Path,
        workdir: Path,
        agent_dir: Path,
        socket_path: Path,
        sandbox: bool,
        defences: bool,
        syscall_filter: bytes | None,
        switch: StopSwitch | None = None,
    ) -> None:
        self.limits = limits
        self.switch = switch  # the episode's early stop (after the agent's terminate grace)
        self._fds: list[int] = []
        self.uid_lease: UidLease | None = None
        self.cgroup: EpisodeCgroup | None = None
        self.memory: EpisodeMemoryCgroup | None = None
        self.status_fd: tuple[int, int] | None = None
        try:
            self.cgroup = EpisodeCgroup.create() if defences else None
            # Where the host has a writable memory controller: v2 in the CPU cgroup, else v1's own.
            self.memory = EpisodeMemoryCgroup.create(limits.episode_memory_bytes, self.cgroup) if defences else None
            self.status_fd = os.pipe() if defences else None
            status_write = self.status_fd[1] if self.status_fd is not None else None
            pass_fds = [status_write] if status_write is not None else []
            private_tmp = None
            self.env: dict[str, str] | None = None
            self.cwd: str | None = None
            if sandbox:
                self.uid_lease = UidLease()
                seccomp_fd = self._hold(filter_fd(syscall_filter)) if syscall_filter is not None else None
                if defences and os.geteuid() == 0:
                    private_tmp = workdir / "tmp"  # the runner's own tmpfs: bounded in inodes too
                    private_tmp.mkdir()
                self.argv = bubblewrap_command(
                    runtime=runtime,
                    agent_dir=agent_dir,
                    socket_path=socket_path,
                    uid=self.uid_lease.uid,
                    limits=limits if defences else None,
                    seccomp_fd=seccomp_fd,
                    status_fd=status_write,
                    private_tmp=private_tmp,
                    proc_masks=shared_proc_masks(runtime, limits) if defences else None,
                    only_linked_libraries=defences,
                )
                if defences:
                    self.argv, args_fd = arguments_by_descriptor(self.argv)
                    self._hold(args_fd)
                pass_fds += self._fds
            else:
                self.argv = unsafe_command(runtime=runtime, agent_file=agent_dir / "agent.py")
                self.env = sandbox_environment(str(socket_path), status_write) | {"PATH": os.environ.get("PATH", "")}
                self.cwd = str(workdir)
            self.pass_fds = tuple(pass_fds)
            self.monitor = (
                TreeMonitor(cpu_limit_s=limits.cpu_s, on_cpu_limit=lambda: None, cgroup=self.cgroup)
                if defences
                else None
            )
            self.steps = (
                start_steps(
                    limits, cgroup=self.cgroup, memory=self.memory, private_tmp=private_tmp, extra_tasks=runner_tasks()
                )
                if defences
                else {"rlimits": rlimit_steps(limits)}
            )
            # The sandbox's first process is forked by the small spawn helper, not by this (large) process.
            self.spawner = Spawner.shared() if sandbox else None
        except BaseException:
            self.close()
            raise

    def _hold(self, fd: int) -> int:
        self._fds.append(fd)
        return fd

    def run(self) -> ProcessResult:
        """Blocking (run it in a worker thread): the process from start to end."""
        status_fd, self.status_fd = self.status_fd, None  # run_process closes both ends
        result = run_process(
            self.argv,
            wall_s=self.limits.wall_s,
            output_bytes=self.limits.output_bytes,
            steps=self.steps,
            spawner=self.spawner,
            env=self.env,
            cwd=self.cwd,
            monitor=self.monitor,
            status_fd=status_fd,
            pass_fds=self.pass_fds,
            switch=self.switch,
        )
        if self.memory is not None:
            result.memory = self.memory.report()  # the processes are gone: the peak and the hits are final
        return result

    def close(self) -> None:
        """Blocking too: the cgroup waits for its last processes to go."""
        for fd in [*self._fds, *(self.status_fd or ())]:
            os.close(fd)
        self._fds, self.status_fd = [], None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.memory is not None:
            self.memory.remove()
            self.memory = None
        if self.uid_lease is not None:
            self.uid_lease.release()  # the sandbox's pid namespace is gone: no process of that uid is left
            self.uid_lease = None
