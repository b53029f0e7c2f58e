"""Recovery from faults, next to a clean cycle, in one run.

    .venv/bin/python benchmarks/faults.py                 # every fault
    .venv/bin/python benchmarks/faults.py --only kill,restart

One throwaway PostgreSQL cluster (initdb/pg_ctl on a free port, as tests/arena/race/test_faults.py), a fresh
database per run, the race tests' world (a 2,000-product catalog, generated problems) and a race of
2 submissions x (1 qualifying + 1 race problem) whose agents pause 2 s, in real bubblewrap sandboxes.

- ``clean``: the cycle with two `arena worker` processes, no fault: the baseline.
- ``kill``: the same, one worker SIGKILLed mid-episode. Recovery: kill -> the episode claimed again by
  the other worker (before this change the retry waited for ``lease_s``, 120 s by default; here
  ``stalled_worker_s`` = 3 s).
- ``read-only``: a 20 s ``default_transaction_read_only`` window while episodes run (in-process
  workers). Recovery: window end -> every held result stored; results run twice (lost) must be 0.
- ``restart``: PostgreSQL stopped (``-m fast``) for 1.5 s. Job pickup latency (queued -> started) of an
  idle worker polling every 10 minutes, before and after; and the time from the server being back to
  the listener LISTENing again. Before this change the pickup after a restart was the polling interval.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from procrastinate import App  # noqa: E402

from arena.race.queues import EPISODES_QUEUE, QueueConnector  # noqa: E402
from arena.race.settings import RaceSettings  # noqa: E402
from arena.race.validator_service import Validator  # noqa: E402
from arena.race.workers import run_workers  # noqa: E402
from arena.settings import ArenaSettings  # noqa: E402
from arena.store import episodes as episode_rows  # noqa: E402
from arena.store.episodes import EpisodeInfo  # noqa: E402
from arena.store.migrate import upgrade_database  # noqa: E402
from arena.store.models_race import EpisodeStatus  # noqa: E402
from tests.support.race_support import (  # noqa: E402
    InBackground,
    ThrowawayCluster,
    _world,
    agent_code,
    race_toml,
    seed_store,
    small_race,
    start_worker,
    suite_copy,
    wait_until,
)

AGENTS = [
    ("miner-dialogue", agent_code("dialogue", pause_s=2.0)),
    ("miner-first-hit", agent_code("first_hit", pause_s=2.0)),
]
READ_ONLY_S = 20.0


def _episodes(store) -> list[EpisodeInfo]:
    with store.transaction() as s:
        return episode_rows.list_episodes(s)


class Bench:
    def __init__(self, cluster: ThrowawayCluster, folder: Path) -> None:
        self.cluster, self.folder = cluster, folder
        self.catalog, self.template = _world(str(folder))
        self.episodes_dir = Path(tempfile.mkdtemp(prefix="arena-ep-", dir="/tmp"))

    def _race(self, run: Path, **overrides):
        values = dict(workers=0, lease_s=120.0, stalled_worker_s=3.0, qualifying_size=1, draw_size=1,
                      housekeeping_s=1.0, held_results_dir=run / "held")  # fmt: skip
        return small_race(suite_copy(self.template, run), **(values | overrides))

    def _fresh(self, name: str):
        run = self.folder / name
        run.mkdir()
        url = self.cluster.create_database(f"arena_{secrets.token_hex(4)}")
        return run, url, seed_store(url, AGENTS)

    def with_workers(self, name: str, kill: bool) -> dict:
        run, url, store = self._fresh(name)
        race = self._race(run)
        toml = race_toml(race, run / "race.toml")
        validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=self.catalog)
        validator.prepare()
        env = {"ARENA_RUNNER__WORK_DIR": str(self.episodes_dir)}
        workers = [start_worker(n, url, self.catalog, toml, run / f"{n}.log", **env) for n in ("w1", "w2")]
        wait_until(lambda: self._registered(store) >= 4, 120, "both workers to register")
        figures = {}
        try:
            started = time.monotonic()
            cycle = InBackground(validator)
            if kill:
                victim = workers[0]

                def held_by_victim():
                    mine = [e for e in _episodes(store) if e.status is EpisodeStatus.running
                            and (e.worker_id or "").endswith(f":{victim.pid}")]  # fmt: skip
                    return mine[0].id if mine else None

                episode = wait_until(held_by_victim, 120, "w1 to run an episode", poll_s=0.05)
                os.killpg(victim.pid, signal.SIGKILL)
                killed = time.monotonic()
                victim.wait(30)

                def claimed_again():
                    with store.transaction() as s:
                        return episode_rows.get_episode(s, episode).claims >= 2

                wait_until(claimed_again, 300, "the killed episode to run again", poll_s=0.05)
                figures["recovery_s"] = time.monotonic() - killed
            cycle.result(600)
            figures["cycle_s"] = time.monotonic() - started
        finally:
            for process in workers:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM if process is workers[1] else signal.SIGKILL)
                    process.wait(60)
            validator.close()
        return figures

    @staticmethod
    def _registered(store) -> int:
        from sqlalchemy import text

        with store.engine.connect() as connection:
            return connection.execute(text("SELECT count(*) FROM procrastinate_workers")).scalar_one()

    def read_only(self) -> dict:
        run, url, store = self._fresh("read-only")
        race = self._race(run, workers=2)
        validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=self.catalog)
        started = time.monotonic()
        cycle = InBackground(validator)
        wait_until(lambda: any(e.status is EpisodeStatus.running for e in _episodes(store)), 120, "an episode")
        self.cluster.read_only(True)
        held_during = set()
        try:
            ends = time.monotonic() + READ_ONLY_S
            while time.monotonic() < ends:
                held_during |= {p.name for p in (run / "held").glob("*/episode-*.json")}
                time.sleep(0.05)
        finally:
            self.cluster.read_only(False)
        back = time.monotonic()
        wait_until(lambda: not list((run / "held").glob("*/episode-*.json")), 300, "held results stored", 0.05)
        stored = time.monotonic() - back
        cycle.result(600)
        figures = {"cycle_s": time.monotonic() - started, "recovery_s": stored, "held": len(held_during),
                   "run_twice": sum(e.claims > 1 for e in _episodes(store))}  # fmt: skip
        validator.close()
        return figures

    def restart(self, probes: int = 5) -> dict:
        url = self.cluster.create_database(f"arena_{secrets.token_hex(4)}")
        upgrade_database(url)
        app = App(connector=QueueConnector(url))
        started: dict[int, float] = {}

        @app.task(name="probe", queue=EPISODES_QUEUE)
        async def probe(n: int) -> None:
            started[n] = time.monotonic()

        async def latency(n: int) -> float:
            queued = time.monotonic()
            await probe.defer_async(n=n)
            while n not in started:
                await asyncio.sleep(0.002)
                if time.monotonic() - queued > 120:
                    return float("inf")
            return started[n] - queued

        async def scenario() -> dict:
            stop = asyncio.Event()
            async with app.open_async():
                race = RaceSettings(job_poll_s=600.0, stalled_worker_s=3.0)
                workers = asyncio.create_task(run_workers(app, race, concurrency=1, name="bench", stop=stop))
                await asyncio.sleep(1.0)
                before = [await latency(n) for n in range(probes)]
                await asyncio.to_thread(self.cluster.stop)
                await asyncio.sleep(1.5)
                await asyncio.to_thread(self.cluster.start)
                back = time.monotonic()
                first = await latency(100)  # queued while the listener reconnects: fetched once it LISTENs
                listener_back_s = time.monotonic() - back
                after = [await latency(200 + n) for n in range(probes)]
                stop.set()
                await workers
            return {"before_ms": 1000 * statistics.median(before), "after_ms": 1000 * statistics.median(after),
                    "first_after_s": first, "recovery_s": listener_back_s}  # fmt: skip

        return asyncio.run(scenario())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="clean,kill,read-only,restart")
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    from arena.runner.sandbox import bubblewrap_path

    if bubblewrap_path() is None:
        sys.exit("bubblewrap is needed (apt-get install bubblewrap)")
    folder = Path(tempfile.mkdtemp(prefix="arena-faults-"))
    cluster = ThrowawayCluster()
    lines = []
    try:
        cluster.start()
        bench = Bench(cluster, folder)
        clean = bench.with_workers("clean", kill=False) if wanted & {"clean", "kill"} else None
        if clean:
            lines.append(("clean cycle (2 workers)", "-", f"{clean['cycle_s']:.1f} s"))
        if "kill" in wanted:
            k = bench.with_workers("kill", kill=True)
            lines.append(("worker SIGKILL mid-episode", f"{k['recovery_s']:.1f} s kill -> running again "
                          f"(was lease_s = 120 s)", f"{k['cycle_s']:.1f} s"))  # fmt: skip
        if "read-only" in wanted:
            r = bench.read_only()
            lines.append((f"{READ_ONLY_S:.0f} s read-only window", f"{r['recovery_s']:.1f} s window end -> "
                          f"{r['held']} held result(s) stored; {r['run_twice']} run twice", f"{r['cycle_s']:.1f} s"))  # fmt: skip
        if "restart" in wanted:
            t = bench.restart()
            lines.append(("PostgreSQL restart (-m fast, 1.5 s down)",
                          f"listener back {t['recovery_s']:.2f} s after start; pickup {t['before_ms']:.0f} ms "
                          f"before / {t['after_ms']:.0f} ms after (polling: 600 s)", "-"))  # fmt: skip
    finally:
        cluster.remove()
        shutil.rmtree(folder, ignore_errors=True)
        if "bench" in locals():
            shutil.rmtree(bench.episodes_dir, ignore_errors=True)
    width = max(len(name) for name, _, _ in lines)
    print(f"{'fault':<{width}}  {'cycle':>8}  recovery")
    for name, recovery, cycle in lines:
        print(f"{name:<{width}}  {cycle:>8}  {recovery}")


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
