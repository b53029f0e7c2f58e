"""The trajectory store on a real PostgreSQL server and a real SQLite file.

PostgreSQL: the server at ARENA_TEST_POSTGRES_URL (default 127.0.0.1:5432, database
``test``, used only to create and drop throwaway ``arena_test_*`` databases).
Without a reachable server the PostgreSQL cases are skipped, or fail when
ARENA_REQUIRE_POSTGRES=1. One migrated database per backend is shared by the
module's repository tests; each test uses its own hotkeys, cycles and episodes.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import secrets
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, inspect, select, text
from sqlalchemy.exc import IntegrityError, OperationalError

from arena.problems.draw import record_draw
from arena.problems.ledger import EventKind
from arena.problems.model import Difficulty, Intent, Problem, ProductReward
from arena.problems.partitions import PartitionName, PartitionPlan
from arena.problems.suites import Suite, write_suite
from arena.scoring import ScoreMode, score_problem
from arena.store import Store, StoreError, metadata, open_store, resolve_url, safe_url
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store import nonces as nonce_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.episodes import EpisodeInfo, EpisodeKey
from arena.store.judgments import JudgmentResult
from arena.store.migrate import current_revision, downgrade_database, head_revision, include_name, upgrade_database
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, Episode, EpisodeStage, EpisodeStatus, JudgmentStatus
from arena.store.nonces import DatabaseNonceStore
from arena.store.standings import StandingIn
from arena.store.submissions import NewSubmission

ADMIN_URL = os.environ.get("ARENA_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
STORE_TABLES = {t.name for t in metadata.sorted_tables}


# --- databases -----------------------------------------------------------------------------------


def postgres_admin():
    engine = create_engine(resolve_url(ADMIN_URL), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect():
            pass
    except OperationalError as exc:
        engine.dispose()
        reason = f"PostgreSQL not reachable at {safe_url(ADMIN_URL)} ({str(exc.orig).splitlines()[0]})"
        if os.environ.get("ARENA_REQUIRE_POSTGRES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return engine


@contextmanager
def temporary_database(backend: str, folder: Path) -> Iterator[str]:
    """A fresh, empty database URL for ``backend``, removed afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / f'arena-{secrets.token_hex(4)}.db'}"
        return
    admin = postgres_admin()
    name = f"arena_test_{secrets.token_hex(6)}"
    with admin.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield resolve_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@contextmanager
def migrated_store(backend: str, folder: Path) -> Iterator[Store]:
    with temporary_database(backend, folder) as url:
        upgrade_database(url)
        store = open_store(url)
        try:
            yield store
        finally:
            store.dispose()


BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="module", params=BACKENDS)
def store(request, tmp_path_factory) -> Iterator[Store]:
    with migrated_store(request.param, tmp_path_factory.mktemp("store")) as opened:
        yield opened


# --- a real suite ---------------------------------------------------------------------------------


def make_suite(out: Path, tag: str, clusters: int = 16) -> Suite:
    """A small suite written by the real suite writer: 2 variants per cluster, 3 public, 3 held out."""
    problems = [
        Problem(
            id=f"{tag}-p{c:02d}{v}",
            intent=Intent.product,
            query=f"{tag} widget number {c} variant {v}",
            difficulty=Difficulty.easy,
            rewards=[ProductReward(product_id="1000", title=["widget"])],
            cluster_id=f"{tag}-c{c:02d}",
        )
        for c in range(clusters)
        for v in range(2)
    ]
    groups = {
        PartitionName.public: problems[:6],
        PartitionName.race_bank: problems[6:-6],
        PartitionName.train_pool: [],
        PartitionName.heldout: problems[-6:],
    }
    plan = PartitionPlan(public=6, heldout_fraction=0.2)
    return write_suite(groups, out, seed="secret", plan=plan, clustering=None, version=f"{tag}-v1")


@pytest.fixture(scope="session")
def suite_dir(tmp_path_factory) -> Path:
    suite = make_suite(tmp_path_factory.mktemp("suites") / "main", "main")
    record_draw(suite, 1, "ab" * 32, 2)
    return suite.path


