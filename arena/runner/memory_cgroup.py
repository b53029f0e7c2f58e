"""The episode's memory cgroup: one bound on what all its processes hold together.

RLIMIT_AS binds one process's address space; nothing per process binds the kernel
memory a process makes others keep for it. Socket buffers are the large case: bytes
queued in a Unix socket pair sit in the kernel, in no address space, until read
(16 pairs with raised buffers once held 263 MB, issue 30). Modern kernels charge them,
with pipes, page tables and the private /tmp's pages, to the memory cgroup of the
process that allocated them, so one cgroup per episode bounds the whole episode, user
and kernel memory alike (``EpisodeLimits.episode_memory_bytes``).

Hosts differ: a cgroup v2 with the memory controller enabled gives ``memory.max`` in
the episode's own cgroup (arena/runner/accounting.py makes it, for CPU); a host with
the v1 memory controller mounted (e.g. ``/sys/fs/cgroup/memory``) gets a cgroup of its
own there, beside the runner's. Where neither is writable (the unprivileged path) the
bound is absent and the record says so; the other bounds still hold (the syscall
filter's default-sized socket and pipe buffers, RLIMIT_NOFILE, RLIMIT_NPROC).

The kernel's own figures decide what the record says, never the agent's: the peak
charge, and whether the limit was reached (v1 ``memory.failcnt`` and ``oom_kill``,
v2 ``memory.events`` ``max`` and ``oom_kill``).
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from pydantic import BaseModel

from arena.runner.accounting import CGROUP_PREFIX, EpisodeCgroup, cgroup_pids, prune_stale
from arena.runner.spawner import join_cgroup

V1_MEMORY = "memory"


class MemoryReport(BaseModel):
    """The kernel's figures for an episode's memory cgroup, read after its processes ended."""

    version: str  # "v1" or "v2"
    limit_bytes: int
    peak_bytes: int  # the most charged at once (v1 max_usage_in_bytes, v2 memory.peak)
    limit_reached: int  # allocations refused at the limit (v1 failcnt, v2 events "max")
    oom_kills: int  # processes the kernel killed to stay within it


def _v1_memory_dir() -> Path | None:
    """The runner's own cgroup in the v1 memory hierarchy, as a path on this host."""
    try:
        own = next(
            line.split(":", 2)[2]
            for line in Path("/proc/self/cgroup").read_text().splitlines()
            if V1_MEMORY in line.split(":", 2)[1].split(",")
        )
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except (OSError, StopIteration, IndexError):
        return None
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields, super_fields = left.split(" "), right.split(" ")
        if super_fields[0] != "cgroup" or V1_MEMORY not in super_fields[-1].split(","):
            continue
        # The mount shows the hierarchy from its root field on: the runner's path is relative to it.
        root, point = fields[3], fields[4]
        relative = os.path.relpath(own, root) if own.startswith(root) else None
        if relative is None or relative.startswith(".."):
            continue
        return Path(point) / relative if relative != "." else Path(point)
    return None


class EpisodeMemoryCgroup:
    def __init__(self, path: Path, version: str, limit_bytes: int, *, own: bool) -> None:
        self.path, self.version, self.limit_bytes = path, version, limit_bytes
        self._own = own  # v1: a cgroup of its own, made and removed here; v2: the CPU cgroup's
        self._procs = str(path / "cgroup.procs").encode()
        # What the sandbox's first process joins besides the CPU cgroup (v2: nothing more).
        self.procs_file = str(path / "cgroup.procs") if own else None

    @classmethod
    def create(cls, limit_bytes: int, cpu_cgroup: EpisodeCgroup | None) -> EpisodeMemoryCgroup | None:
        """None when the host offers no writable memory controller."""
        if cpu_cgroup is not None and (cpu_cgroup.path / "memory.max").is_file():
            try:
                (cpu_cgroup.path / "memory.max").write_text(str(limit_bytes))
                swap = cpu_cgroup.path / "memory.swap.max"  # absent without swap accounting
                if swap.is_file():
                    swap.write_text("0")  # else the kernel would page the episode out instead of bounding it
            except OSError:
                return None
            return cls(cpu_cgroup.path, "v2", limit_bytes, own=False)
        parent = _v1_memory_dir()
        if parent is None:
            return None
        path = parent / f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
        except OSError:
            return None
        try:
            (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
            # With swap the kernel would page the episode out instead of bounding it.
            memsw = path / "memory.memsw.limit_in_bytes"
            if memsw.is_file():
                memsw.write_text(str(limit_bytes))
        except OSError:
            path.rmdir()
            return None
        prune_stale(parent)
        return cls(path, "v1", limit_bytes, own=True)

    def enter(self) -> None:
        """Between fork and exec in the sandbox's first process, like EpisodeCgroup.enter:
        every later process of the episode is charged here. Only os calls."""
        if not self._own:
            return  # v2: the CPU cgroup is this cgroup, and it is entered already
        join_cgroup(self._procs)

    def pids(self) -> list[int]:
        return cgroup_pids(self.path)

    def report(self) -> MemoryReport | None:
        try:
            if self.version == "v1":
                peak = _number(self.path / "memory.max_usage_in_bytes")
                reached = _number(self.path / "memory.failcnt")
                oom = _fields(self.path / "memory.oom_control").get("oom_kill", 0)
            else:
                events = _fields(self.path / "memory.events")
                peak_file = self.path / "memory.peak"  # Linux 5.19+
                peak = _number(peak_file) if peak_file.is_file() else _number(self.path / "memory.current")
                reached, oom = events.get("max", 0), events.get("oom_kill", 0)
        except (OSError, ValueError):
            return None
        return MemoryReport(
            version=self.version, limit_bytes=self.limit_bytes, peak_bytes=peak, limit_reached=reached, oom_kills=oom
        )

    def remove(self) -> None:
        """v1 has no cgroup.kill: the sandbox's processes die with its pid namespace, and
        rmdir waits for the last to leave (charges still held, like socket buffers being
        freed, do not block it)."""
        if not self._own:
            return
        for _ in range(200):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)


def _number(path: Path) -> int:
    return int(path.read_text().split()[0])


def _fields(path: Path) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            out[key] = int(value)
    return out
