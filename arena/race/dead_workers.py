"""Workers known to be dead: their episodes run again now, not when their leases lapse.

A worker that stops sending heartbeats for ``stalled_worker_s`` (SIGKILL,
power loss, a frozen host) is dead to the race. One stall check of the
dispatcher then, in this order:

1. releases the episode leases held by the dead workers' jobs (the store
   ties a lease to its job: ``release_leases_of_jobs``), so the episodes are
   pending again at once instead of after ``lease_s``;
2. ends those episode jobs as aborted in the queue: the dispatcher's next
   step queues a fresh job for every pending episode (a fresh job is
   announced by NOTIFY, so an idle worker starts it within milliseconds; a
   retried one would wait for a worker's next poll). The dead workers' other
   jobs (judgments, maybe of an earlier cycle) are retried as they are, or
   aborted when a waiting job of the same episode already covers them;
3. deletes the dead workers' rows from ``procrastinate_workers``
   (procrastinate itself prunes only when some worker starts).

After a store outage every heartbeat is old, the live workers' too, so the
check runs only once this process has reached the store without a failure
for ``stalled_worker_s`` plus the longest retry pause (``resilience.weather``):
the live workers have beaten again by then. And no step retries on its own: a
transient error (a read-only store lets the heartbeats be read but not
written) ends the whole check, and the caller's retry starts it again from
the weather test, so a list of "dead" workers read at the start of an outage
is never acted on after it.
"""

from __future__ import annotations

import asyncio
import logging

from procrastinate import App
from procrastinate import exceptions as procrastinate_exceptions
from procrastinate.jobs import Status
from procrastinate.testing import InMemoryConnector
from pydantic import BaseModel

from arena.store import Store
from arena.store import episodes as episode_rows
from arena.store.resilience import LONGEST_PAUSE_S, is_transient, weather

logger = logging.getLogger(__name__)

EPISODE_TASK = "run_episode"


class Recovery(BaseModel):
    """What one stall check did."""

    skipped: bool = False  # the store failed too recently to trust the heartbeats
    aborted_jobs: list[int] = []
    retried_jobs: list[int] = []
    released_episodes: list[int] = []
    pruned_workers: list[int] = []


def _release(store: Store, job_ids: list[int]) -> list[int]:
    with store.transaction() as session:
        return episode_rows.release_leases_of_jobs(session, job_ids, reason="its worker died (no heartbeat)")


async def recover_dead_workers(app: App, store: Store, stalled_worker_s: float) -> Recovery:
    """Free what workers without a heartbeat for ``stalled_worker_s`` held (see the module docstring)."""
    if isinstance(app.connector, InMemoryConnector):
        return Recovery()  # one process: its jobs die with it, and the dispatcher re-queues from the store
    if weather.calm_for() < stalled_worker_s + LONGEST_PAUSE_S:
        return Recovery(skipped=True)
    stalled = list(await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=stalled_worker_s))
    episode_jobs = [job.id for job in stalled if job.task_name == EPISODE_TASK and job.id is not None]
    released = await asyncio.to_thread(_release, store, episode_jobs) if episode_jobs else []
    aborted, retried = [], []
    for job in stalled:
        if job.id not in episode_jobs and await _retried(app, job):
            retried.append(job.id)
        elif await _aborted(app, job):
            aborted.append(job.id)
    pruned = await app.job_manager.prune_stalled_workers(stalled_worker_s)
    recovery = Recovery(aborted_jobs=aborted, retried_jobs=retried, released_episodes=released, pruned_workers=pruned)
    if released or aborted or retried or pruned:
        logger.warning(
            "dead workers %s: released the lease(s) of episode(s) %s at once; %d job(s) ended to be queued afresh, "
            "%d retried", pruned or "(already pruned)", released, len(aborted), len(retried),
            extra=recovery.model_dump(exclude={"skipped"}),
        )  # fmt: skip
    return recovery


async def _retried(app: App, job) -> bool:
    try:
        await app.job_manager.retry_job(job)
    except procrastinate_exceptions.ProcrastinateException as exc:
        if is_transient(exc):
            raise
        return False  # typically a waiting job of the same episode holds the queueing lock: it covers this one
    return True


async def _aborted(app: App, job) -> bool:
    try:
        await app.job_manager.finish_job(job, status=Status.ABORTED, delete_job=False)
    except procrastinate_exceptions.ProcrastinateException as exc:
        if is_transient(exc):
            raise
        logger.info("stalled job %s already ended: %s", job.id, exc)  # its worker was alive after all
        return False
    return True