@pytest.fixture(scope="module")
def world(store, suite_dir):
    """The shared suite imported into this backend's store, and one accepted submission."""
    with store.transaction() as s:
        imported = suite_rows.import_suite(s, suite_dir)
        submission = submission_rows.add_submission(s, new_submission("world-miner", b"print('agent')\n"))
    return imported, submission


def new_submission(hotkey: str, code: bytes, **fields) -> NewSubmission:
    return NewSubmission(hotkey=hotkey, agent_name="agent.py", code=code, ast_hash=f"ast-{code!r}", **fields)


def new_cycle(store: Store, suite_id: str) -> int:
    with store.transaction() as s:
        latest = cycle_rows.latest_cycle(s)
        number = (latest.number if latest else 0) + 1
        cycle_rows.start_cycle(s, number, suite_id, {"k": 2})
    return number


def schedule(store: Store, world, n: int, stage=EpisodeStage.race) -> tuple[int, list[EpisodeInfo]]:
    imported, submission = world
    cycle = new_cycle(store, imported.suite_id)
    with store.transaction() as s:
        problems = suite_rows.suite_problems(s, imported.suite_id, PartitionName.race_bank)
        keys = [
            EpisodeKey(
                cycle=cycle,
                stage=stage,
                submission_id=submission.id,
                suite_id=imported.suite_id,
                problem_id=problems[i % len(problems)].id,
                attempt=i // len(problems),
            )
            for i in range(n)
        ]
        return cycle, episode_rows.ensure_episodes(s, keys)


# --- URLs and engines ----------------------------------------------------------------------------


def test_urls_are_normalised_and_bad_ones_named(monkeypatch):
    assert resolve_url("postgresql://u:pw@h:5432/db").drivername == "postgresql+psycopg"
    assert resolve_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert resolve_url("postgresql+psycopg://u@h/db").drivername == "postgresql+psycopg"
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)
    assert str(resolve_url()) == "sqlite:///./arena.db"
    monkeypatch.setenv("ARENA_DATABASE_URL", "sqlite:///elsewhere.db")
    assert str(resolve_url()) == "sqlite:///elsewhere.db"
    with pytest.raises(StoreError, match="unsupported database 'mysql'"):
        resolve_url("mysql://u:secret@h/db")
    with pytest.raises(StoreError, match="psycopg2.*not supported") as caught:
        resolve_url("postgresql+psycopg2://u:secret@h/db")
    assert "secret" not in str(caught.value)  # passwords never reach a message
    with pytest.raises(StoreError, match="is not a URL"):
        resolve_url("not a url")


def test_sqlite_engine_sets_its_pragmas(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'deep' / 'dir' / 'a.db'}")  # missing folders are created
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
    store.dispose()


# --- migrations ----------------------------------------------------------------------------------


def _procrastinate_objects(engine) -> int:
    with engine.connect() as connection:
        return connection.execute(
            text(
                "SELECT (SELECT count(*) FROM pg_proc WHERE proname LIKE 'procrastinate%') + "
                "(SELECT count(*) FROM pg_type WHERE typname LIKE 'procrastinate%') + "
                "(SELECT count(*) FROM pg_class WHERE relname LIKE 'procrastinate%')"
            )
        ).scalar_one()


@pytest.mark.parametrize("backend", BACKENDS)
def test_migrations_up_down_up_from_any_directory(backend, tmp_path, monkeypatch):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    monkeypatch.chdir(tmp_path)  # nothing may depend on the repository root
    with temporary_database(backend, tmp_path) as url:
        assert current_revision(url) is None
        assert upgrade_database(url) == head_revision()
        store = open_store(url)
        tables = set(inspect(store.engine).get_table_names())
        assert STORE_TABLES <= tables
        with store.engine.connect() as connection:  # the migrated schema is exactly the models
            context = MigrationContext.configure(connection, opts={"compare_type": True, "include_name": include_name})
            assert compare_metadata(context, metadata) == []
        if backend == "postgresql":
            assert {"procrastinate_jobs", "procrastinate_workers"} <= tables
            assert _procrastinate_objects(store.engine) > 20
        else:
            assert not any(t.startswith("procrastinate") for t in tables)
        assert upgrade_database(url) == head_revision()  # a second run is a no-op

        assert downgrade_database(url, "base") is None
        assert set(inspect(store.engine).get_table_names()) == {"alembic_version"}
        if backend == "postgresql":
            assert _procrastinate_objects(store.engine) == 0
        assert upgrade_database(url) == head_revision()
        assert STORE_TABLES <= set(inspect(store.engine).get_table_names())
        store.dispose()


