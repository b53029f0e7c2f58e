"""Faults recover fast and by themselves, on a throwaway PostgreSQL cluster of this module's own.

- A worker SIGKILLed mid-episode: the dispatcher's stall check releases its lease at once (the
  episode runs again on the other worker within seconds, not after ``lease_s``), prunes its
  ``procrastinate_workers`` row, and the next sweep removes its episode folder (agent source and all).
- Transient database errors (read-only, admin shutdown, connection failure, serialization failure,
  deadlock) are retryable, told from real errors on real server errors; a 20 s read-only window
  during ``arena validator run --once`` loses no finished result and the cycle finishes.
- A finished result held on disk survives a worker restart and is stored once the store takes it.
- After a PostgreSQL restart the job-notification listener is back: with polling set to minutes,
  a job queued after the restart is picked up within seconds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from procrastinate import App
from procrastinate import exceptions as procrastinate_exceptions
from sqlalchemy import create_engine, select, text

from arena.race.episode_jobs import store_held_results
from arena.race.held_results import HeldResult, HeldResults
from arena.race.queues import EPISODES_QUEUE, QueueConnector
from arena.race.settings import RaceSettings
from arena.race.validator_service import Validator
from arena.race.workers import queue_worker, run_workers
from arena.runner.workdirs import WorkdirError, new_episode_folder, sweep
from arena.settings import ArenaSettings
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import resolve_url
from arena.store import suites as suite_rows
from arena.store.episodes import EpisodeInfo, EpisodeKey
from arena.store.migrate import upgrade_database
from arena.store.models import ProblemRow
from arena.store.models_race import EpisodeStage, EpisodeStatus
from arena.store.resilience import is_transient
from tests.support.race_support import (
    PATIENT_AGENTS,
    InBackground,
    ThrowawayCluster,
    _free_port,
    assert_each_episode_stored_once,
    race_toml,
    race_world,  # noqa: F401  (fixture)
    seed_store,
    small_race,
    start_worker,
    subprocess_env,
    suite_copy,
    wait_until,
)


@pytest.fixture(scope="module")
def cluster():
    running = ThrowawayCluster()
    try:
        running.start()
        yield running
    finally:
        running.remove()


@pytest.fixture
def episodes_dir():
    """A runner's episodes directory short enough for the sockets below it (a pytest tmp_path is not)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-ep-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def fresh_database(cluster: ThrowawayCluster) -> str:
    return cluster.create_database(f"arena_{secrets.token_hex(4)}")


def episodes(store) -> list[EpisodeInfo]:
    with store.transaction() as s:
        return episode_rows.list_episodes(s)


# --- transient errors ----------------------------------------------------------------------------------


def _error_of(conninfo: str, *statements: str) -> psycopg.Error:
    with psycopg.connect(conninfo, autocommit=True) as connection:
        try:
            for statement in statements:
                connection.execute(statement)
        except psycopg.Error as exc:
            return exc
    raise AssertionError(f"no error from {statements}")


async def _deadlock(conninfo: str) -> psycopg.Error:
    a = await psycopg.AsyncConnection.connect(conninfo)
    b = await psycopg.AsyncConnection.connect(conninfo)
    async with a, b:
        for connection in (a, b):
            await connection.execute("SET deadlock_timeout = '100ms'")
        await a.execute("UPDATE faults SET n = n + 1 WHERE id = 1")
        await b.execute("UPDATE faults SET n = n + 1 WHERE id = 2")
        results = await asyncio.gather(
            a.execute("UPDATE faults SET n = n + 1 WHERE id = 2"),
            b.execute("UPDATE faults SET n = n + 1 WHERE id = 1"),
            return_exceptions=True,
        )
    errors = [r for r in results if isinstance(r, psycopg.Error)]
    assert len(errors) == 1, results
    return errors[0]


