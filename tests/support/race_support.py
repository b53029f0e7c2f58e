"""What the race tests share: one small world (catalog, generated problems, a suite), stores seeded
with submissions, PostgreSQL databases, and a throwaway PostgreSQL cluster.

The world is built once per test process (a 2,000-product synthetic catalog, 10 generated product
problems with one variant each, a suite of 1 public, 8 race-bank and 1 held-out cluster); every
test races its own copy of the suite, because a race appends to the suite's ledger.
"""

from __future__ import annotations

import functools
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from arena.chain.local import LocalChain
from arena.intake.copies import fingerprint
from arena.race.settings import RaceSettings
from arena.store import Store, open_store, resolve_url
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store import submissions as submission_rows
from arena.store.migrate import upgrade_database
from arena.store.models_race import Episode, EpisodeStatus, JudgmentStatus
from arena.store.submissions import NewSubmission

REPO = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).resolve().parent / "race_agents"
SUBMITTED = datetime(2026, 1, 1, tzinfo=UTC)


@functools.cache
def _world(base: str) -> tuple[Path, Path]:
    from arena.generator.generate import GeneratorConfig, generate
    from arena.problems.model import Intent
    from arena.problems.partitions import PartitionPlan
    from arena.problems.suites import build_suite
    from arena.shop.index import CatalogIndex
    from arena.taskpack.build import build_catalog

    root = Path(base) / "race-world"
    catalog_dir = root / "catalog"
    build_catalog(catalog_dir, synthetic=2000, seed=11)
    generated = generate(CatalogIndex(catalog_dir), GeneratorConfig(n=10, seed=5, variants=1, intents=[Intent.product]))
    plan = PartitionPlan(public=2, heldout_fraction=0.1)
    build_suite(generated.problems, root / "suite", seed="race-test-seed", plan=plan, version="race-test-v1")
    return catalog_dir, root / "suite"


def require_sandbox() -> None:
    """Races run agents in bubblewrap: skip without it, unless the run requires it (scripts/test does)."""
    from arena.runner.sandbox import bubblewrap_path

    if bubblewrap_path() is None:
        if os.environ.get("ARENA_REQUIRE_SANDBOX"):
            pytest.fail("bubblewrap is required for the race tests (scripts/test installs it)")
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")


@pytest.fixture(scope="session")
def race_world(tmp_path_factory) -> tuple[Path, Path]:
    """(catalog dir, suite template dir), built once per session."""
    require_sandbox()
    return _world(str(tmp_path_factory.getbasetemp()))


def suite_copy(template: Path, folder: Path) -> Path:
    """A private copy of the suite (a race appends to its ledger)."""
    target = folder / "suite"
    shutil.copytree(template, target)
    return target


def agent_code(name: str, *, pause_s: float = 0.0) -> bytes:
    """A test agent's source; ``pause_s`` makes it wait before working (so a test can kill mid-episode)."""
    source = (AGENTS / f"{name}.py").read_text()
    if pause_s:
        source = source.replace(
            "def agent_main(problem):\n", f"def agent_main(problem):\n    __import__('time').sleep({pause_s})\n", 1
        )
    return source.encode()


# Agents slow enough (2 s a problem) for a test to kill a worker or restart the database mid-episode.
PATIENT_AGENTS = [
    ("miner-dialogue", agent_code("dialogue", pause_s=2.0)),
    ("miner-first-hit", agent_code("first_hit", pause_s=2.0)),
]


def seed_store(url: str, agents: list[tuple[str, bytes]], *, netuid: int = 15, owner: str | None = None) -> Store:
    """Migrate ``url``, register each miner on its local chain and store its accepted submission
    (fixed submission times and commitment blocks, so two stores seeded alike rank alike). ``owner``:
    a hotkey registered first, so it holds uid 0 (the burn uid) instead of the first miner."""
    upgrade_database(url)
    store = open_store(url)
    chain = LocalChain(store.sessions, netuid=netuid)
    if owner is not None:
        chain.register(owner)
    for index, (hotkey, code) in enumerate(agents):
        chain.register(hotkey)
        with store.transaction() as session:
            submission_rows.add_submission(
                session,
                NewSubmission(
                    hotkey=hotkey,
                    agent_name=f"{hotkey}.py",
                    code=code,
                    ast_hash=fingerprint(code).ast_hash,
                    commitment_block=index,
                    submitted_at=SUBMITTED + timedelta(minutes=index),
                ),
            )
    return store


def small_race(suite_dir: Path, **overrides) -> RaceSettings:
    """A race sized for tests: seconds, not hours; a handful of problems; everyone qualifies."""
    values = dict(
        suite_dir=suite_dir,
        cycle_length=timedelta(seconds=5),
        qualifying_size=2,
        qualification_fraction=0.0,
        draw_size=2,
        attempts=1,
        workers=2,
        poll_s=0.2,
        judge_timeout_s=30.0,
        lease_s=30.0,
    )
    values.update(overrides)
    return RaceSettings(**values)