def _upgrade_in_process(url: str, out: str) -> None:
    Path(out).write_text(str(upgrade_database(url)))


def test_concurrent_upgrades_from_several_processes(tmp_path):
    """A validator and its workers all start at once: one migrates, the others find nothing to do."""
    with temporary_database("postgresql", tmp_path) as url:
        context = multiprocessing.get_context("fork")
        outs = [tmp_path / f"upgrade{i}.txt" for i in range(3)]
        processes = [context.Process(target=_upgrade_in_process, args=(url, str(o))) for o in outs]
        for process in processes:
            process.start()
        for process in processes:
            process.join(60)
            assert process.exitcode == 0
        assert [o.read_text() for o in outs] == [head_revision()] * 3


def test_procrastinate_can_queue_jobs_on_the_migrated_schema(tmp_path):
    from procrastinate import App, SyncPsycopgConnector

    with migrated_store("postgresql", tmp_path) as store:
        conninfo = store.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        app = App(connector=SyncPsycopgConnector(conninfo=conninfo))

        @app.task(name="run_episode", queue="episodes")
        def run_episode(episode_id: int) -> None:  # pragma: no cover - only deferred here
            pass

        with app.open():
            run_episode.defer(episode_id=7)
        with store.engine.connect() as connection:
            row = connection.exec_driver_sql("SELECT task_name, args, status FROM procrastinate_jobs").one()
        assert row.task_name == "run_episode" and row.args == {"episode_id": 7} and row.status == "todo"


def test_db_command_upgrades_reports_and_downgrades(tmp_path):
    from typer.testing import CliRunner

    from arena.commands.db import app

    runner = CliRunner()
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    current = runner.invoke(app, ["current", "--database-url", url])
    assert current.exit_code == 0 and current.stdout.strip() == "base"
    assert not (tmp_path / "cli.db").exists()  # reading the revision created no file
    upgraded = runner.invoke(app, ["upgrade", "--database-url", url])
    assert upgraded.exit_code == 0, upgraded.output
    assert upgraded.stdout.strip() == head_revision()
    report = runner.invoke(app, ["current", "--json", "--database-url", url])
    assert '"up_to_date": true' in report.stdout
    cancelled = runner.invoke(app, ["downgrade", "base", "--database-url", url], input="n\n")
    assert cancelled.exit_code == 2 and "cancelled" in cancelled.stderr
    assert current_revision(url) == head_revision()
    down = runner.invoke(app, ["downgrade", "base", "--yes", "--database-url", url])
    assert down.exit_code == 0 and down.stdout.strip() == "base"
    bad = runner.invoke(app, ["upgrade", "--database-url", "postgresql://nobody:pw@127.0.0.1:1/none"])
    assert bad.exit_code == 2 and "upgrade failed" in bad.stderr and "pw@" not in bad.stderr
    unknown = runner.invoke(app, ["upgrade", "9999", "--database-url", url])
    assert unknown.exit_code == 2 and "9999" in unknown.stderr


# --- submissions ---------------------------------------------------------------------------------


