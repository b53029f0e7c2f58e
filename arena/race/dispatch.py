"""Getting a stage's episodes done: schedule them in the store, queue their jobs, wait.

The store decides what is left to do, so waiting is also recovering: each
pass frees what dead workers held (their leases at once, their jobs and
worker rows: ``arena.race.dead_workers``), releases leases that ran out,
queues a job for every pending episode that has none waiting (the queueing
lock makes it idempotent), and queues judgments for done episodes still
without one. A validator that restarts mid-stage runs the same loop and
finds exactly the work that is left.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from procrastinate import App
from pydantic import BaseModel

from arena.race import stage_scores
from arena.race.dead_workers import recover_dead_workers
from arena.race.queues import defer_episode, defer_judgment
from arena.race.settings import RaceSettings
from arena.runner.record import FaultKind
from arena.store import Store
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store.episodes import EpisodeKey
from arena.store.models_race import EpisodeStage, EpisodeStatus
from arena.store.resilience import in_thread, retry_async

logger = logging.getLogger(__name__)

REQUEUE_EVERY_S = 5.0  # how often a waiting stage re-queues what the store says is unfinished


class Progress(BaseModel):
    """One update for whoever shows progress (a bar per stage)."""

    cycle: int
    step: str  # "qualifying", "race", "judging: qualifying", ...
    done: int
    total: int


ProgressSink = Callable[[Progress], None]


class Dispatcher:
    def __init__(self, store: Store, app: App, race: RaceSettings, on_progress: ProgressSink | None = None) -> None:
        self.store = store
        self.app = app
        self.race = race
        self.on_progress = on_progress or (lambda _p: None)

    async def run_episodes(self, keys: Sequence[EpisodeKey], cycle: int, stage: EpisodeStage) -> None:
        """Schedule ``keys`` (idempotent) and return once every episode of the stage is done or failed, or
        ``race.episodes_timeout_s`` has passed since the stage's first episode was scheduled: then the episodes
        still unfinished are failed (``_fail_unfinished`` says whose failure), so no episode holds the cycle open."""
        await in_thread(_ensure, self.store, list(keys))
        # From the stage's first scheduled episode, as the store says: a restarted validator keeps the deadline.
        began = await in_thread(_scheduled_since, self.store, cycle, stage)
        deadline = (began + timedelta(seconds=self.race.episodes_timeout_s)).timestamp()
        last_requeue = 0.0
        while True:
            now = time.monotonic()
            if time.time() >= deadline:
                given_up = await in_thread(_fail_unfinished, self.store, cycle, stage, self.race.episodes_timeout_s)
                logger.error("cycle %d %s: %d episode(s) unfinished at the stage's deadline (%.0fs), given up: %s",
                             cycle, stage.value, len(given_up), self.race.episodes_timeout_s, given_up)  # fmt: skip
            if now - last_requeue >= REQUEUE_EVERY_S:
                await self._requeue(cycle, stage)
                last_requeue = now
            counts = await in_thread(_counts, self.store, cycle, stage)
            total = sum(counts.values())
            finished = counts[EpisodeStatus.done] + counts[EpisodeStatus.failed]
            self.on_progress(Progress(cycle=cycle, step=stage.value, done=finished, total=total))
            if finished == total:
                return
            await asyncio.sleep(self.race.poll_s)

    async def wait_for_judgments(self, cycle: int, stage: EpisodeStage, deadline: float) -> list[int]:
        """Wait until every done episode of the stage is judged or ``deadline`` (time.time()) passes;
        returns the episodes still unjudged."""
        last_requeue = 0.0
        while True:
            outcomes = await in_thread(_outcomes, self.store, cycle, stage)
            waiting = stage_scores.unjudged(outcomes)
            done = sum(1 for o in outcomes if o.status is EpisodeStatus.done)
            self.on_progress(
                Progress(cycle=cycle, step=f"judging: {stage.value}", done=done - len(waiting), total=done)
            )
            if not waiting or time.time() >= deadline:
                return waiting
            now = time.monotonic()
            if now - last_requeue >= REQUEUE_EVERY_S:
                await self._recover_dead_workers()
                for episode_id in waiting:
                    await retry_async(lambda e=episode_id: defer_judgment(self.app, e), what="queue judgment")
                last_requeue = now
            await asyncio.sleep(min(self.race.poll_s, max(0.05, deadline - time.time())))

    async def requeue_old_judgments(self, before_cycle: int) -> int:
        """Queue the judgments earlier cycles left pending (an embedded queue dies with its process; a
        judge that was down is up again): their scores are settled, but the corpus wants every verdict."""
        waiting = await in_thread(_unjudged_before, self.store, before_cycle)
        for episode_id in waiting:
            await retry_async(lambda e=episode_id: defer_judgment(self.app, e), what="queue judgment")
        if waiting:
            logger.info("queued %d judgment(s) left pending by earlier cycles", len(waiting))
        return len(waiting)

    async def _recover_dead_workers(self) -> None:
        await retry_async(
            lambda: recover_dead_workers(self.app, self.store, self.race.stalled_worker_s), what="dead workers"
        )

    async def _requeue(self, cycle: int, stage: EpisodeStage) -> None:
        await self._recover_dead_workers()  # first: what it frees is queued afresh below
        released = await in_thread(_release_expired, self.store)
        if released:
            logger.warning("cycle %d %s: %d episode lease(s) ran out; queued again", cycle, stage.value, released)
        pending = await in_thread(_pending, self.store, cycle, stage)
        for episode_id in pending:
            await retry_async(lambda e=episode_id: defer_episode(self.app, e), what="queue episode")
        unjudged = stage_scores.unjudged(await in_thread(_outcomes, self.store, cycle, stage))
        for episode_id in unjudged:
            await retry_async(lambda e=episode_id: defer_judgment(self.app, e), what="queue judgment")


def _ensure(store: Store, keys: list[EpisodeKey]) -> None:
    with store.transaction() as session:
        episode_rows.ensure_episodes(session, keys)


def _counts(store: Store, cycle: int, stage: EpisodeStage):
    with store.transaction() as session:
        return episode_rows.status_counts(session, cycle=cycle, stage=stage)


def _scheduled_since(store: Store, cycle: int, stage: EpisodeStage) -> datetime:
    with store.transaction() as session:
        return min((e.created_at for e in episode_rows.list_episodes(session, cycle=cycle, stage=stage)),
                   default=datetime.now(UTC))  # fmt: skip


def _fail_unfinished(store: Store, cycle: int, stage: EpisodeStage, timeout_s: float) -> list[int]:
    reason = f"unfinished at the stage's deadline (episodes_timeout_s = {timeout_s:.0f}s)"
    failed = []
    with store.transaction() as session:
        # Charged when the validator measured others in the stage (an episode finished): one that alone outlives
        # the stage follows its submission, and unfinished episodes spread over enough submissions halt the stage
        # (arena.race.halt). Nothing finished at all: the validator ran nothing (no worker), its own failure.
        charged = episode_rows.status_counts(session, cycle=cycle, stage=stage)[EpisodeStatus.done] > 0
        for status in (EpisodeStatus.pending, EpisodeStatus.running):
            for episode in episode_rows.list_episodes(session, cycle=cycle, stage=stage, status=status):
                if episode_rows.fail(session, episode.id, reason, fault_kind=FaultKind.runner.value, charged=charged):
                    failed.append(episode.id)
    return failed


def _release_expired(store: Store) -> int:
    with store.transaction() as session:
        return episode_rows.release_expired_leases(session)


def _pending(store: Store, cycle: int, stage: EpisodeStage) -> list[int]:
    with store.transaction() as session:
        return [
            e.id for e in episode_rows.list_episodes(session, cycle=cycle, stage=stage, status=EpisodeStatus.pending)
        ]


def _outcomes(store: Store, cycle: int, stage: EpisodeStage) -> list[judgment_rows.EpisodeOutcome]:
    with store.transaction() as session:
        return judgment_rows.stage_outcomes(session, cycle, stage)


def _unjudged_before(store: Store, cycle: int, limit: int = 10_000) -> list[int]:
    with store.transaction() as session:
        return judgment_rows.unjudged_before(session, cycle, limit=limit)