def _serialization_failure(conninfo: str) -> psycopg.Error:
    a, b = psycopg.connect(conninfo), psycopg.connect(conninfo)
    with a, b:
        for connection in (a, b):
            connection.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
            connection.execute("SELECT sum(n) FROM faults").fetchone()
        a.execute("UPDATE faults SET n = n + 1 WHERE id = 1")
        b.execute("UPDATE faults SET n = n + 1 WHERE id = 2")
        a.commit()
        try:
            b.commit()
        except psycopg.Error as exc:
            return exc
    raise AssertionError("no serialization failure")


def test_transient_database_errors_are_told_from_real_ones_on_real_server_errors(cluster):
    conninfo = fresh_database(cluster)
    with psycopg.connect(conninfo, autocommit=True) as setup:
        setup.execute("CREATE TABLE faults (id int PRIMARY KEY, n int NOT NULL)")
        setup.execute("INSERT INTO faults VALUES (1, 0), (2, 0)")
    read_only = _error_of(conninfo, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", "DELETE FROM faults")
    with psycopg.connect(conninfo, autocommit=True) as victim, psycopg.connect(conninfo, autocommit=True) as admin:
        pid = victim.execute("SELECT pg_backend_pid()").fetchone()[0]
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        time.sleep(0.2)
        try:
            victim.execute("SELECT 1")
            raise AssertionError("the terminated session still answers")
        except psycopg.Error as exc:
            shutdown = exc
    try:
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{_free_port()}/postgres", connect_timeout=5)
        raise AssertionError("connected to a closed port")
    except psycopg.Error as exc:
        refused = exc
    deadlock = asyncio.run(_deadlock(conninfo))
    serialization = _serialization_failure(conninfo)

    transient = {
        "25006": read_only, "57P01": shutdown, "40P01": deadlock, "40001": serialization,
    }  # fmt: skip
    for sqlstate, exc in transient.items():
        assert exc.sqlstate == sqlstate, (sqlstate, exc)
        assert is_transient(exc), exc
    assert refused.sqlstate is None and is_transient(refused)

    real = [
        _error_of(conninfo, "INSERT INTO faults VALUES (1, 0)"),  # 23505 unique violation
        _error_of(conninfo, "SELECT * FROM no_such_table"),  # 42P01
        _error_of(conninfo, "SELECT 1/0"),  # 22012
    ]
    assert not any(is_transient(exc) for exc in real), real

    # Through SQLAlchemy (the store) and procrastinate (the queue), as the race meets them.
    engine = create_engine(resolve_url(conninfo))
    with engine.connect() as connection:
        connection.exec_driver_sql("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        connection.commit()
        with pytest.raises(Exception) as wrapped:
            connection.execute(text("DELETE FROM faults"))
    engine.dispose()
    assert type(wrapped.value).__module__.startswith("sqlalchemy") and is_transient(wrapped.value)
    for cause, expected in ((read_only, True), (real[0], False)):
        try:
            raise procrastinate_exceptions.ConnectorException("queue call failed") from cause
        except procrastinate_exceptions.ConnectorException as exc:
            assert is_transient(exc) is expected
    assert is_transient(sqlite3.OperationalError("database is locked"))
    assert not is_transient(sqlite3.OperationalError("no such table: episodes"))


# --- held results --------------------------------------------------------------------------------------


def scheduled_episodes(url: str, template: Path, folder: Path, n: int = 2):
    """A store at ``url`` with one submission, the suite, cycle 1 and ``n`` pending episodes of it."""
    store = seed_store(url, PATIENT_AGENTS[:1])
    with store.transaction() as s:
        suite_id = suite_rows.import_suite(s, suite_copy(template, folder)).suite_id
        problem_id = s.scalars(select(ProblemRow.problem_id).where(ProblemRow.suite_id == suite_id)).first()
        cycle_rows.start_cycle(s, 1, suite_id)
        keys = [
            EpisodeKey(
                cycle=1,
                stage=EpisodeStage.qualifying,
                submission_id=1,
                suite_id=suite_id,
                problem_id=problem_id,
                attempt=attempt,
            )  # fmt: skip
            for attempt in range(n)
        ]
        return store, problem_id, episode_rows.ensure_episodes(s, keys)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_lease_names_its_job_so_a_dead_workers_leases_go_at_once_and_a_retried_job_gets_its_own(
    backend,
    race_world,  # noqa: F811
    cluster,
    tmp_path,
):
    _catalog, template = race_world
    url = fresh_database(cluster) if backend == "postgresql" else f"sqlite:///{tmp_path / 'leases.db'}"
    store, _problem, (dead, other, retried) = scheduled_episodes(url, template, tmp_path, n=3)
    with store.transaction() as s:
        assert episode_rows.claim(s, dead.id, "host:1", 600.0, job_id=11) is not None
        assert episode_rows.claim(s, other.id, "host:2", 600.0, job_id=12) is not None
        assert episode_rows.claim(s, retried.id, "host:2", 600.0, job_id=13) is not None
    with store.transaction() as s:
        # Leased to a live job: another job cannot take it; the same job, tried again, can.
        assert episode_rows.claim(s, retried.id, "host:3", 600.0, job_id=14) is None
        again = episode_rows.claim(s, retried.id, "host:2", 600.0, job_id=13)
        assert again is not None and again.claims == 2 and again.lease_job_id == 13
        # Job 11's worker is dead: its lease goes now; job 12's stays; a job of no lease changes nothing.
        assert episode_rows.release_leases_of_jobs(s, [11, 99], reason="its worker died") == [dead.id]
        assert episode_rows.release_leases_of_jobs(s, [11], reason="its worker died") == []
    with store.transaction() as s:
        released, kept = episode_rows.get_episode(s, dead.id), episode_rows.get_episode(s, other.id)
        assert released.status is EpisodeStatus.pending and released.lease_job_id is None
        assert released.worker_id is None and released.error == "its worker died"
        assert kept.status is EpisodeStatus.running and kept.lease_job_id == 12
        assert episode_rows.claim(s, dead.id, "host:2", 600.0, job_id=15).claims == 2  # runs again at once
    store.dispose()


def test_a_held_result_survives_a_worker_restart_and_is_stored_once_the_store_takes_it(
    race_world,  # noqa: F811
    cluster,
    tmp_path,
):
    _catalog, template = race_world
    store, problem_id, (first, second) = scheduled_episodes(fresh_database(cluster), template, tmp_path)
    with store.transaction() as s:
        episode_rows.claim(s, first.id, "host:1", 60.0, job_id=7)
    record = {"episode_id": "e-held", "termination": "returned"}
    outcome = {"success": True, "rule": 1.0, "problem_id": problem_id}
    before = HeldResults.for_store(tmp_path / "held", store.url)
    before.keep(HeldResult(episode_id=first.id, key=first.key, record=record, outcome=outcome,
                           held_at=datetime.now(UTC)))  # fmt: skip
    # A result whose episode id now names another episode (a recreated database) is never stored there.
    before.keep(HeldResult(episode_id=second.id, key=first.key, record=record, outcome=outcome,
                           held_at=datetime.now(UTC)))  # fmt: skip
    del before  # the worker dies: only the disk remembers

    after = HeldResults.for_store(tmp_path / "held", store.url)
    assert after.waiting() == [first.id, second.id]
    assert asyncio.run(store_held_results(store, after)) == [first.id]
    with store.transaction() as s:
        stored = episode_rows.get_episode(s, first.id, with_record=True)
        untouched = episode_rows.get_episode(s, second.id)
    assert stored.status is EpisodeStatus.done and stored.record == record and stored.success is True
    assert stored.claims == 1  # stored from the held copy, never run again
    assert untouched.status is EpisodeStatus.pending
    assert after.waiting() == [] and sorted(p.name for p in after.folder.iterdir()) == [
        f"episode-{second.id}.json.rejected"
    ]
    assert asyncio.run(store_held_results(store, after)) == []  # nothing twice
    store.dispose()


# --- episode folders -----------------------------------------------------------------------------------

_OWNER = """
import sys, time
from pathlib import Path
from arena.runner.workdirs import new_episode_folder
folder = new_episode_folder(Path(sys.argv[1]))
(folder / "agent").mkdir()
(folder / "agent" / "agent.py").write_text("embargoed source")
print(folder, flush=True)
time.sleep(120)
"""


def test_the_sweep_removes_the_episode_folders_of_dead_runners_and_only_theirs(episodes_dir, tmp_path):
    root = episodes_dir / "episodes"
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER, str(root)], stdout=subprocess.PIPE, text=True, env=subprocess_env()
    )
    try:
        theirs = Path(owner.stdout.readline().strip())
        mine = new_episode_folder(root)
        assert (theirs / "agent" / "agent.py").is_file() and theirs.parent.parent == root
        assert sweep(root) == []  # both owners alive
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
        assert sweep(root) == [theirs.parent]
        assert not theirs.parent.exists() and mine.is_dir()
        assert sweep(root) == []
    finally:
        if owner.poll() is None:
            owner.kill()
        owner.wait(30)
    loose = episodes_dir / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)  # another user could have made it in a shared /tmp
    with pytest.raises(WorkdirError, match="0700"):
        sweep(loose)
    with pytest.raises(WorkdirError, match="too long for the episodes' sockets"):
        sweep(tmp_path / ("x" * 60))