def test_submissions_are_stored_and_found_for_copy_detection(store):
    tag = secrets.token_hex(3)
    early, late = f"early-{tag}", f"late-{tag}"
    code = f"# {tag}\nprint('hi')\n".encode()
    with store.transaction() as s:
        first = submission_rows.add_submission(s, new_submission(late, code, commitment_block=20, minhash=b"\x01" * 16))
        second = submission_rows.add_submission(s, new_submission(early, code, commitment_block=10))
        rejected = submission_rows.add_submission(
            s, new_submission(early, code, status=SubmissionStatus.rejected, rejection_reason="copy of 1")
        )
    assert first.size == len(code) and first.sha256 == hashlib.sha256(code).hexdigest()
    with store.transaction() as s:
        # The earlier chain commitment owns the file, whatever arrived first; rejected copies are left out.
        assert [x.id for x in submission_rows.by_sha256(s, first.sha256)] == [second.id, first.id]
        assert [x.id for x in submission_rows.by_sha256(s, first.sha256, include_rejected=True)][-1] == rejected.id
        assert [x.id for x in submission_rows.by_ast_hash(s, first.ast_hash)] == [second.id, first.id]
        assert submission_rows.latest_for_hotkey(s, early).id == rejected.id
        assert submission_rows.latest_for_hotkey(s, early, statuses=[SubmissionStatus.accepted]).id == second.id
        candidates = {c.id: c for c in submission_rows.copy_candidates(s)}
        assert candidates[first.id].minhash == b"\x01" * 16 and rejected.id not in candidates
        assert submission_rows.submission_code(s, first.id) == code
        latest = {x.hotkey: x.id for x in submission_rows.latest_per_hotkey(s)}
        assert latest[early] == second.id and latest[late] == first.id
        moved = submission_rows.set_status(
            s, first.id, SubmissionStatus.champion, embargo_until=datetime(2030, 1, 1, tzinfo=UTC)
        )
        assert moved.status is SubmissionStatus.champion and moved.embargo_until == datetime(2030, 1, 1, tzinfo=UTC)
        with pytest.raises(StoreError, match="needs a reason"):
            submission_rows.set_status(s, first.id, SubmissionStatus.rejected)
        with pytest.raises(StoreError, match="does not exist"):
            submission_rows.set_status(s, 10**9, SubmissionStatus.retired)
        miner = submission_rows.ensure_miner(s, early, uid=4)
        assert miner.uid == 4 and submission_rows.ensure_miner(s, early).uid == 4  # uid kept when not given
    with pytest.raises(ValueError, match="rejection_reason"):
        new_submission("x", b"x", status=SubmissionStatus.rejected)


# --- suites and the ledger -----------------------------------------------------------------------


def test_import_suite_stores_problems_and_ledger_idempotently(store, world, suite_dir):
    imported, _ = world
    suite = Suite(suite_dir)
    assert imported.new_suite and imported.problems_added == suite.manifest.problem_count == 32
    assert imported.events_added == 1
    with store.transaction() as s:
        again = suite_rows.import_suite(s, suite_dir)
        assert (again.new_suite, again.problems_added, again.events_added) == (False, 0, 0)
        for partition in PartitionName:
            stored = suite_rows.suite_problems(s, imported.suite_id, partition)
            assert [p.to_row() for p in stored] == [p.to_row() for p in suite.problems(partition)]
        assert suite_rows.get_problem(s, imported.suite_id, "main-p000").cluster_id == "main-c00"
        file_state = suite.replay_events(suite.read_ledger().events)
        assert suite_rows.ledger_state(s, imported.suite_id) == file_state
        assert suite_rows.suite_manifest(s, imported.suite_id) == suite.manifest
        listed = {x.id: x for x in suite_rows.list_suites(s)}
        assert listed[imported.suite_id].problem_count == 32 and listed[imported.suite_id].ledger_seq == 1


