"""The race's job queue: its names, the connector for the store's database, and queueing a job once.

Connectors: ``PsycopgConnector`` for PostgreSQL (any number of ``arena worker``
processes on any machines share the queue; its schema is the store's
migration 0002), ``InMemoryConnector`` for SQLite (the embedded validator runs
the same tasks in-process).
"""

from __future__ import annotations

from procrastinate import App, BaseConnector, PsycopgConnector
from procrastinate import exceptions as procrastinate_exceptions
from procrastinate.testing import InMemoryConnector
from sqlalchemy.engine import make_url

from arena.store import resolve_url

EPISODES_QUEUE = "episodes"
JUDGMENTS_QUEUE = "judgments"
QUEUES = (EPISODES_QUEUE, JUDGMENTS_QUEUE)
RETRY_BACKOFF_BASE_S = 2  # procrastinate's exponential wait: 2, 4, 8, ... seconds between tries


class QueueConnector(PsycopgConnector):
    """procrastinate's PostgreSQL connector, keeping its conninfo for the workers' job-notification listener."""

    def __init__(self, conninfo: str) -> None:
        # procrastinate's pool checks each connection as it is handed out, so a database restart costs a
        # reconnect, not a job.
        super().__init__(conninfo=conninfo, min_size=1, max_size=4)
        self.conninfo = conninfo


def connector_for(database_url: str | None) -> BaseConnector:
    """PostgreSQL: the shared queue in the store's database; SQLite: an in-process queue."""
    url = resolve_url(database_url)
    if url.get_backend_name() != "postgresql":
        return InMemoryConnector()
    return QueueConnector(make_url(url).set(drivername="postgresql").render_as_string(hide_password=False))


async def _defer(app: App, task_name: str, lock: str, episode_id: int, *, exclusive: bool = False) -> bool:
    """Queue one job unless the same one is already waiting (its queueing lock); True if queued.
    ``exclusive``: jobs for the same episode also never run at the same time (procrastinate's lock)."""
    deferrer = app.tasks[task_name].configure(queueing_lock=lock, lock=lock if exclusive else None)
    try:
        await deferrer.defer_async(episode_id=episode_id)
    except procrastinate_exceptions.AlreadyEnqueued:
        return False
    return True


async def defer_episode(app: App, episode_id: int) -> bool:
    return await _defer(app, "run_episode", f"episode-{episode_id}", episode_id)


async def defer_judgment(app: App, episode_id: int) -> bool:
    # Exclusive: two judge jobs of one episode running together would each add a judgment version.
    return await _defer(app, "judge_episode", f"judgment-{episode_id}", episode_id, exclusive=True)