# --- a worker killed mid-episode -----------------------------------------------------------------------


def _queue_worker_of(store, episode_id: int) -> int:
    with store.engine.connect() as connection:
        return connection.execute(
            text("SELECT worker_id FROM procrastinate_jobs WHERE status = 'doing' AND (args->>'episode_id')::int = :e"),
            {"e": episode_id},
        ).scalar_one()


def _queue_workers(store) -> set[int]:
    with store.engine.connect() as connection:
        return set(connection.execute(text("SELECT id FROM procrastinate_workers")).scalars())


def test_a_killed_worker_is_replaced_within_seconds_and_leaves_no_trace(race_world, cluster, tmp_path, caplog,  # noqa: F811
                                                                         episodes_dir):  # fmt: skip
    catalog, template = race_world
    caplog.set_level(logging.WARNING, logger="arena.race.dead_workers")
    lease_s = 120.0  # the old recovery path (the lease lapsing) cannot explain a retry within the test
    race = small_race(
        suite_copy(template, tmp_path), workers=0, lease_s=lease_s, stalled_worker_s=3.0, qualifying_size=1,
        draw_size=1, housekeeping_s=1.0, held_results_dir=tmp_path / "held",
    )  # fmt: skip
    toml = race_toml(race, tmp_path / "race.toml")
    work = episodes_dir
    url = fresh_database(cluster)
    store = seed_store(url, PATIENT_AGENTS)
    validator = Validator(ArenaSettings(), race=race, store=store, catalog_path=catalog)
    validator.prepare()
    env = {"ARENA_RUNNER__WORK_DIR": str(work)}
    workers = [start_worker(name, url, catalog, toml, tmp_path / f"{name}.log", **env) for name in ("w1", "w2")]
    victim, survivor = workers
    try:
        cycle = InBackground(validator)

        def victim_mid_episode() -> tuple[int, Path] | None:
            for process, name in ((victim, "w1"), (survivor, "w2")):
                assert process.poll() is None, (tmp_path / f"{name}.log").read_text()[-3000:]
            running = [e for e in episodes(store) if e.status is EpisodeStatus.running
                       and (e.worker_id or "").endswith(f":{victim.pid}")]  # fmt: skip
            sources = list(work.glob(f"owner-{victim.pid}-*/episode-*/agent/agent.py"))
            return (running[0].id, sources[0]) if running and sources else None

        killed_episode, source = wait_until(victim_mid_episode, 120, "worker w1 to run an episode")
        dead_worker = _queue_worker_of(store, killed_episode)
        os.killpg(victim.pid, signal.SIGKILL)
        killed_at = time.time()
        victim.wait(30)
        report = cycle.result(240)
        assert report.cycle == 1 and report.weights is not None and report.weights.ok

        # 1. The stall check released the dead worker's lease, and the episode ran again at once.
        recoveries = [r for r in caplog.records if killed_episode in getattr(r, "released_episodes", [])]
        assert len(recoveries) == 1, caplog.text[-3000:]
        released_at = recoveries[0].created
        with store.transaction() as s:
            retried = episode_rows.get_episode(s, killed_episode, with_record=True)
        assert retried.status is EpisodeStatus.done and retried.record is not None
        assert retried.claims == 2 and retried.worker_id.endswith(f":{survivor.pid}")
        restarted_at = retried.started_at.timestamp()  # the second claim
        assert killed_at < released_at < restarted_at < killed_at + lease_s
        assert restarted_at - released_at < 10.0, (released_at, restarted_at)
        assert_each_episode_stored_once(store, expected=4)

        # 5. The same stall check pruned the dead worker's row; the survivor's rows stay.
        assert dead_worker in recoveries[0].pruned_workers and dead_worker not in _queue_workers(store)
        assert len(_queue_workers(store)) == 2

        # 4. The survivor's next sweep removed the dead worker's episode folder, source and all.
        wait_until(lambda: not source.parent.parent.parent.exists(), 30, "the sweep of w1's episode folders")
        assert not list(work.glob(f"owner-{victim.pid}-*"))
        assert "removed 1 episode folder owner(s) left by dead runners" in (tmp_path / "w2.log").read_text()
        survivor.send_signal(signal.SIGTERM)
        assert survivor.wait(60) == 0, (tmp_path / "w2.log").read_text()[-2000:]
        assert not list(work.glob("owner-*")), list(work.iterdir())  # a clean exit removes its own folder
    finally:
        for process in workers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)
        validator.close()