def test_ledger_sync_appends_new_events_and_refuses_rewrites(store, tmp_path):
    tag = f"led{secrets.token_hex(2)}"
    suite = make_suite(tmp_path / "suite", tag)
    record_draw(suite, 1, "01" * 32, 2)
    with store.transaction() as s:
        assert suite_rows.import_suite(s, suite.path).events_added == 1
    rewritten = tmp_path / "rewritten"
    shutil.copytree(suite.path, rewritten)
    (rewritten / "ledger.jsonl").unlink()
    record_draw(Suite(rewritten), 1, "02" * 32, 2)  # a valid chain, but not the one the store saw
    record_draw(suite, 2, "03" * 32, 1)
    with store.transaction() as s:
        synced = suite_rows.import_suite(s, suite.path)
        assert (synced.events_added, synced.ledger_seq) == (1, 2)
        events = suite_rows.ledger_events(s, synced.suite_id)
        assert [e.event for e in events] == [EventKind.revealed] * 2 and events[1].prev_hash == events[0].hash
    with pytest.raises(StoreError, match=r"ledger.jsonl:1: event hash .* was rewritten"), store.transaction() as s:
        suite_rows.import_suite(s, rewritten)
    (rewritten / "ledger.jsonl").unlink()
    with pytest.raises(StoreError, match="only grows"), store.transaction() as s:
        suite_rows.import_suite(s, rewritten)
    with pytest.raises(StoreError, match="manifest.json: missing"), store.transaction() as s:
        suite_rows.import_suite(s, tmp_path)
    with store.engine.connect() as connection, pytest.raises(IntegrityError):
        connection.execute(text("UPDATE ledger_events SET cycle = 99"))  # append-only, whatever the code path
    with store.engine.connect() as connection, pytest.raises(IntegrityError):
        connection.execute(text("DELETE FROM ledger_events"))


# --- cycles, standings, weights ------------------------------------------------------------------


def test_cycles_stages_standings_and_weights(store, world):
    imported, submission = world
    number = new_cycle(store, imported.suite_id)
    with store.transaction() as s:
        assert cycle_rows.start_cycle(s, number, imported.suite_id).params == {"k": 2}  # idempotent: first params kept
        with pytest.raises(StoreError, match="not in the store"):
            cycle_rows.start_cycle(s, number + 1, "no-such-suite")
        closed = cycle_rows.close_intake(s, number, 120, "0xabc")
        assert cycle_rows.close_intake(s, number, 120, "0xabc").intake_closed_at == closed.intake_closed_at
        with pytest.raises(StoreError, match="refusing to move the draw"):
            cycle_rows.close_intake(s, number, 121, "0xdef")
        cycle_rows.finish_stage(s, number, CycleStage.intake, {"submissions": 1})
        cycle_rows.begin_stage(s, number, CycleStage.qualifying)
        cycle_rows.begin_stage(s, number, CycleStage.qualifying)  # a resumed validator repeats itself harmlessly
        cycle_rows.finish_stage(s, number, CycleStage.qualifying, {"episodes": 30})
        cycle_rows.begin_stage(s, number, CycleStage.done)
        assert cycle_rows.get_cycle(s, number).finished_at is not None
        timeline = cycle_rows.stages(s, number)
        assert [x.stage for x in timeline] == [CycleStage.intake, CycleStage.qualifying, CycleStage.done]
        assert timeline[1].detail == {"episodes": 30} and timeline[1].finished_at is not None
        with pytest.raises(StoreError, match="never began stage race"):
            cycle_rows.finish_stage(s, number, CycleStage.race)

        standing_rows.record_standing(s, StandingIn(cycle=number, submission_id=submission.id, qualifying_score=0.5))
        final = standing_rows.record_standing(
            s, StandingIn(cycle=number, submission_id=submission.id, race_score=0.4, rank=1, is_champion=True)
        )
        assert (final.qualifying_score, final.race_score, final.is_champion) == (0.5, 0.4, True)
        assert [x.submission_id for x in standing_rows.list_standings(s, number)] == [submission.id]
        assert standing_rows.champion(s).cycle == number
        sent = standing_rows.record_weights(s, number, [0, 3], [0.25, 0.75], ok=True, block=121)
        standing_rows.record_weights(s, number, [0], [1.0], ok=False, message="rate limited")
        assert [w.ok for w in standing_rows.weights_sent(s, cycle=number)] == [True, False] and sent.uids == [0, 3]
        with pytest.raises(StoreError, match="2 uids but 1 weights"):
            standing_rows.record_weights(s, number, [0, 1], [1.0], ok=True)
    with store.engine.connect() as connection, pytest.raises(IntegrityError):
        connection.execute(text("UPDATE weights_sent SET ok = false"))


