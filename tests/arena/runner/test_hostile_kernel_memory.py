"""Hostile: kernel memory an agent queues outside its address space, in the real sandbox.

Socket-pair buffers (and pipes) hold bytes in the kernel, charged to no process's RSS and
bound by none of the per-process rlimits: raised to the host's maximum, 16 pairs once
queued 263 MB (issue 30, class 5). Two bounds hold it now, and the record names them:
the syscall filter keeps every socket and pipe at the kernel's default size, and a memory
cgroup per episode (v1 or v2, where the host offers a writable one) bounds what all its
processes hold together, user and kernel memory alike, and names the bound in
``limits_hit`` when it is reached. The attack runs beside an honest episode.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig, classify
from arena.runner.process import ProcessResult
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path
from tests.arena.runner.test_hostile_resources import NON_ROOT_SCRIPT, REPO
from tests.support.process_memory import peak_since_reset, status_bytes

SUPPORT = Path(__file__).parents[2] / "support"
ATTACK = SUPPORT / "hostile_sandbox_agents" / "socket_buffers.py"
HONEST = SUPPORT / "race_agents" / "first_hit.py"
VALIDATOR_GROWTH_BOUND = 96 * 1024**2
EPISODE_MEMORY = 64 * 1024**2
MIB_PER_PROCESS = 40  # four processes: 160 MiB tried, 2.5x the episode's bound

if bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)

# Validated from a dict: a field this code does not know is ignored, so the test runs (and fails) before it.
LIMITS = EpisodeLimits.model_validate(
    dict(wall_s=60, cpu_s=20, memory_bytes=1024**3, processes=32, output_bytes=16 * 1024, episode_memory_bytes=EPISODE_MEMORY)
)  # fmt: skip


def _problem(query: str):
    return parse_row({"query": query, "reward": {"product_id": "1001", "title": ["widget"]}})


def _host_offers_memory_cgroup() -> bool:
    """A memory controller this (root) process could make an episode cgroup under: v1's, or v2's."""
    if os.geteuid() != 0:
        return False
    cgroups = Path("/proc/self/cgroup").read_text()
    v1 = any(":memory:" in line or ",memory:" in line for line in cgroups.splitlines())
    v2 = "memory" in Path("/sys/fs/cgroup/cgroup.controllers").read_text().split() if Path("/sys/fs/cgroup/cgroup.controllers").is_file() else False  # fmt: skip
    return v1 or v2


def _queued(record: EpisodeRecord) -> dict[int, int]:
    """The most each process said it held; they hold it all until every one is done."""
    most: dict[int, int] = {}
    for line in record.stdout_tail.splitlines():
        parts = line.split()
        if parts[:1] == ["QUEUED"]:
            most[int(parts[1])] = max(most.get(int(parts[1]), 0), int(parts[2]))
    return most


def _held_at_once(record: EpisodeRecord) -> int:
    """What the processes that lived to the end held together (a killed one gave its bytes back)."""
    most = _queued(record)
    survivors = next((line.split()[1:] for line in record.stdout_tail.splitlines() if line.startswith("SURVIVED")), [])
    return sum(most.get(int(pid), 0) for pid in survivors)


def _counts(record: EpisodeRecord, word: str) -> list[int]:
    return [int(p[p.index(word) + 1]) for p in (line.split() for line in record.stdout_tail.splitlines()) if word in p]


@pytest.fixture(scope="module")
def runs(catalog) -> dict:
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=LIMITS))
    honest = AgentSource.from_path(HONEST)

    async def run_all() -> dict:
        solo = await runner.run(honest, _problem("widget"), "heuristic-policy")
        peak_since_reset()
        before = status_bytes("VmRSS")
        attack, neighbour = await asyncio.gather(
            runner.run(AgentSource.from_path(ATTACK), _problem(str(MIB_PER_PROCESS)), "heuristic-policy"),
            runner.run(honest, _problem("widget"), "heuristic-policy"),
        )
        return {"solo": solo, "attack": attack, "neighbour": neighbour, "growth": peak_since_reset() - before}

    return asyncio.run(run_all())


def test_socket_and_pipe_buffers_stay_at_the_kernels_default(runs):
    record = runs["attack"]
    for refused in ("TCP-REFUSED", "LISTEN-REFUSED", "DGRAM-REFUSED"):
        assert refused in record.stdout_tail, f"no {refused}; held {_held_at_once(record)} bytes at once"
    assert _counts(record, "REFUSED"), record.stdout_tail[-2000:]
    assert not any(_counts(record, "RAISED")), f"buffers raised; held {_held_at_once(record)} bytes at once"


def test_what_the_episode_holds_is_bounded_and_the_bound_named(runs):
    record = runs["attack"]
    queued = _held_at_once(record)
    named = {hit.limit: hit for hit in record.limits_hit}
    if _host_offers_memory_cgroup():
        assert getattr(record.usage, "memory_cgroup", None) in ("v1", "v2"), (record.limits_hit, queued)
        assert "episode_memory_bytes" in named, (record.limits_hit, queued)
        assert named["episode_memory_bytes"].count >= 1
        # The kernel's own figure of everything the episode held at once, user and kernel memory.
        assert 0 < record.usage.peak_memory_bytes <= EPISODE_MEMORY
        assert queued <= EPISODE_MEMORY, queued
        assert record.termination in (Termination.limit, Termination.returned, Termination.crash)
    else:  # the other bounds still hold: default-sized buffers, RLIMIT_NOFILE per process, RLIMIT_NPROC
        assert record.usage.memory_cgroup is None
    per_process = _queued(record)
    assert per_process and max(per_process.values()) < MIB_PER_PROCESS * 1024**2, per_process


def test_the_validator_and_the_honest_neighbour_are_untouched(runs):
    assert runs["growth"] < VALIDATOR_GROWTH_BOUND
    solo, neighbour = runs["solo"], runs["neighbour"]
    assert solo.termination is neighbour.termination is Termination.terminated
    assert [(c.name, c.arguments, c.result) for c in neighbour.tool_calls] == [
        (c.name, c.arguments, c.result) for c in solo.tool_calls
    ]
    assert neighbour.final_recommendation == solo.final_recommendation
    assert not neighbour.limits_hit


def test_without_a_memory_cgroup_the_per_descriptor_bounds_still_hold():
    """The unprivileged path: no cgroup is writable, so the record says no memory cgroup was in
    force; the filter still keeps every buffer at the kernel's default, and RLIMIT_NOFILE the pairs."""
    python = shutil.which("python3", path="/usr/bin")
    if os.geteuid() != 0 or python is None or not shutil.which("setpriv"):
        pytest.skip("needs root (to become an unprivileged user) and the system's python3")
    site = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p, "pydantic").is_dir())
    work = Path(tempfile.mkdtemp(prefix="arena-nonroot-"))  # pytest's own folders are root's only
    os.chown(work, 65534, 65534)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONPATH": f"{REPO}:{site}", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
             python, "-c", NON_ROOT_SCRIPT, str(work), LIMITS.model_dump_json(), str(ATTACK)],
            capture_output=True, text=True, env=env, timeout=240, check=False,
        )  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = (EpisodeRecord.model_validate(r) for r in json.loads(done.stdout))
    assert getattr(record.usage, "memory_cgroup", "absent") is None
    assert _counts(record, "REFUSED") and not any(_counts(record, "RAISED")), record.stdout_tail[-2000:]
    assert all(r in record.stdout_tail for r in ("TCP-REFUSED", "LISTEN-REFUSED", "DGRAM-REFUSED"))
    # Filled until refused: at the default sizes that is RLIMIT_NOFILE's pairs of about half a MB each.
    per_process = _queued(record)
    assert per_process and max(per_process.values()) <= LIMITS.open_files // 4 * 640 * 1024, per_process
    assert "PAIRS-REFUSED" in record.stdout_tail


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        (None, (Termination.crash, None)),
        ({}, (Termination.crash, None)),  # a cgroup that never reached its bound names nothing
        ({"oom_kills": 1}, (Termination.limit, "episode_memory_bytes")),  # the kernel's kill, not the agent's
        ({"version": "v2", "limit_reached": 3}, (Termination.limit, "episode_memory_bytes")),
    ],
)
def test_a_kill_names_the_memory_cgroup_only_when_the_kernel_says_so(memory, expected):
    from arena.runner.memory_cgroup import MemoryReport  # here: the attack tests above run (and fail) without it

    report = None if memory is None else MemoryReport(**({"version": "v1", "limit_bytes": EPISODE_MEMORY, "peak_bytes": 1, "limit_reached": 0, "oom_kills": 0} | memory))  # fmt: skip
    result = ProcessResult(exit_code=None, signal=9, timed_out=False, output_exceeded=False, stdout_tail="",
                           stderr_tail="MemoryError", wall_s=1.0, agent_started=True, memory=report)  # fmt: skip
    termination, limit, _, fault = classify(result, False, LIMITS)
    assert (termination, limit) == expected and fault is None


def test_a_cgroup_v2_with_the_memory_controller_is_bounded_and_read(tmp_path):
    """This host's memory controller is v1 (the real test above runs there); a v2 host's files are
    laid out here as the kernel lays them out, to check what is written and read on that path."""
    from arena.runner.accounting import EpisodeCgroup
    from arena.runner.memory_cgroup import EpisodeMemoryCgroup

    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.peak").write_text("4096\n")
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n")
    memory = EpisodeMemoryCgroup.create(EPISODE_MEMORY, EpisodeCgroup(tmp_path))
    assert memory is not None and memory.version == "v2"
    assert (tmp_path / "memory.max").read_text() == str(EPISODE_MEMORY)
    memory.enter()  # the CPU cgroup's own entry already put the process there: nothing to write
    report = memory.report()
    assert report is not None and (report.peak_bytes, report.limit_reached, report.oom_kills) == (4096, 7, 1)
    memory.remove()
    assert tmp_path.is_dir()  # the CPU cgroup's to remove, not this one's