# --- a read-only window --------------------------------------------------------------------------------

READ_ONLY_S = 20.0


def test_a_read_only_window_loses_no_finished_result_and_once_finishes_the_cycle(race_world, cluster, tmp_path):  # noqa: F811
    catalog, template = race_world
    held_dir = tmp_path / "held"
    race = small_race(
        suite_copy(template, tmp_path), workers=2, lease_s=30.0, stalled_worker_s=3.0, qualifying_size=1,
        draw_size=1, held_results_dir=held_dir,
    )  # fmt: skip
    toml = race_toml(race, tmp_path / "race.toml")
    url = fresh_database(cluster)
    store = seed_store(url, PATIENT_AGENTS)
    command = [
        sys.executable, "-m", "arena.cli", "validator", "run", "--once", "--local", "--database-url", url,
        "--race-config", str(toml), "--catalog", str(catalog),
    ]  # fmt: skip
    log = tmp_path / "validator.log"
    with log.open("w") as out:
        validator = subprocess.Popen(command, env=subprocess_env(ARENA_LOG_LEVEL="WARNING"), stdout=out,
                                     stderr=subprocess.STDOUT, cwd=tmp_path)  # fmt: skip
    seen_held: set[str] = set()
    try:

        def an_episode_running() -> bool:
            assert validator.poll() is None, log.read_text()[-3000:]
            return any(e.status is EpisodeStatus.running for e in episodes(store))

        wait_until(an_episode_running, 120, "an episode to run")
        cluster.read_only(True)
        try:
            ends = time.monotonic() + READ_ONLY_S
            while time.monotonic() < ends:
                seen_held |= {p.name for p in held_dir.glob("*/episode-*.json")}
                time.sleep(0.2)
        finally:
            cluster.read_only(False)
        assert validator.wait(240) == 0, log.read_text()[-3000:]
    finally:
        if validator.poll() is None:
            validator.kill()
            validator.wait(30)
    output = log.read_text()
    assert "ReadOnlySqlTransaction" in output, output[-3000:]  # the window was felt...
    assert seen_held, output[-3000:]  # ...an episode finished inside it and its result was held...
    assert not list(held_dir.glob("*/episode-*")), list(held_dir.rglob("*"))  # ...and stored after it
    assert_each_episode_stored_once(store, expected=4)
    assert all(e.claims == 1 for e in episodes(store))  # no finished result thrown away and run again
    store.dispose()