# --- episodes ------------------------------------------------------------------------------------


def test_episode_lifecycle_is_idempotent_and_final(store, world, catalog):
    cycle, episodes = schedule(store, world, 3)
    first = episodes[0]
    with store.transaction() as s:
        again = episode_rows.ensure_episode(s, first.key)
        assert again.id == first.id and len(episode_rows.list_episodes(s, cycle=cycle)) == 3
        with pytest.raises(StoreError, match="exists for suite"):
            episode_rows.ensure_episode(s, first.key.model_copy(update={"suite_id": "other"}))
        problem = suite_rows.get_problem(s, first.suite_id, first.problem_id)
    t0 = datetime.now(UTC)
    with store.transaction() as s:
        claimed = episode_rows.claim_next(s, "w1", 60, cycle=cycle, now=t0)
    assert (claimed.id, claimed.status, claimed.worker_id, claimed.claims) == (first.id, EpisodeStatus.running, "w1", 1)
    assert claimed.leased_until == t0 + timedelta(seconds=60)
    with store.transaction() as s:
        assert episode_rows.extend_lease(s, first.id, "w1", 120, now=t0)
        assert not episode_rows.extend_lease(s, first.id, "w2", 120, now=t0)
        # Its worker died: once the lease has run out the episode is handed out again.
        assert episode_rows.claim_next(s, "w2", 60, cycle=cycle, now=t0 + timedelta(seconds=121)).id == first.id

    outcome = score_problem(problem, ["1000"], catalog, mode=ScoreMode.strict)
    record = {"episode_id": "e1", "tool_calls": [{"name": "find_product", "args": {"query": "widget"}}]}
    with store.transaction() as s:
        assert episode_rows.complete(s, first.id, record, outcome) is True
    with store.transaction() as s:
        assert episode_rows.complete(s, first.id, {"other": "record"}, outcome) is False  # re-running is a no-op
        assert episode_rows.fail(s, first.id, "late failure") is False and episode_rows.release(s, first.id) is False
        stored = episode_rows.get_episode(s, first.id, with_record=True)
        with pytest.raises(StoreError, match="episode 999999999 does not exist"):
            episode_rows.complete(s, 999_999_999, record, outcome)
    assert stored.status is EpisodeStatus.done and stored.record == record
    assert (stored.success, stored.rule) == (outcome.success, outcome.rule)
    assert stored.outcome == outcome.model_dump(mode="json") and stored.claims == 2
    with store.engine.connect() as connection, pytest.raises(IntegrityError):
        connection.execute(text("UPDATE episodes SET rule = 0 WHERE id = :id"), {"id": first.id})

    second, third = episodes[1], episodes[2]
    with store.transaction() as s:
        assert episode_rows.claim(s, third.id, "w3", 30, now=t0).id == third.id
        assert episode_rows.claim(s, third.id, "w4", 30, now=t0) is None  # leased to a live worker
        assert episode_rows.release(s, third.id, error="proxy restarted")
        assert episode_rows.claim_next(s, "w5", 30, cycle=cycle, now=t0).id == second.id
        assert episode_rows.release_expired_leases(s, now=t0 + timedelta(seconds=31)) == 1
        assert episode_rows.fail(s, second.id, "sandbox crashed 3 times")
        counts = episode_rows.status_counts(s, cycle=cycle)
    assert counts == Counter({EpisodeStatus.done: 1, EpisodeStatus.failed: 1, EpisodeStatus.pending: 1})
    with store.transaction() as s:
        with pytest.raises(StoreError, match="lease_s must be positive"):
            episode_rows.claim_next(s, "w", 0)
        with pytest.raises(StoreError, match="OutcomeScore"):
            episode_rows.complete(s, third.id, record, {"rule": 1.0})