def race_toml(settings: RaceSettings, path: Path) -> Path:
    """The settings as a TOML ``[race]`` table, for subprocesses (``--race-config``)."""
    lines = ["[race]"]
    for name, value in settings.model_dump(mode="json", exclude={"upstreams"}).items():
        if value is None:
            continue
        if isinstance(value, bool):
            lines.append(f"{name} = {'true' if value else 'false'}")
        elif isinstance(value, int | float):
            lines.append(f"{name} = {value}")
        else:
            lines.append(f"{name} = {json.dumps(str(value))}")
    path.write_text("\n".join(lines) + "\n")
    return path


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def start_worker(name: str, url: str, catalog: Path, race_config: Path, log: Path, **env: str) -> subprocess.Popen:
    """One `arena worker` process (its own session, so a test can kill its whole group), logging to ``log``."""
    command = [
        sys.executable, "-m", "arena.commands.worker", "--database-url", url, "--catalog", str(catalog),
        "--race-config", str(race_config), "--concurrency", "1", "--name", name,
    ]  # fmt: skip
    with log.open("w") as out:
        return subprocess.Popen(command, env=subprocess_env(**({"ARENA_LOG_LEVEL": "WARNING"} | env)), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


def assert_each_episode_stored_once(store: Store, expected: int) -> None:
    """``expected`` episode keys, each stored once, done, and judged once."""
    with store.transaction() as s:
        rows = s.execute(
            select(
                Episode.cycle, Episode.stage, Episode.submission_id, Episode.problem_id, Episode.attempt, func.count()
            ).group_by(
                Episode.cycle, Episode.stage, Episode.submission_id, Episode.problem_id, Episode.attempt
            )  # fmt: skip
        ).all()
        assert len(rows) == expected and all(row[-1] == 1 for row in rows)
        for episode in episode_rows.list_episodes(s):
            assert episode.status is EpisodeStatus.done
            assert [j.status for j in judgment_rows.versions(s, episode.id)] == [JudgmentStatus.done]


class InBackground:
    """``validator.run_once()`` in a thread, keeping its result or its error."""

    def __init__(self, validator) -> None:
        self.report = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(validator,), daemon=True)
        self.thread.start()

    def _run(self, validator) -> None:
        try:
            self.report = validator.run_once()
        except BaseException as exc:
            self.error = exc

    def result(self, timeout_s: float):
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), f"the cycle did not finish within {timeout_s:.0f}s"
        if self.error is not None:
            raise self.error
        return self.report


def wait_until(condition, timeout_s: float, what: str, poll_s: float = 0.2):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


# --- PostgreSQL -------------------------------------------------------------------------------------


def _postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found:
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    return found[-1].parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ThrowawayCluster:
    """A PostgreSQL cluster of its own (initdb + pg_ctl as the postgres user, a free port, trust auth)."""

    def __init__(self) -> None:
        try:
            self.owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("no postgres system user to run a throwaway cluster as")
        self.bin = _postgres_bin()
        self.root = Path(tempfile.mkdtemp(prefix="arena-pg-", dir="/tmp"))
        os.chown(self.root, self.owner.pw_uid, self.owner.pw_gid)
        self.data = self.root / "data"
        self.port = _free_port()
        self._as_postgres(
            str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"
        )

    def _as_postgres(self, *argv: str) -> None:
        command = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(
            str(self.bin / "pg_ctl"), action, "-D", str(self.data), "-o", options, "-w", "-t", "60",
            "-l", str(self.root / "server.log"), *extra,
        )  # fmt: skip

    def start(self) -> None:
        self._pg_ctl("start")

    def stop(self, mode: str = "fast") -> None:
        """``fast``: sessions are told (57P01) and closed; ``immediate``: the server just dies."""
        self._as_postgres(str(self.bin / "pg_ctl"), "stop", "-D", str(self.data), "-m", mode, "-w", "-t", "60")

    def read_only(self, on: bool) -> None:
        """Every session's next transaction is read-only (SQLSTATE 25006 on a write) or writable again, as
        during a failover onto a standby: ``default_transaction_read_only`` for the whole cluster, reloaded
        into the open sessions (those that did not SET it themselves)."""
        engine = create_engine(resolve_url(self.url()), isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.exec_driver_sql("SET default_transaction_read_only = off")  # this session still writes
            if on:
                connection.exec_driver_sql("ALTER SYSTEM SET default_transaction_read_only = on")
            else:
                connection.exec_driver_sql("ALTER SYSTEM RESET default_transaction_read_only")
            connection.exec_driver_sql("SELECT pg_reload_conf()")
        engine.dispose()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        engine = create_engine(resolve_url(self.url()), isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        engine.dispose()
        return self.url(name)

    def remove(self) -> None:
        try:
            self.stop()
        except Exception:  # already stopped
            pass
        shutil.rmtree(self.root, ignore_errors=True)
