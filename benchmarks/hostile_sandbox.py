"""What each sandbox-level attack gets, next to its bound, with the defences on and off.

    .venv/bin/python benchmarks/hostile_sandbox.py

The agents are tests/support/hostile_sandbox_agents/ at production bounds (EpisodeLimits'
defaults), except the CPU row, whose bound is cut to seconds (the
overshoot past the bound does not depend on the bound's size). Each attack runs
once with the defences on and once off (``RunnerConfig.defences``, benchmark-only);
the /tmp attackers are capped at twice the bound so the "off" run cannot take the
host's memory. Printed per class: the attacker's effect, the bound, the record's
label, and the validator's peak RSS during the run over its RSS before it.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.problems.official import parse_row  # noqa: E402
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig  # noqa: E402
from arena.runner.proxy import UpstreamRegistry  # noqa: E402
from arena.runner.record import EpisodeLimits, EpisodeRecord  # noqa: E402
from arena.shop.index import CatalogIndex  # noqa: E402
from arena.taskpack.build import build_catalog  # noqa: E402
from tests.support.process_memory import peak_since_reset, status_bytes  # noqa: E402

AGENTS = REPO / "tests" / "support" / "hostile_sandbox_agents"
MIB = 1024**2


def label(record: EpisodeRecord) -> str:
    return f"{record.termination.value}/{record.limit_hit or '-'}"


async def attack(runner: EpisodeRunner, agent: str, query: str = "widget") -> EpisodeRecord:
    problem = parse_row({"query": query, "reward": {"product_id": "1", "title": ["x"]}})
    return await runner.run(AgentSource.from_path(AGENTS / f"{agent}.py"), problem, "bench")


async def main_async() -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    build_catalog(work / "catalog", synthetic=200, seed=1)
    catalog = CatalogIndex(work / "catalog")
    production = EpisodeLimits()
    cpu_limits = EpisodeLimits(cpu_s=3, wall_s=30)  # wall: room on a loaded machine to reach the CPU bound
    # Off, nothing stops the CPU burners but the wall clock: 8 s of it show the record's blind spot.
    limits_of = {"production": {True: production, False: production},
                 "cpu": {True: cpu_limits, False: cpu_limits.model_copy(update={"wall_s": 8})}}  # fmt: skip
    runners = {
        (on, name): EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=limits_of[name][on], defences=on))
        for on in (True, False)
        for name in limits_of
    }
    print(f"{'class':<14} {'defences':<9} {'attacker got':<44} {'bound':<22} {'record':<22} validator RSS +")
    rows = [
        ("tmp bytes", "tmp_bytes", str(2 * production.tmp_bytes), "production",
         lambda r: f"{int(r.stdout_tail.split()[1]) / MIB:.0f} MiB written in /tmp",
         f"{production.tmp_bytes / MIB:.0f} MiB"),
        ("tmp inodes", "tmp_inodes", str(2 * production.tmp_inodes), "production",
         lambda r: f"{int(r.stdout_tail.split()[1])} files created", f"{production.tmp_inodes} inodes (root)"),
        ("total CPU", "cpu_spread", "widget", "cpu",
         lambda r: f"6 processes; record says {r.usage.cpu_user_s + r.usage.cpu_system_s:.2f} CPU-s",
         f"{cpu_limits.cpu_s} CPU-s"),
        ("kernel", "kernel_surface", "widget", "production",
         lambda r: f"{r.stdout_tail.count('ALLOWED')} of {r.stdout_tail.count('ALLOWED') + r.stdout_tail.count('REFUSED')} risky calls allowed"
         + (", uid 0 in a userns" if "UIDMAP written" in r.stdout_tail else ""),
         "0 allowed"),
        ("host view", "host_view", "widget", "production",
         lambda r: "host Shmem visible" if "Shmem:                 0 kB" not in r.stdout_tail else "masked meminfo",
         "masked"),
        ("forged label", "label_forger", "raise-memory-error", "production",
         lambda r: "MemoryError printed and raised, no memory used", "named only if measured"),
    ]  # fmt: skip
    for cls, agent, query, limits_name, effect, bound in rows:
        for on in (True, False):
            peak_since_reset()
            before = status_bytes("VmRSS")
            record = await attack(runners[(on, limits_name)], agent, query)
            growth = (peak_since_reset() - before) / MIB
            try:
                got = effect(record)
            except (IndexError, ValueError):
                got = f"(no figure: {record.error})"
            print(f"{cls:<14} {'on' if on else 'off':<9} {got:<44} {bound:<22} {label(record):<22} {growth:.1f} MiB")


def main() -> None:
    asyncio.run(main_async())


if __name__ == "__main__":
    main()
