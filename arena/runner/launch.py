"""One episode's sandbox process, prepared: argv, environment, descriptors, monitor.

Everything the process holds on the host (its leased uid, its cgroups, the
descriptors of the syscall filter, of bubblewrap's options and of boot's status
channel) is taken here and given back by :meth:`SandboxLaunch.close`, whatever
failed in between.
"""

from __future__ import annotations

import atexit
import os
import threading
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
from arena.runner.spawner import Spawner, SpawnHelperDied
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
        self.standby: int | None = None
        self._defences, self._ran = defences, False
        self.spawner = Spawner.shared() if sandbox else None  # forks the sandbox: not this (large) process
        try:
            prepared = PreparedCgroups.take(self.spawner, limits) if defences and self.spawner else None
            if prepared is not None:
                self.cgroup, self.memory, self.standby = prepared
            elif defences:
                self.cgroup = EpisodeCgroup.create()
                # Where the host has a writable memory controller: v2 in the CPU cgroup, else v1's own.
                self.memory = EpisodeMemoryCgroup.create(limits.episode_memory_bytes, self.cgroup)
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
        except BaseException:
            self.close()
            raise

    def _hold(self, fd: int) -> int:
        self._fds.append(fd)
        return fd

    def run(self) -> ProcessResult:
        """Blocking (run it in a worker thread): the process from start to end."""
        status_fd, self.status_fd = self.status_fd, None  # run_process closes both ends
        self._ran = True
        result = run_process(
            self.argv,
            wall_s=self.limits.wall_s,
            output_bytes=self.limits.output_bytes,
            steps=self.steps,
            spawner=self.spawner,
            standby=self.standby,
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
        if self.standby is not None and not self._ran and self.spawner is not None:
            self.spawner.discard(self.standby)  # it would sit in the cgroups removed below
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.memory is not None:
            self.memory.remove()
            self.memory = None
        if self.uid_lease is not None:
            self.uid_lease.release()  # the sandbox's pid namespace is gone: no process of that uid is left
            self.uid_lease = None
        if self._defences and self.spawner is not None:
            # The next episode's, off its start and off this episode's end (its record's wall clock).
            threading.Thread(target=PreparedCgroups.prepare, args=(self.spawner, self.limits), daemon=True).start()


class PreparedCgroups:
    """The next episode's cgroups, made ahead, with the process that will start its sandbox
    already moved into them by the spawn helper (arena/runner/spawner.py): moving a process
    between cgroups waits for an RCU grace period, milliseconds of every start otherwise
    (benchmarks/episode.py). One set at a time per runner process, for one memory bound: a
    launch takes it, or makes its own when there is none (the first episode, concurrent ones);
    an episode that took one prepares the next when it ends."""

    _lock = threading.Lock()
    _held: tuple[Spawner, int, EpisodeCgroup | None, EpisodeMemoryCgroup | None, int] | None = None

    @classmethod
    def take(
        cls, spawner: Spawner, limits: EpisodeLimits
    ) -> tuple[EpisodeCgroup | None, EpisodeMemoryCgroup | None, int] | None:
        with cls._lock:
            held, cls._held = cls._held, None
        if held is None:
            return None
        owner, memory_bytes, cgroup, memory, standby = held
        if owner.owner != os.getpid():
            return None  # inherited over a fork: the parent's to use or release
        if owner is spawner and not spawner.dead and memory_bytes == limits.episode_memory_bytes:
            return cgroup, memory, standby
        _release(owner, cgroup, memory, standby)
        return None

    @classmethod
    def prepare(cls, spawner: Spawner, limits: EpisodeLimits) -> None:
        """Makes the next set, unless one is held already (or the host offers no cgroup to make)."""
        if cls._held is not None:
            return
        cgroup = EpisodeCgroup.create()
        memory = EpisodeMemoryCgroup.create(limits.episode_memory_bytes, cgroup)
        entries = [entry for entry in (cgroup and cgroup.procs_file, memory and memory.procs_file) if entry]
        if not entries:
            _release(None, cgroup, memory, None)
            return
        try:
            standby = spawner.prepare(entries)
        except SpawnHelperDied:
            _release(None, cgroup, memory, None)
            return
        with cls._lock:
            held, cls._held = cls._held, cls._held or (spawner, limits.episode_memory_bytes, cgroup, memory, standby)
        if held is not None:
            _release(spawner, cgroup, memory, standby)  # another episode prepared one meanwhile

    @classmethod
    def release(cls) -> None:
        with cls._lock:
            held, cls._held = cls._held, None
        if held is not None and held[0].owner == os.getpid():  # not a parent's, inherited over a fork
            owner, _, cgroup, memory, standby = held
            _release(owner, cgroup, memory, standby)


def _release(
    spawner: Spawner | None, cgroup: EpisodeCgroup | None, memory: EpisodeMemoryCgroup | None, standby: int | None
) -> None:
    if spawner is not None and standby is not None:
        spawner.discard(standby)
    if cgroup is not None:
        cgroup.remove()
    if memory is not None:
        memory.remove()


atexit.register(PreparedCgroups.release)  # no empty cgroups left behind by a clean exit