# --- the job-notification listener after a restart -----------------------------------------------------


class Pickups:
    """When each probe job was queued and when a worker started it."""

    def __init__(self) -> None:
        self.queued: dict[int, float] = {}
        self.started: dict[int, float] = {}

    def latency(self, probe: int) -> float:
        return self.started[probe] - self.queued[probe]


# Polling every 10 minutes: only a notification explains a pickup within seconds.
NOTIFIED_ONLY = RaceSettings(job_poll_s=600.0, stalled_worker_s=3.0)


def probe_queue(cluster: ThrowawayCluster, pickups: Pickups):
    """A queue on a fresh database, and its "probe" task, which records when a worker started it."""
    url = fresh_database(cluster)
    upgrade_database(url)  # the queue's schema
    app = App(connector=QueueConnector(url))

    @app.task(name="probe", queue=EPISODES_QUEUE)
    async def probe(n: int) -> None:
        pickups.started[n] = time.monotonic()

    return app, probe


def test_the_job_listener_comes_back_after_a_postgresql_restart(cluster, caplog):
    caplog.set_level(logging.WARNING, logger="arena.race.queue_worker")
    pickups = Pickups()
    app, probe = probe_queue(cluster, pickups)
    race = NOTIFIED_ONLY

    async def scenario() -> None:
        stop = asyncio.Event()
        async with app.open_async():
            workers = asyncio.create_task(run_workers(app, race, concurrency=1, name="probe", stop=stop))

            async def picked(n: int, timeout_s: float = 30.0) -> float:
                pickups.queued[n] = time.monotonic()
                await probe.defer_async(n=n)
                deadline = time.monotonic() + timeout_s
                while n not in pickups.started:
                    assert time.monotonic() < deadline, f"probe {n} not picked up within {timeout_s:.0f}s"
                    await asyncio.sleep(0.02)
                return pickups.latency(n)

            await asyncio.sleep(1.0)  # the workers start and LISTEN
            before = await picked(0)
            await asyncio.to_thread(cluster.stop)  # fast: sessions are told, the listener's among them
            await asyncio.sleep(1.5)  # the listener's first reconnect finds nobody
            await asyncio.to_thread(cluster.start)
            await picked(1)  # queued while the listener may still be reconnecting: fetched once it LISTENs
            after = await picked(2)  # the worker idle again: only a notification can wake it
            stop.set()
            await workers
        assert after < before + 5.0, (before, after)

    asyncio.run(scenario())
    assert "listening for job notifications again" in caplog.text, caplog.text[-3000:]
    # the heartbeat rode the outage out too: nothing stopped the workers
    assert "stopping the worker to restart it" not in caplog.text


