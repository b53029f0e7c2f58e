"""Issue 30, variants of the closed classes, in the real bubblewrap sandbox through the real runner.

Kept as regression tests: each was tried as a cheater would and held on main, and each is cheap.

- class 3 (``terminate`` ends the episode): an answer changed after terminate from a process the agent
  set loose (a double-forked daemon in a session of its own, deaf to SIGTERM and SIGHUP; or a child that
  calls terminate while its parent lives on) is refused, the first answer stands, and the episode ends
  at its terminate, never at the wall clock;
- the proxy's own cost: a model-call body within ``llm_body_bytes`` that is dear to parse (1.4 M empty
  lists in 4 MiB: about a CPU-second of the validator's, on the event loop its other episodes share), sent
  again after every refusal, was parsed every time; now the proxy reads at most ``REFUSED_BODIES_READ``
  bodies' worth of requests it refuses, then refuses unread, named ``llm_body_bytes``;
- class 5 (kernel memory): sinks other than raised socket buffers (anonymous memory files from
  ``memfd_create``, written and never mapped: bound per file only by RLIMIT_FSIZE, so 256 descriptors
  of 64 MiB each a process) are charged to the episode's memory cgroup and held at its bound, named.

(The class 1 variant that got through, a verdict steered into unstorable text, is
tests/arena/race/test_judgment_poison.py.)
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
from arena.runner import budgets
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path
from tests.arena.runner.test_hostile_resources import NON_ROOT_SCRIPT, REPO

# Read with a default so that the module runs (and this one test fails) on code from before the bound.
REFUSED_BODIES_READ = getattr(budgets, "REFUSED_BODIES_READ", 4)

SUPPORT = Path(__file__).parents[2] / "support" / "hostile_sandbox_agents"
EPISODE_MEMORY = 128 * 1024**2
LIMITS = EpisodeLimits(
    wall_s=60, cpu_s=40, memory_bytes=1024**3, episode_memory_bytes=EPISODE_MEMORY, llm_body_bytes=256 * 1024
)
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
        # Bodies of 1/4 of the bound (so the bound is not what refuses them), for a model that is not allowed.
        "json_bloat": (
            AgentSource.from_path(SUPPORT.parent / "hostile_server_agents" / "json_bloat.py"),
            {"body": LIMITS.llm_body_bytes // 4, "calls": 4 * REFUSED_BODIES_READ + 4, "model": "not-allowed"},
        ),
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


def test_requests_the_proxy_refuses_are_read_up_to_a_bound_then_refused_unread(runs):
    record = runs["json_bloat"]
    answers = next(line.split()[3:] for line in record.stdout_tail.splitlines() if line.startswith("BODY"))
    read = 4 * REFUSED_BODIES_READ  # each body a quarter of llm_body_bytes
    assert answers[:read] == ["403:model_not_allowed"] * read, answers
    assert answers[read:] == ["429:refused_requests_exhausted"] * 4, answers
    named = {hit.limit: hit for hit in record.limits_hit}
    assert "llm_body_bytes" in named and named["llm_body_bytes"].count == 4, record.limits_hit


def _held(record: EpisodeRecord) -> dict[str, int]:
    """What each process held at the end, over its sinks (``QUEUED pid bytes sink``, growing per sink)."""
    most: dict[tuple[str, str], int] = {}
    for parts in (line.split() for line in record.stdout_tail.splitlines()):
        if parts[:1] == ["QUEUED"]:
            most[parts[1], parts[3]] = max(most.get((parts[1], parts[3]), 0), int(parts[2]))
    held: dict[str, int] = {}
    for (pid, _), queued in most.items():
        held[pid] = held.get(pid, 0) + queued
    return held


def test_memfd_files_are_refused_so_they_hold_no_kernel_memory(runs):
    """memfd pages are bound only by RLIMIT_FSIZE a file (256 descriptors x 64 MiB a process) where the host
    has no memory cgroup: the filter refuses memfd_create on every path, so the sink holds nothing."""
    record = runs["memfd"]
    assert "MEMFD-REFUSED" in record.stdout_tail, record.stdout_tail[-2000:]  # the attack ran and was refused
    assert not _held(record), record.stdout_tail[-2000:]


# Unprivileged (no cgroup): what one process may hold in the kernel, by docs/security.md ("Known to remain"):
# its descriptors' default-sized socket pairs, about 0.25 MB a descriptor.
DESCRIPTOR_BOUND = LIMITS.open_files * 256 * 1024


def test_without_a_memory_cgroup_no_sink_outgrows_the_descriptor_bound():
    """The unprivileged path has no memory cgroup; the docs bound an episode's kernel memory there by its
    descriptors. System V shared memory, filled and detached, is held by no descriptor and in no address
    space, so neither RLIMIT_NOFILE nor RLIMIT_AS sees it (on main: 768 MiB a process, two processes, 1 GiB
    RLIMIT_AS; nothing but the host's shmall bounds it); memfd files are bound only by RLIMIT_FSIZE a file
    (256 descriptors x 64 MiB = 16 GiB a process)."""
    python = shutil.which("python3", path="/usr/bin")
    if os.geteuid() != 0 or python is None or not shutil.which("setpriv"):
        pytest.skip("needs root (to become an unprivileged user) and the system's python3")
    site = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p, "pydantic").is_dir())
    script = NON_ROOT_SCRIPT.replace('{"query": "widget"', '{"query": sys.argv[-1]').replace(
        "sys.argv[3:]", "sys.argv[3:-1]"
    )
    query = json.dumps({"way": "sysv_shm+memfd", "processes": 2, "mib": 2 * DESCRIPTOR_BOUND // 1024**2})
    work = Path(tempfile.mkdtemp(prefix="arena-nonroot-"))  # pytest's own folders are root's only
    os.chown(work, 65534, 65534)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONPATH": f"{REPO}:{site}", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--", python, "-c", script,
             str(work), LIMITS.model_dump_json(), str(SUPPORT / "kernel_sinks.py"), query],
            capture_output=True, text=True, env=env, timeout=240, check=False,
        )  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = (EpisodeRecord.model_validate(r) for r in json.loads(done.stdout))
    assert record.usage.memory_cgroup is None
    held = _held(record)
    assert "ALL-HELD" in record.stdout_tail, record.stdout_tail[-2000:]  # the attack ran (a refused sink holds 0)
    assert max(held.values(), default=0) <= DESCRIPTOR_BOUND, (held, record.stdout_tail[-1000:])
