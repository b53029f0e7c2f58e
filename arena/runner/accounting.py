"""What an episode's processes use, measured by the validator from outside.

RLIMIT_CPU binds one process, and ``wait4`` on bubblewrap sees none of the
sandbox's CPU (the agent is reaped inside the sandbox's pid namespace), so an
agent with 63 processes could each burn the full wall time while the record
said 0.0 s. The runner therefore measures the whole tree itself:

- with a writable cgroup v2 (a host that offers one, e.g. as root), each
  episode gets its own cgroup, entered by the sandbox's first process before
  bubblewrap runs, so every later process is born in it: ``cpu.stat`` is the
  exact CPU of all of them, alive or dead, ``cgroup.procs`` lists them and
  ``cgroup.kill`` ends them all at once;
- otherwise the tree is the processes descending from bubblewrap, found in
  ``/proc``: a process's own time plus its reaped children's
  (``utime + stime + cutime + cstime``), summed over the living tree, counts
  every process that ran, since a dead one's time moves into its parent's.

The same samples give the peaks the record's limit names are decided from
(processes, address space, open files, /tmp): kernel-kept figures the agent
cannot write, never anything it printed.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arena.runner.spawner import join_cgroup

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_INTERVAL_S = 0.1
CGROUP_PREFIX = "arena-episode-"
_STALE_CGROUP_S = 3600
_TMP_WALK_FILES = 20_000


@dataclass
class TreeSample:
    """One look at the episode's processes; peaks are folded in by :class:`TreeMonitor`."""

    cpu_user_s: float = 0.0
    cpu_system_s: float = 0.0
    tasks: int = 0  # threads of the agent's processes (what RLIMIT_NPROC counts)
    vm_peak_bytes: int = 0  # largest address space any of them reached (kernel's VmPeak)
    open_files: int = 0  # most descriptors one process held
    tmp_bytes_free: int | None = None  # of the private /tmp, when a process could show it
    tmp_inodes_free: int | None = None
    tmp_bytes_used: int = 0
    tmp_inodes_used: int = 0
    largest_tmp_file: int = 0
    pids: list[int] = field(default_factory=list)

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_system_s


def _cgroup2_root() -> Path | None:
    """The mount point of the cgroup v2 hierarchy (pure or hybrid), if any."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            return Path(left.split(" ")[4])
    return None


def _own_cgroup() -> str | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:].strip()
    except OSError:
        pass
    return None


def cgroup_pids(path: Path) -> list[int]:
    """The processes in a cgroup now (none once it is gone or unreadable)."""
    try:
        return [int(x) for x in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


class EpisodeCgroup:
    """One cgroup v2 for one episode, beside the runner's own cgroup."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.procs_file = str(path / "cgroup.procs")  # written by the sandbox's first process to join
        self._procs = self.procs_file.encode()

    @classmethod
    def create(cls) -> EpisodeCgroup | None:
        """None when the host offers no writable cgroup v2 (then the tree is sampled)."""
        root, own = _cgroup2_root(), _own_cgroup()
        if root is None or own is None:
            return None
        parent = root / own.lstrip("/")
        path = parent / f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
        except OSError:
            return None
        if not (path / "cpu.stat").is_file() or not (path / "cgroup.kill").exists():
            path.rmdir()
            return None  # a kernel before 5.14 (no cgroup.kill): fall back to sampling
        prune_stale(parent)
        return cls(path)

    def enter(self) -> None:
        """Run in the sandbox's first process, between fork and exec: from here on every
        process of the episode is born in the cgroup. Only os calls: no allocation-heavy
        Python between fork and exec."""
        join_cgroup(self._procs)

    def pids(self) -> list[int]:
        return cgroup_pids(self.path)

    def cpu(self) -> tuple[float, float]:
        stat = {}
        try:
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                stat[key] = int(value)
        except (OSError, ValueError):
            return 0.0, 0.0
        return stat.get("user_usec", 0) / 1e6, stat.get("system_usec", 0) / 1e6

    def kill(self) -> None:
        try:
            (self.path / "cgroup.kill").write_text("1")
        except OSError:
            pass

    def remove(self) -> None:
        self.kill()
        for _ in range(200):  # the kill is asynchronous: wait until the cgroup is empty
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)


def prune_stale(parent: Path) -> None:
    """Episode cgroups left by a killed runner: empty ones older than an hour go
    (rmdir refuses a cgroup that still has processes)."""
    now = time.time()
    for entry in parent.glob(f"{CGROUP_PREFIX}*"):
        try:
            if now - entry.stat().st_mtime > _STALE_CGROUP_S:
                entry.rmdir()
        except OSError:
            continue


def _descendants(root: int) -> list[int]:
    """The living processes under ``root`` (itself included), from /proc: through each
    task's ``children`` list (work in proportion to the tree), else a scan of all of /proc."""
    if not os.path.exists(f"/proc/{root}/task/{root}/children"):
        return _descendants_by_scan(root)
    tree, stack, seen = [], [root], {root}
    while stack:
        pid = stack.pop()
        tree.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for tid in tasks:
            for child in (_read(f"/proc/{pid}/task/{tid}/children") or "").split():
                if int(child) not in seen:
                    seen.add(int(child))
                    stack.append(int(child))
    return tree