def _claim_all(store: Store, cycle: int, worker: str, meet=None) -> list[int]:
    """Claims until none is left; with ``meet`` (a barrier), after the first claim every
    worker waits for the others, so each is known to hold work while the rest race on."""
    claimed = []
    while True:
        if meet is not None and len(claimed) == 1:
            meet.wait(60)
            meet = None
        with store.transaction() as s:
            episode = episode_rows.claim_next(s, worker, 300, cycle=cycle)
        if episode is None:
            return claimed
        claimed.append(episode.id)


def test_concurrent_workers_never_share_an_episode(store, world):
    cycle, episodes = schedule(store, world, 80)
    per_worker: dict[str, list[int]] = {}

    def work(name: str) -> None:
        per_worker[name] = _claim_all(store, cycle, name)

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    claimed = [i for ids in per_worker.values() for i in ids]
    assert sorted(claimed) == sorted(e.id for e in episodes)  # each handed out exactly once
    with store.transaction() as s:
        assert episode_rows.status_counts(s, cycle=cycle)[EpisodeStatus.running] == 80
        assert {e.claims for e in episode_rows.list_episodes(s, cycle=cycle)} == {1}


def _process_worker(url: str, cycle: int, worker: str, out: str, meet) -> None:
    store = open_store(url)
    ids = _claim_all(store, cycle, worker, meet)
    Path(out).write_text("\n".join(map(str, ids)))
    store.dispose()


