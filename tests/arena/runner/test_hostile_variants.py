"""Issue 30, variants of the closed classes, in the real bubblewrap sandbox through the real runner.

Kept as regression tests: each was tried as a cheater would and held on main, and each is cheap.

- class 3 (``terminate`` ends the episode): an answer changed after terminate from a process the agent
  set loose (a double-forked daemon in a session of its own, deaf to SIGTERM and SIGHUP; or a child that
  calls terminate while its parent lives on) is refused, the first answer stands, and the episode ends
  at its terminate, never at the wall clock;
- class 5 (kernel memory): sinks other than raised socket buffers (anonymous memory files from
  ``memfd_create``, written and never mapped: bound per file only by RLIMIT_FSIZE, so 256 descriptors
  of 64 MiB each a process) are charged to the episode's memory cgroup and held at its bound, named.

(The class 1 variant that got through, a verdict steered into unstorable text, is
tests/arena/race/test_judgment_poison.py.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path
from tests.arena.runner.test_hostile_kernel_memory import _host_offers_memory_cgroup

SUPPORT = Path(__file__).parents[2] / "support" / "hostile_sandbox_agents"
EPISODE_MEMORY = 128 * 1024**2
LIMITS = EpisodeLimits(wall_s=60, cpu_s=40, memory_bytes=1024**3, episode_memory_bytes=EPISODE_MEMORY)
ANSWER = "1001"

if bubblewrap_path() is None:
    pytestmark = pytest.mark.skip(reason="bubblewrap is not installed")


def _problem(spec: dict):
    return parse_row({"query": json.dumps(spec), "reward": {"product_id": ANSWER, "title": ["widget"]}})


@pytest.fixture(scope="module")
def runs(catalog) -> dict[str, EpisodeRecord]:
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=LIMITS))
    afterlife = AgentSource.from_path(SUPPORT / "afterlife.py")
    sinks = AgentSource.from_path(SUPPORT / "kernel_sinks.py")
    episodes = {
        "daemon": (afterlife, {"way": "daemon", "id": ANSWER}),
        "child_terminates": (afterlife, {"way": "child_terminates", "id": ANSWER}),
        # Two processes of 256 MiB of memfd pages each, against a 128 MiB bound.
        "memfd": (sinks, {"way": "memfd", "processes": 2, "mib": 256}),
    }

    async def go() -> list[EpisodeRecord]:
        return await asyncio.gather(*(runner.run(a, _problem(s), "heuristic-policy") for a, s in episodes.values()))

    return dict(zip(episodes, asyncio.run(go()), strict=True))


@pytest.mark.parametrize("way", ["daemon", "child_terminates"])
def test_an_answer_changed_after_terminate_from_a_loose_process_is_refused(runs, way):
    record = runs[way]
    assert record.final_recommendation == [ANSWER], record.stdout_tail[-1000:]
    assert record.termination is Termination.terminated, (record.termination, record.error)
    assert "LATE ok" not in record.stdout_tail
    late = record.tool_calls[2:]  # after the answer and the terminate
    assert all(not c.ok and c.refused == "terminated" for c in late), late
    if way == "child_terminates":  # the parent sleeps on: stopped at the grace, named, its answer standing
        assert [c.name for c in late] == ["recommend_product"] * 3, late
        assert "terminate_grace_s" in {hit.limit for hit in record.limits_hit}
    assert record.usage.wall_s < LIMITS.wall_s / 2  # ended at its terminate, not held to the wall clock


def test_memfd_pages_are_held_at_the_episode_memory_bound(runs):
    record = runs["memfd"]
    queued = {}
    for line in record.stdout_tail.splitlines():
        parts = line.split()
        if parts[:1] == ["QUEUED"]:
            queued[parts[1]] = max(queued.get(parts[1], 0), int(parts[2]))
    assert queued, record.stdout_tail[-2000:]  # it wrote some before the bound
    if not _host_offers_memory_cgroup():
        pytest.skip("no memory cgroup on this host: RLIMIT_FSIZE and RLIMIT_NOFILE bound each process only")
    assert record.usage.memory_cgroup in ("v1", "v2")
    assert 0 < record.usage.peak_memory_bytes <= EPISODE_MEMORY
    assert "episode_memory_bytes" in {hit.limit for hit in record.limits_hit}, record.limits_hit
    assert "SURVIVED" not in record.stdout_tail or sum(queued.values()) <= EPISODE_MEMORY
