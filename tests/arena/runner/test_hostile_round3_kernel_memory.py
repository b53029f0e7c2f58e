"""Issue 30, class 5 (kernel memory outside the bounds), round three: sinks the earlier rounds did not try,
in the real bubblewrap sandbox, with the episode's memory cgroup in force where the host offers one.

- ``netlink``: the syscall filter lets AF_NETLINK through (docs/security.md, "Kernel memory": "sockets are
  Unix or netlink only"). NETLINK_USERSOCK lets an unprivileged process send datagrams to another netlink
  socket's port id, so a bound receiver that never reads is a queue of about 200 KiB, like a Unix datagram
  socket (whose lone form the filter refuses). Measured on this host (kernel 6.18, cgroup v1): netlink
  datagrams are not charged to the memory cgroup at all (200 MiB queued in a 48 MiB cgroup, 2 MiB charged),
  so the episode's bound did not hold them and ``limits_hit`` named nothing. Closed: the filter refuses every
  socket family but Unix now;
- ``netlink_ack``: the same with no peer and no USERSOCK: NETLINK_ROUTE requests the kernel refuses, each
  asking for an acknowledgement that echoes the whole request into the sender's own queue;
- ``inotify``: events with 255-character names queued on instances never read (fsnotify charges them to the
  listener's cgroup): contained.

Each attack holds what it queued in several processes at once; the figures asserted on are the kernel's
(``/proc/net/netlink``'s receive queues of the sandbox's own network namespace; FIONREAD on inotify).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.runner.sandbox import bubblewrap_path
from tests.arena.runner.test_hostile_kernel_memory import _host_offers_memory_cgroup

AGENT = Path(__file__).parents[2] / "support" / "hostile_sandbox_agents" / "round3_sinks.py"
EPISODE_MEMORY = 64 * 1024**2
LIMITS = EpisodeLimits(
    wall_s=60, cpu_s=30, memory_bytes=1024**3, processes=32, output_bytes=64 * 1024, episode_memory_bytes=EPISODE_MEMORY
)
# What each sink tries: netlink 4 x 40 MiB (160 MiB, 2.5x the bound; about 200 receivers a process, under
# RLIMIT_NOFILE), inotify 2 x 96 MiB.
ATTACKS = {
    "netlink": {"processes": 4, "mib": 40},
    "netlink_ack": {"processes": 4, "mib": 32},
    "inotify": {"processes": 2, "mib": 96},
}

if bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)


def _problem(spec: dict):
    return parse_row({"query": json.dumps(spec), "reward": {"product_id": "1001", "title": ["widget"]}})


@pytest.fixture(scope="module")
def runs(catalog) -> dict[str, EpisodeRecord]:
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=LIMITS))
    agent = AgentSource.from_path(AGENT)

    async def go() -> list[EpisodeRecord]:
        return await asyncio.gather(
            *(runner.run(agent, _problem({"way": way, **spec}), "heuristic-policy") for way, spec in ATTACKS.items())
        )

    return dict(zip(ATTACKS, asyncio.run(go()), strict=True))


def _lines(record: EpisodeRecord, word: str) -> list[list[str]]:
    return [line.split() for line in record.stdout_tail.splitlines() if line.startswith(word)]


def _held_at_once(record: EpisodeRecord) -> int:
    """What the processes that lived to the end said they held (the kernel's count), together."""
    most: dict[str, int] = {}
    for parts in _lines(record, "QUEUED"):
        most[parts[1]] = max(most.get(parts[1], 0), int(parts[2]))
    survivors = next(iter(_lines(record, "SURVIVED")), ["SURVIVED"])[1:]
    return sum(most.get(pid, 0) for pid in survivors)


def _bounded(record: EpisodeRecord, held: int) -> None:
    named = {hit.limit for hit in record.limits_hit}
    assert _host_offers_memory_cgroup(), "this test is about the memory cgroup's bound: the host offers none"
    assert record.usage.memory_cgroup in ("v1", "v2"), record.usage
    assert held <= EPISODE_MEMORY, (
        f"{held / 2**20:.0f} MiB of kernel memory held at once against a {EPISODE_MEMORY >> 20} MiB bound; "
        f"cgroup peak {record.usage.peak_memory_bytes / 2**20:.0f} MiB; limits_hit {sorted(named)}"
    )


@pytest.mark.parametrize("way", ["netlink", "netlink_ack"])
def test_netlink_sockets_are_refused_so_nothing_queues_there(runs, way):
    """Closed: netlink datagrams (172 MiB) and the kernel's acknowledgements of refused requests (120 MiB) were
    held against a 64 MiB episode bound, charged to no memory cgroup; the syscall filter refuses every family but
    Unix now (arena/runner/syscall_filter.py), so the attack's first socket fails and nothing is queued."""
    record = runs[way]
    assert "NETLINK-REFUSED" in record.stdout_tail, record.stdout_tail[-2000:]
    assert all(int(line[2]) == 0 for line in _lines(record, "QUEUED")), _lines(record, "QUEUED")
    kernel = int(next(iter(_lines(record, "KERNEL-HELD")), ["KERNEL-HELD", "0"])[1])
    assert kernel <= EPISODE_MEMORY, kernel


def test_inotify_queues_are_charged_to_the_episode_and_bounded(runs):
    record = runs["inotify"]
    assert _lines(record, "QUEUED"), record.stdout_tail[-2000:]  # the attack ran
    held = _held_at_once(record)
    _bounded(record, held)
    # Measured: 17 MiB queued by one process, then the cgroup (at its bound) killed it, and the record says so.
    if record.usage.peak_memory_bytes >= EPISODE_MEMORY:
        assert "episode_memory_bytes" in {hit.limit for hit in record.limits_hit}, record.limits_hit