def test_concurrent_worker_processes_never_share_an_episode(store, world, tmp_path):
    cycle, episodes = schedule(store, world, 120)
    url = store.engine.url.render_as_string(hide_password=False)
    store.engine.dispose()  # no pooled connection may be inherited by the forked workers
    context = multiprocessing.get_context("fork")
    outs = [tmp_path / f"w{i}.txt" for i in range(4)]
    meet = context.Barrier(len(outs))
    workers = [
        context.Process(target=_process_worker, args=(url, cycle, f"p{i}", str(o), meet)) for i, o in enumerate(outs)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    claimed = [int(x) for o in outs for x in o.read_text().split()]
    assert sorted(claimed) == sorted(e.id for e in episodes)
    assert all(o.read_text() for o in outs)  # the work really was shared (each claimed before the barrier)


def test_concurrent_completion_stores_one_record(store, world):
    _, (episode,) = schedule(store, world, 1)
    results: list[bool] = []
    barrier = threading.Barrier(4)

    def finish(i: int) -> None:
        barrier.wait()
        with store.transaction() as s:
            results.append(episode_rows.complete(s, episode.id, {"writer": i}, {"success": True, "rule": 1.0}))

    threads = [threading.Thread(target=finish, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]
    with store.transaction() as s:
        assert episode_rows.get_episode(s, episode.id, with_record=True).record["writer"] in range(4)


# --- judgments -----------------------------------------------------------------------------------


def test_judgments_are_versioned_never_overwritten(store, world):
    _, (episode,) = schedule(store, world, 1)
    with store.transaction() as s:
        with pytest.raises(StoreError, match="only a done episode can be judged"):
            judgment_rows.add_version(s, episode.id, "judge-a", "r1")
        episode_rows.complete(s, episode.id, {"trace": []}, {"success": True, "rule": 1.0})
        v1 = judgment_rows.add_version(s, episode.id, "judge-a", "r1")
        assert (v1.version, v1.status) == (1, JudgmentStatus.pending)
        assert episode.id in {j.episode_id for j in judgment_rows.pending(s, limit=10_000)}
        failed = judgment_rows.record_failure(s, v1.id, "judge timed out")
        assert (failed.attempts, failed.status, failed.reason) == (1, JudgmentStatus.pending, "judge timed out")
        done = judgment_rows.record_result(s, v1.id, JudgmentResult(level=0.9, coefficient=1.0, explanation="good"))
        assert (done.status, done.attempts, done.reason) == (JudgmentStatus.done, 2, None)
        with pytest.raises(StoreError, match="never overwritten"):
            judgment_rows.record_result(s, v1.id, JudgmentResult(level=0.1, coefficient=0.3))
        result = JudgmentResult(level=0.4, coefficient=0.6, detail={"quality": 0.4})
        v2 = judgment_rows.add_version(s, episode.id, "judge-b", "r2", result)
        v3 = judgment_rows.add_version(s, episode.id, "judge-b", "r3")
        judgment_rows.record_failure(s, v3.id, "unparseable", give_up=True)
        assert judgment_rows.latest(s, episode.id).version == v2.version == 2
        assert judgment_rows.latest(s, episode.id, done_only=False).status is JudgmentStatus.failed
        assert [(j.version, j.coefficient) for j in judgment_rows.versions(s, episode.id)] == [
            (1, 1.0),
            (2, 0.6),
            (3, None),
        ]
    with store.engine.connect() as connection, pytest.raises(IntegrityError):
        connection.execute(text("UPDATE judgments SET coefficient = 0 WHERE id = :id"), {"id": v1.id})
    with store.engine.connect() as connection, pytest.raises(IntegrityError):
        connection.execute(text("DELETE FROM judgments WHERE id = :id"), {"id": v1.id})


def test_concurrent_versions_get_distinct_numbers(store, world):
    _, (episode,) = schedule(store, world, 1)
    with store.transaction() as s:
        episode_rows.complete(s, episode.id, {}, {"success": False, "rule": 0.0})

    def add(i: int) -> None:
        with store.transaction() as s:
            judgment_rows.add_version(s, episode.id, f"judge-{i}", "r1")

    threads = [threading.Thread(target=add, args=(i,)) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with store.transaction() as s:
        assert [j.version for j in judgment_rows.versions(s, episode.id)] == [1, 2, 3, 4, 5]


# --- nonces --------------------------------------------------------------------------------------


def test_nonce_replay_is_rejected_across_processes(store):
    from bittensor import http_auth
    from bittensor_core import Keypair

    miner, validator = Keypair.create_from_uri("//Alice"), Keypair.create_from_uri("//Bob")
    other_process = open_store(store.engine.url.render_as_string(hide_password=False))  # its own engine and pool
    try:
        first, second = DatabaseNonceStore(store.sessions), DatabaseNonceStore(other_process.sessions)
        body = b"print('agent')\n"
        headers = http_auth.sign(
            miner, method="POST", path="/v1/submissions", body=body, receiver_ss58=validator.ss58_address
        )
        check = {"method": "POST", "path": "/v1/submissions", "self_hotkey_ss58": validator.ss58_address}
        assert http_auth.verify(headers, body, nonce_store=first, **check).hotkey_ss58 == miner.ss58_address
        with pytest.raises(http_auth.ReplayedRequest):
            http_auth.verify(headers, body, nonce_store=second, **check)

        hotkey, nonce = f"hk-{secrets.token_hex(4)}", 1_700_000_000_000_000_000
        barrier, results = threading.Barrier(6), []

        def race(nonces: DatabaseNonceStore) -> None:
            barrier.wait()
            results.append(nonces.check_and_store(hotkey, nonce))

        threads = [threading.Thread(target=race, args=([first, second][i % 2],)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results) == [False] * 5 + [True]
        assert first.check_and_store(hotkey, nonce + 1) and not first.check_and_store(hotkey, 2**63)
        with store.transaction() as s:
            assert nonce_rows.purge_nonces(s, timedelta(0), now=datetime.now(UTC) + timedelta(seconds=1)) >= 3
        assert second.check_and_store(hotkey, nonce)  # purged: the freshness window rejects it before this
    finally:
        other_process.dispose()


# --- the store is one consistent place -----------------------------------------------------------


def test_foreign_keys_are_enforced(store, world):
    imported, submission = world
    number = new_cycle(store, imported.suite_id)
    key = EpisodeKey(
        cycle=number, stage=EpisodeStage.qualifying, submission_id=submission.id, suite_id=imported.suite_id,
        problem_id="no-such-problem",
    )  # fmt: skip
    with pytest.raises(IntegrityError), store.transaction() as s:
        episode_rows.ensure_episode(s, key)
    with store.transaction() as s:
        assert s.execute(select(func.count()).select_from(Episode).where(Episode.cycle == number)).scalar_one() == 0
