"""procrastinate's worker, made to ride out a database outage instead of going deaf or dying.

What procrastinate 3.10 (the latest release) does on its own, and what this subclass changes:

===================================  ==========================================  =====================================
part                                 procrastinate 3.10                          here
===================================  ==========================================  =====================================
side-task monitor                    waits for the *first* side task to finish;  waits until one *fails*; a clean
                                     the periodic deferrer returns at once when  finish (the deferrer) is ignored
                                     there is no periodic task, so the monitor
                                     is gone from the start and a dead
                                     listener or heartbeat goes unnoticed
job-notification listener            reconnects once; a reconnect that fails     reconnects with backoff for as long
                                     (server still down) ends the listener for   as the errors are transient, and
                                     good: the worker silently falls back to     fetches at once after each LISTEN
                                     polling                                     (jobs queued while nobody listened)
heartbeat                            the first failed update ends the task, so   retried with backoff: a live worker
                                     after an outage a live worker looks dead    keeps beating after an outage
fetching a job                       an error ends the worker's loop             logged; fetched again after a pause
a job announced during a fetch       the wake-up is cleared after the fetch      fetched again at once
                                     returns, so a job committed after the
                                     fetch's snapshot waits for the next poll
recording a job's end                an error is lost (the job stays "doing")    retried until the store is back
===================================  ==========================================  =====================================
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from typing import Any

import psycopg
from procrastinate import exceptions as procrastinate_exceptions
from procrastinate.manager import get_channel_for_queues
from procrastinate.worker import Worker
from psycopg import sql

from arena.store.resilience import Backoff, first_line, is_transient, retry_async, weather

logger = logging.getLogger(__name__)

LISTEN_CHECK_S = 30.0  # a listening connection silent this long is asked SELECT 1: a dead one fails it
CONNECT_TIMEOUT_S = 10


class QueueWorker(Worker):
    """A procrastinate ``Worker`` whose side tasks survive transient database errors (see the module table).

    ``listen_conninfo`` is the PostgreSQL connection string the job-notification listener uses (the
    queue's own); without it, and for the in-memory queue, notifications are procrastinate's own.
    """

    def __init__(self, app, *, listen_conninfo: str | None = None, **options: Any) -> None:
        super().__init__(app, **options)
        self.listen_conninfo = listen_conninfo
        self.notifications = 0  # job notifications received: a test tells notification from polling by it
        self._jobs_announced = 0  # "job_inserted" notifications handled, whoever's listener delivered them
        self.listening = asyncio.Event()  # set while the listener has LISTENed on its channels
        self._fetch_pauses = Backoff()

    # --- side tasks --------------------------------------------------------------------------------------

    def _start_side_tasks(self) -> list[asyncio.Task[Any]]:
        if not (self.listen_notify and self.listen_conninfo):
            return super()._start_side_tasks()
        self.listen_notify = False  # procrastinate's listener stays off; ours replaces it
        try:
            side_tasks = super()._start_side_tasks()
        finally:
            self.listen_notify = True
        side_tasks.append(asyncio.create_task(self._listen_for_jobs(), name="listener"))
        return side_tasks

    async def _monitor_side_tasks(self, side_tasks: list[asyncio.Task[Any]]) -> None:
        waiting = set(side_tasks)
        while waiting:
            done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                error = None if task.cancelled() else task.exception()
                if error is None:
                    continue  # finished cleanly (the periodic deferrer without periodic tasks): keep watching
                logger.error(
                    "worker %s: side task %s failed (%s); stopping the worker to restart it",
                    self.worker_name, task.get_name(), first_line(error), exc_info=error,
                )  # fmt: skip
                self.stop()
                return

    async def _update_heartbeat(self) -> None:
        worker_id = self.worker_id
        assert worker_id is not None  # registered before the side tasks start
        while True:
            await asyncio.sleep(self.update_heartbeat_interval)
            await retry_async(
                lambda: self.app.job_manager.update_heartbeat(worker_id), what="worker heartbeat",
                budget_s=math.inf,
            )  # fmt: skip

    async def _listen_for_jobs(self) -> None:
        assert self.listen_conninfo is not None  # _start_side_tasks starts the listener only with one
        channels = list(get_channel_for_queues(queues=self.queues))
        pauses = Backoff()
        lost = False
        while True:
            try:
                connection = await psycopg.AsyncConnection.connect(
                    self.listen_conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
                )
                async with connection:
                    for channel in channels:
                        await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    self.listening.set()
                    if lost:
                        logger.warning("worker %s: listening for job notifications again", self.worker_name)
                    lost = False
                    pauses.reset()
                    self._new_job_event.set()  # jobs queued while nobody listened: fetch now, not at the next poll
                    while True:
                        async for notify in connection.notifies(timeout=LISTEN_CHECK_S):
                            await self._on_notify(notify)
                        await connection.execute("SELECT 1")
            except Exception as exc:
                self.listening.clear()
                if not is_transient(exc):
                    raise
                weather.failed()
                lost = True
                pause = pauses.next()
                logger.warning(
                    "worker %s: job notifications lost (%s); listening again in %.2fs",
                    self.worker_name, first_line(exc), pause,
                )  # fmt: skip
                await asyncio.sleep(pause)

    async def _on_notify(self, notify: psycopg.Notify) -> None:
        try:
            notification = json.loads(notify.payload)
        except ValueError:
            logger.warning("worker %s: unreadable job notification %r", self.worker_name, notify.payload[:200])
            return
        self.notifications += 1
        await self._handle_notification(channel=notify.channel, notification=notification)

    async def _handle_notification(self, *, channel: str, notification: Any) -> None:
        if notification.get("type") == "job_inserted":
            self._jobs_announced += 1
        await super()._handle_notification(channel=channel, notification=notification)

    # --- the job loop ------------------------------------------------------------------------------------

    async def _fetch_and_process_jobs(self) -> None:
        announced = self._jobs_announced
        try:
            await self._fetch_and_process_jobs_once()
        finally:
            if self._jobs_announced != announced:
                # procrastinate clears its wake-up after every fetch, so a job announced while the last fetch
                # was in flight (committed after that fetch's snapshot) would sleep until the next poll
                # (minutes): fetch again instead. A spare fetch for a job already taken costs one query.
                self._new_job_event.set()

    async def _fetch_and_process_jobs_once(self) -> None:
        try:
            await super()._fetch_and_process_jobs()
        except Exception as exc:
            if not is_transient(exc):
                raise
            weather.failed()
            pause = self._fetch_pauses.next()
            logger.warning(
                "worker %s: could not fetch a job (%s); trying again in %.2fs", self.worker_name, first_line(exc), pause
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_event.wait(), pause)
            self._new_job_event.set()  # try again after the pause, not only at the next poll
        else:
            self._fetch_pauses.reset()

    async def _persist_job_status(self, job, status, retry_decision, context, job_result) -> None:
        persist = super()._persist_job_status
        try:
            # Until the store is back, however long: a job whose end is lost stays "doing" in the queue, and
            # its lock (one judge job per episode) would block every later job of its episode.
            await retry_async(
                lambda: persist(job, status, retry_decision, context, job_result),
                what=f"job {job.id}: recording its end", budget_s=math.inf,
            )  # fmt: skip
        except procrastinate_exceptions.ConnectorException as exc:
            # Ended by someone else: the dispatcher took this worker for dead (no heartbeat) and queued afresh.
            logger.warning("job %s: its end was not recorded (%s)", job.id, first_line(exc))