def _descendants_by_scan(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if stat is None:
            continue
        fields = stat.rpartition(")")[2].split()
        children.setdefault(int(fields[1]), []).append(int(name))
    tree, stack = [], [root]
    while stack:
        pid = stack.pop()
        tree.append(pid)
        stack.extend(children.get(pid, ()))
    return tree


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def sample_tree(pids: list[int], *, cgroup: EpisodeCgroup | None, deep: bool) -> TreeSample:
    """CPU, tasks and address-space peak of these processes; ``deep`` adds open files
    and the private /tmp (dearer: taken at the end and on a slower cadence)."""
    sample = TreeSample(pids=pids)
    user = system = 0.0
    tmp_seen = False
    for pid in pids:
        stat = _read(f"/proc/{pid}/stat")
        if stat is None:
            continue
        comm = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat.rpartition(")")[2].split()
        # Fields after the name: utime=11 stime=12 cutime=13 cstime=14 (0-based from state).
        user += (int(fields[11]) + int(fields[13])) / CLOCK_TICKS
        system += (int(fields[12]) + int(fields[14])) / CLOCK_TICKS
        if comm == "bwrap":
            continue  # the sandbox's own processes: not the agent's tasks or memory
        status = _read(f"/proc/{pid}/status") or ""
        for line in status.splitlines():
            if line.startswith("Threads:"):
                sample.tasks += int(line.split()[1])
            elif line.startswith("VmPeak:"):
                sample.vm_peak_bytes = max(sample.vm_peak_bytes, int(line.split()[1]) * 1024)
        if deep:
            try:
                sample.open_files = max(sample.open_files, len(os.listdir(f"/proc/{pid}/fd")))
            except OSError:
                pass
            if not tmp_seen:
                tmp_seen = _sample_tmp(pid, sample)
    if cgroup is not None:
        user, system = cgroup.cpu()
    sample.cpu_user_s, sample.cpu_system_s = user, system
    return sample


def _sample_tmp(pid: int, sample: TreeSample) -> bool:
    """The private /tmp as this process sees it (through its root in /proc)."""
    tmp = f"/proc/{pid}/root/tmp"
    try:
        stats = os.statvfs(tmp)
    except OSError:
        return False
    sample.tmp_bytes_free = stats.f_bavail * stats.f_frsize
    sample.tmp_inodes_free = stats.f_favail
    sample.tmp_bytes_used = (stats.f_blocks - stats.f_bfree) * stats.f_frsize
    sample.tmp_inodes_used = stats.f_files - stats.f_ffree
    largest, seen = 0, 0
    try:
        for _, _, files, dir_fd in os.fwalk(tmp):
            seen += len(files)
            if seen > _TMP_WALK_FILES:
                break  # enough to bound the validator's work; the inode bound stops a real flood
            for name in files:
                try:
                    largest = max(largest, os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_size)
                except OSError:
                    continue
    except OSError:
        pass
    sample.largest_tmp_file = largest
    return True


class TreeMonitor(threading.Thread):
    """Samples the episode's processes while it runs; kills it at the CPU bound.

    ``peak`` holds the highest figure seen for each measure; ``final`` is the
    last sample, which :meth:`settle` takes while the processes still exist
    (the sandbox's boot waits for it before it exits)."""

    DEEP_EVERY = 10  # samples: open files and /tmp each second

    def __init__(self, *, cpu_limit_s: float, on_cpu_limit: Callable[[], None], cgroup: EpisodeCgroup | None) -> None:
        super().__init__(daemon=True)
        self.cpu_limit_s, self.on_cpu_limit, self.cgroup = cpu_limit_s, on_cpu_limit, cgroup
        self.root_pid: int | None = None
        self.peak = TreeSample()
        self.final: TreeSample | None = None
        self.cpu_limit_hit = False
        self._stop_event = threading.Event()
        self._lock = threading.Lock()

    def start_on(self, pid: int) -> None:
        self.root_pid = pid
        self.start()

    def pids(self) -> list[int]:
        if self.cgroup is not None:
            return self.cgroup.pids()
        return _descendants(self.root_pid) if self.root_pid is not None else []

    def sample(self, *, deep: bool) -> TreeSample:
        current = sample_tree(self.pids(), cgroup=self.cgroup, deep=deep)
        with self._lock:
            peak = self.peak
            peak.cpu_user_s = max(peak.cpu_user_s, current.cpu_user_s)
            peak.cpu_system_s = max(peak.cpu_system_s, current.cpu_system_s)
            peak.tasks = max(peak.tasks, current.tasks)
            peak.vm_peak_bytes = max(peak.vm_peak_bytes, current.vm_peak_bytes)
            peak.open_files = max(peak.open_files, current.open_files)
            peak.largest_tmp_file = max(peak.largest_tmp_file, current.largest_tmp_file)
            peak.tmp_bytes_used = max(peak.tmp_bytes_used, current.tmp_bytes_used)
            peak.tmp_inodes_used = max(peak.tmp_inodes_used, current.tmp_inodes_used)
            for name in ("tmp_bytes_free", "tmp_inodes_free"):
                seen, now = getattr(peak, name), getattr(current, name)
                if now is not None:
                    setattr(peak, name, now if seen is None else min(seen, now))
        if current.cpu_s >= self.cpu_limit_s and not self.cpu_limit_hit:
            self.cpu_limit_hit = True
            self.on_cpu_limit()
        return current

    def run(self) -> None:
        count = 0
        while not self._stop_event.wait(SAMPLE_INTERVAL_S):
            count += 1
            self.sample(deep=count % self.DEEP_EVERY == 0)

    def settle(self) -> None:
        """One last, full sample: called when the sandbox reports its end, before it is killed.
        It is what the limit name is decided from (the peaks may be from long before)."""
        self.final = self.sample(deep=True)

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=5)
        if self.cgroup is not None:
            self.sample(deep=False)  # the cgroup keeps the dead processes' CPU: the exact total
