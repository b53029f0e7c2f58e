"""Running the race's queue workers in one process: ``arena worker``, and a validator's in-process workers.

Two workers, one per queue, so judgments keep pace with the episodes instead
of waiting behind every queued episode of the stage; each is a
``QueueWorker`` (it rides out database outages) and is restarted should it
stop anyway. Beside them, housekeeping at start and every
``race.housekeeping_s``: sweep the episode folders of dead runners
(``arena.runner.workdirs``) and store the results held while the store was
away (``arena.race.held_results``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from procrastinate import App
from procrastinate.testing import InMemoryConnector

from arena.race.episode_jobs import store_held_results
from arena.race.queue_worker import QueueWorker
from arena.race.queues import EPISODES_QUEUE, JUDGMENTS_QUEUE, defer_judgment
from arena.race.settings import RaceSettings
from arena.race.worker_context import WorkerContext
from arena.runner.workdirs import sweep
from arena.store.resilience import first_line

logger = logging.getLogger(__name__)


async def run_workers(
    app: App,
    race: RaceSettings,
    *,
    concurrency: int,
    name: str,
    stop: asyncio.Event | None = None,
    restart_pause_s: float = 2.0,
    context: WorkerContext | None = None,
) -> None:
    """Work until ``stop`` is set (or forever): ``concurrency`` episodes at once, and judgments beside them.
    With ``context``, housekeeping too (the context the app's tasks were bound to)."""
    stop = stop or asyncio.Event()
    chores = [] if context is None else [housekeeping(app, context, stop)]
    await asyncio.gather(
        _supervise(app, race, [EPISODES_QUEUE], concurrency, f"{name}-episodes", stop, restart_pause_s),
        _supervise(
            app, race, [JUDGMENTS_QUEUE], max(1, concurrency // 2), f"{name}-judgments", stop, restart_pause_s
        ),  # fmt: skip
        *chores,
    )


def queue_worker(app: App, race: RaceSettings, queues: list[str], concurrency: int, name: str) -> QueueWorker:
    in_memory = isinstance(app.connector, InMemoryConnector)
    return QueueWorker(
        app,
        listen_conninfo=getattr(app.connector, "conninfo", None),
        queues=queues,
        concurrency=concurrency,
        name=name,
        wait=True,
        install_signal_handlers=False,
        update_heartbeat_interval=max(1.0, race.stalled_worker_s / 3),
        stalled_worker_timeout=race.stalled_worker_s,
        fetch_job_polling_interval=race.job_poll_s or min(5.0, race.poll_s * 2),
        listen_notify=not in_memory,
    )


async def _supervise(
    app: App, race: RaceSettings, queues: list[str], concurrency: int, name: str, stop: asyncio.Event,
    restart_pause_s: float,
) -> None:  # fmt: skip
    while not stop.is_set():
        worker = asyncio.create_task(queue_worker(app, race, queues, concurrency, name).run())
        stopping = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({worker, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if stopping in done:
            worker.cancel()
            try:
                await worker
            except (asyncio.CancelledError, Exception):
                pass
            return
        stopping.cancel()
        error = worker.exception()
        logger.warning("worker %s stopped (%s); restarting in %.1fs", name, error, restart_pause_s)
        await asyncio.sleep(restart_pause_s)


async def housekeeping(app: App, context: WorkerContext, stop: asyncio.Event) -> None:
    """At start and every ``race.housekeeping_s`` until ``stop``: sweep dead runners' episode folders, store
    held results. A failure is logged and tried again next time: housekeeping never stops the worker."""
    while not stop.is_set():
        try:
            await asyncio.to_thread(sweep, context.work_dir)
        except Exception as exc:  # a folder we may not touch: say so, keep working
            logger.error("sweeping the episode folders failed: %s", first_line(exc))
        try:
            held = await store_held_results(context.store, context.held, refusals_allowed=context.race.store_refusals)
            for episode_id in held:
                await defer_judgment(app, episode_id)
        except Exception as exc:  # the store is away for longer than a retry budget: next time
            logger.warning("held results not stored yet: %s", first_line(exc))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), context.race.housekeeping_s)