def test_a_job_announced_while_the_worker_fetches_is_fetched_at_once(cluster):
    """procrastinate clears a worker's wake-up after every fetch. A job committed after a fetch's snapshot,
    and announced before that fetch returned, used to wait for the next poll (here ten minutes)."""
    pickups = Pickups()
    app, probe = probe_queue(cluster, pickups)
    race = NOTIFIED_ONLY

    async def scenario() -> None:
        async with app.open_async():
            worker = queue_worker(app, race, [EPISODES_QUEUE], 1, "probe")
            fetch_job = app.job_manager.fetch_job
            raced = asyncio.Event()

            async def fetch_meeting_a_new_job(**kwargs):
                job = await fetch_job(**kwargs)
                if job is None and worker.listening.is_set() and not raced.is_set():
                    raced.set()
                    heard = worker.notifications
                    pickups.queued[1] = time.monotonic()
                    await probe.defer_async(n=1)  # after this fetch's snapshot...
                    async with asyncio.timeout(20):
                        while worker.notifications == heard:  # ...and announced before the fetch returns
                            await asyncio.sleep(0.01)
                return job

            app.job_manager.fetch_job = fetch_meeting_a_new_job
            running = asyncio.create_task(worker.run())
            try:
                async with asyncio.timeout(30):
                    await raced.wait()
                    while 1 not in pickups.started:
                        await asyncio.sleep(0.02)
            finally:
                worker.stop()
                await running

    asyncio.run(scenario())
    assert pickups.latency(1) < 20.0, pickups.latency(1)
