"""The race on PostgreSQL: `arena worker` processes on the shared procrastinate queue, a worker
killed with SIGKILL mid-episode, and a database restart in the middle of a cycle.

The worker test uses its own database on the shared test server (127.0.0.1:5432, created and
dropped here); the restart test starts a throwaway cluster of its own with initdb/pg_ctl on a free
port and never touches the shared server.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import time
from collections import Counter

import pytest

from arena.race.validator_service import Validator
from arena.settings import ArenaSettings
from arena.store import episodes as episode_rows
from arena.store.episodes import EpisodeInfo
from arena.store.models_race import EpisodeStatus
from tests.arena.store.test_store import temporary_database
from tests.support.race_support import (
    PATIENT_AGENTS,
    InBackground,
    ThrowawayCluster,
    assert_each_episode_stored_once,
    race_toml,
    race_world,  # noqa: F401  (fixture)
    seed_store,
    small_race,
    start_worker,
    suite_copy,
    wait_until,
)

EPISODES = 2 * 2 + 2 * 2  # 2 submissions x (2 qualifying problems + 2 race problems), one attempt each


def episodes(store) -> list[EpisodeInfo]:
    with store.transaction() as s:
        return episode_rows.list_episodes(s)


def test_a_worker_killed_mid_episode_leaves_it_to_be_retried_and_stored_once(race_world, tmp_path):  # noqa: F811
    catalog, template = race_world
    race = small_race(suite_copy(template, tmp_path), workers=0, lease_s=4.0, stalled_worker_s=3.0)
    toml = race_toml(race, tmp_path / "race.toml")
    with temporary_database("postgresql", tmp_path) as url:
        store = seed_store(url, PATIENT_AGENTS)
        validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=catalog)
        validator.prepare()  # the suite is in the store before any worker looks for a problem
        workers = [start_worker(name, url, catalog, toml, tmp_path / f"{name}.log") for name in ("w1", "w2")]
        victim, survivor = workers
        try:
            cycle = InBackground(validator)

            def held_by_victim() -> int | None:
                for process, name in ((victim, "w1"), (survivor, "w2")):
                    assert process.poll() is None, (tmp_path / f"{name}.log").read_text()[-3000:]
                mine = [e for e in episodes(store) if e.status is EpisodeStatus.running
                        and (e.worker_id or "").endswith(f":{victim.pid}")]  # fmt: skip
                return mine[0].id if mine else None

            killed_episode = wait_until(held_by_victim, 120, "worker w1 to run an episode")
            os.killpg(victim.pid, signal.SIGKILL)  # mid-episode: its agent is still in its pause
            victim.wait(30)
            report = cycle.result(240)
            assert report.cycle == 1 and report.weights is not None and report.weights.ok
            with store.transaction() as s:
                retried = episode_rows.get_episode(s, killed_episode, with_record=True)
            assert retried.status is EpisodeStatus.done and retried.record is not None
            assert retried.claims >= 2 and retried.worker_id.endswith(f":{survivor.pid}")
            assert_each_episode_stored_once(store, EPISODES)
            survivor.send_signal(signal.SIGTERM)  # a graceful stop: finishes what it runs, then exits 0
            assert survivor.wait(60) == 0, (tmp_path / "w2.log").read_text()[-2000:]
        finally:
            for process in workers:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(30)
            validator.close()


def test_a_database_restart_during_a_cycle_is_survived(race_world, tmp_path, caplog):  # noqa: F811
    catalog, template = race_world
    caplog.set_level(logging.WARNING)
    cluster = ThrowawayCluster()
    try:
        cluster.start()
        url = cluster.create_database(f"arena_{secrets.token_hex(4)}")
        store = seed_store(url, PATIENT_AGENTS)
        race = small_race(suite_copy(template, tmp_path), workers=2, lease_s=6.0, stalled_worker_s=3.0)
        validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=catalog)
        cycle = InBackground(validator)

        def mid_cycle() -> bool:
            counts = Counter(e.status for e in episodes(store))
            return counts[EpisodeStatus.done] >= 1 and counts[EpisodeStatus.running] >= 1

        wait_until(mid_cycle, 120, "an episode done while another runs")
        cluster.stop()  # every connection dies, the running episodes' writes among them
        time.sleep(1.5)
        cluster.start()
        report = cycle.result(240)
        assert report.cycle == 1 and list(report.stages)[-1] == "done"
        assert report.weights is not None and report.weights.ok
        assert_each_episode_stored_once(store, EPISODES)
        # The outage was felt, and waited out rather than failed on.
        assert any("database unavailable" in r.getMessage() for r in caplog.records), caplog.text[-2000:]
        validator.close()
    finally:
        cluster.remove()


@pytest.mark.parametrize("url", ["sqlite:///./x.db", "not a url"])
def test_arena_worker_refuses_anything_but_postgresql(url, tmp_path, monkeypatch):
    import typer
    from typer.testing import CliRunner

    from arena.commands.worker import worker

    monkeypatch.chdir(tmp_path)
    app = typer.Typer()
    app.command()(worker)
    done = CliRunner().invoke(app, ["--database-url", url])
    assert done.exit_code == 2
    assert ("not PostgreSQL" in done.stderr) or ("is not a URL" in done.stderr)
    assert not (tmp_path / "x.db").exists()
