"""The validator as a service object: settings -> store, chain, runner, judge, task queue -> cycles.

    validator = Validator(settings, race=RaceSettings(suite_dir=..., cycle_length=60))
    report = validator.run_once()     # run (or resume) one whole cycle
    validator.run_forever()           # a cycle every cycle_length; the last good weights re-sent every
                                      # weights_interval in between

Embedded (SQLite) it runs the episode and judge tasks in-process on
procrastinate's in-memory queue; on PostgreSQL it queues them in the
database for ``arena worker`` processes anywhere, and also works on them
itself with ``race.workers`` in-process workers (0: leave them to the
workers). A database that goes away for a moment is waited for: each store
call retries (``arena.store.resilience``) and a cycle interrupted by a longer
outage is resumed from the store.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import httpx

from arena.chain.local import LocalChain
from arena.chain.protocol import Chain
from arena.problems.suites import Suite
from arena.race.cycle import CycleReport, run_cycle, with_cycle_params
from arena.race.dispatch import Dispatcher, ProgressSink
from arena.race.queues import connector_for
from arena.race.settings import POLICY_MODEL, RaceSettings, ValidatorSettings
from arena.race.tasks import create_task_app
from arena.race.worker_context import WorkerContext
from arena.race.workers import run_workers
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import LocalKnowledgeBase
from arena.store import Store, open_store
from arena.store import cycles as cycle_rows
from arena.store import suites as suite_rows
from arena.store.migrate import upgrade_database
from arena.store.models_race import CycleStage
from arena.store.resilience import OUTAGE_BUDGET_S, Backoff, first_line, is_transient
from arena.store.standings import WeightsInfo
from judge.factory import open_judge

logger = logging.getLogger(__name__)


class ValidatorError(RuntimeError):
    """The validator cannot start: a missing suite or catalog, an impossible worker setup. Says what to fix."""


def upstream_registry(race: RaceSettings) -> UpstreamRegistry:
    """The configured model servers, or the built-in offline policy served in-process."""
    if race.upstreams:
        return UpstreamRegistry(list(race.upstreams))
    if race.model != POLICY_MODEL:
        raise ValidatorError(
            f"race.model is {race.model!r} but no race.upstreams serve it; without upstreams the model is the "
            f"built-in {POLICY_MODEL!r}"
        )
    from arena.policy.server import create_policy_app

    return UpstreamRegistry(
        [Upstream(name=POLICY_MODEL, base_url="http://heuristic-policy/v1", models=[POLICY_MODEL])],
        transports={POLICY_MODEL: httpx.ASGITransport(app=create_policy_app(seed=race.policy_seed))},
    )


def open_catalog(path: Path) -> tuple[CatalogIndex, LocalKnowledgeBase | None]:
    from arena.shop.index import CatalogIndexError

    try:
        catalog = CatalogIndex(path)
    except (CatalogIndexError, OSError, ValueError) as exc:
        raise ValidatorError(f"catalog {path}: {exc} (build one with `arena catalog build`)") from None
    knowledge_dir = path / "knowledge"
    knowledge = LocalKnowledgeBase(knowledge_dir) if (knowledge_dir / "knowledge.json").is_file() else None
    if knowledge is not None and not knowledge.scoped:
        raise ValidatorError(
            f"knowledge index {knowledge_dir} names no page's problem, so every episode could read every answer page;"
            " rebuild the catalog with `arena catalog build`"
        )
    return catalog, knowledge


def worker_context(settings: ValidatorSettings, race: RaceSettings, store: Store, catalog_path: Path) -> WorkerContext:
    """Everything a task needs, built inside the event loop that will run the tasks."""
    catalog, knowledge = open_catalog(catalog_path)
    return WorkerContext(
        store=store,
        catalog=catalog,
        registry=upstream_registry(race),
        judge=open_judge(settings.judge, race.judge_kind),
        race=race,
        limits=settings.runner.limits,
        knowledge=knowledge,
        runtime_dir=settings.runner.runtime_dir,
        work_dir=settings.runner.work_dir,
    )


def widen_thread_pool(loop: asyncio.AbstractEventLoop, concurrency: int) -> None:
    """Each running episode holds a thread for its sandbox process; store calls need threads besides
    (a starved pool would delay lease renewals until the leases lapse)."""
    loop.set_default_executor(ThreadPoolExecutor(max_workers=2 * concurrency + 8, thread_name_prefix="arena"))


class Validator:
    def __init__(
        self,
        settings: ValidatorSettings,
        *,
        race: RaceSettings | None = None,
        database_url: str | None = None,
        store: Store | None = None,
        chain: Chain | None = None,
        hotkey: str | None = None,
        catalog_path: Path | None = None,
        on_progress: ProgressSink | None = None,
        migrate: bool = True,
    ) -> None:
        self.settings = settings
        self.race = race or settings.race
        # Check the configuration before touching a database: a typo must not leave an empty arena.db behind.
        if self.race.suite_dir is None:
            raise ValidatorError("race.suite_dir is not set: name the suite directory this validator races")
        if not (self.race.suite_dir / "sealed" / "manifest.json").is_file():
            raise ValidatorError(
                f"{self.race.suite_dir}: not a suite directory (no sealed/manifest.json); build one with "
                f"`arena suite build` or import a sealed bank"
            )
        self.store = store or open_store(database_url)
        if self.store.engine.dialect.name == "sqlite" and self.race.workers < 1:
            raise ValidatorError("with SQLite the episodes run in this process: race.workers must be at least 1")
        self.catalog_path = Path(catalog_path or self.settings.catalog.path)
        self.on_progress = on_progress
        if migrate:
            upgrade_database(self.store.engine)
        self.local = chain is None
        self.chain: Chain = chain if chain is not None else LocalChain(self.store.sessions, netuid=self.race.netuid)
        self.hotkey = hotkey or getattr(self.chain, "hotkey", None) or self.race.validator_hotkey
        self.suite = Suite(self.race.suite_dir)
        self._prepared = False

    @property
    def database_url(self) -> str:
        return self.store.engine.url.render_as_string(hide_password=False)

    def prepare(self) -> str:
        """Import the suite (idempotent; syncs the ledger) and, on the local chain, register this validator;
        returns the suite id."""
        with self.store.transaction() as session:
            imported = suite_rows.import_suite(session, self.suite.path)
        if self.local and isinstance(self.chain, LocalChain):
            self.chain.register(self.hotkey, validator_permit=True)
        self._prepared = True
        self.suite_id = imported.suite_id
        return imported.suite_id

    def _race_for_open_cycle(self) -> RaceSettings:
        with self.store.transaction() as session:
            latest = cycle_rows.latest_cycle(session)
        if latest is None or latest.stage is CycleStage.done:
            return self.race
        return with_cycle_params(self.race, latest.params)

    async def run_once_async(self) -> CycleReport:
        """Run or resume one cycle in the running event loop (its own task queue and workers)."""
        if not self._prepared:
            await asyncio.to_thread(self.prepare)
        widen_thread_pool(asyncio.get_running_loop(), max(1, self.race.workers))
        # A cycle left unfinished runs on with its own judge and model, whatever this process says now.
        race = await asyncio.to_thread(self._race_for_open_cycle)
        context = worker_context(self.settings, race, self.store, self.catalog_path)
        app = create_task_app(connector_for(self.database_url), context)
        stop = asyncio.Event()
        async with app.open_async():
            workers = None
            if self.race.workers > 0:
                workers = asyncio.create_task(
                    run_workers(
                        app,
                        self.race,
                        concurrency=self.race.workers,
                        name=f"validator-{self.hotkey}",
                        stop=stop,
                        context=context,
                    )  # fmt: skip
                )
            try:
                dispatcher = Dispatcher(self.store, app, self.race, self.on_progress)
                return await run_cycle(
                    self.store, self.chain, self.race, self.suite, self.suite_id, dispatcher, self.hotkey
                )
            finally:
                stop.set()
                if workers is not None:
                    await workers
                await context.registry.aclose()
                await context.judge.aclose()

    def run_once(self, *, outage_budget_s: float = OUTAGE_BUDGET_S) -> CycleReport:
        """Run or resume one whole cycle; a database outage is waited out (up to ``outage_budget_s`` per
        interruption) and the cycle resumed from the store."""
        failing_since: float | None = None
        pauses = Backoff(first_s=1.0)
        while True:
            started = time.monotonic()
            try:
                return asyncio.run(self.run_once_async())
            except Exception as exc:
                now = time.monotonic()
                if now - started > outage_budget_s or failing_since is None:
                    failing_since = now  # the attempt got somewhere: a new outage, a fresh budget
                    pauses.reset()
                if not is_transient(exc) or now - failing_since > outage_budget_s:
                    raise
                pause = pauses.next()
                logger.warning(
                    "cycle interrupted by the database (%s); resuming from the store in %.1fs", first_line(exc), pause
                )
                time.sleep(pause)

    def run_forever(
        self,
        stop: threading.Event | None = None,
        *,
        error_pause_s: float = 60.0,
        on_cycle: Callable[[CycleReport], None] | None = None,
    ) -> None:
        """A cycle every ``cycle_length`` (counted from each cycle's start) until ``stop`` is set.
        ``on_cycle`` gets each finished cycle's report (the command prints its summary)."""
        stop = stop or threading.Event()
        while not stop.is_set():
            try:
                report = self.run_once()
                next_start = report.started_at + self.race.cycle_length
                wait = (next_start - datetime.now(UTC)).total_seconds()
                if on_cycle is not None:
                    on_cycle(report)
                logger.info(
                    "cycle %d finished; the next starts at %s", report.cycle, next_start.isoformat(timespec="seconds")
                )
            except Exception:
                logger.exception("the cycle failed; trying again in %.0fs", error_pause_s)
                wait = error_pause_s
            if wait > 0:
                self.wait_resending(stop, wait)

    def resend_weights(self) -> WeightsInfo | None:
        """Send the last good weight vector again (the validator keeps its standing while cycles halt or
        between them); a failure is logged in one line, never raised."""
        from arena.race.results import resend_last_weights

        try:
            return resend_last_weights(self.store, self.chain, self.hotkey)
        except Exception as exc:
            logger.warning("could not re-send the last weights: %s: %s", type(exc).__name__, exc)
            return None

    def wait_resending(self, stop: threading.Event, wait_s: float) -> int:
        """Wait ``wait_s`` (or until ``stop``), re-sending the last good weights every ``weights_interval``;
        how many times they were re-sent."""
        interval = max(1.0, self.race.weights_interval.total_seconds())
        sent = 0
        for _ in range(int(wait_s // interval)):
            if stop.wait(interval):
                return sent
            self.resend_weights()
            sent += 1
        stop.wait(wait_s % interval)
        return sent

    def close(self) -> None:
        self.store.dispose()
