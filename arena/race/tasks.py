"""Episodes and judgments as procrastinate tasks: ``run_episode(episode_id)`` and ``judge_episode(episode_id)``."""

from __future__ import annotations

from procrastinate import App, BaseConnector, JobContext, RetryStrategy

from arena.race.episode_jobs import run_episode_now
from arena.race.judgment_jobs import judge_episode_now
from arena.race.queues import EPISODES_QUEUE, JUDGMENTS_QUEUE, RETRY_BACKOFF_BASE_S
from arena.race.worker_context import WorkerContext


def create_task_app(connector: BaseConnector, context: WorkerContext) -> App:
    """A procrastinate App with the race's two tasks bound to ``context``."""
    app = App(connector=connector)
    race = context.race
    episode_retry = RetryStrategy(max_attempts=race.episode_attempts, exponential_wait=RETRY_BACKOFF_BASE_S)
    judge_retry = RetryStrategy(max_attempts=race.judge_attempts, exponential_wait=RETRY_BACKOFF_BASE_S)

    @app.task(name="run_episode", queue=EPISODES_QUEUE, retry=episode_retry, pass_context=True)
    async def run_episode(job: JobContext, episode_id: int) -> str:
        return await run_episode_now(context, app, episode_id, job.job.id)

    @app.task(name="judge_episode", queue=JUDGMENTS_QUEUE, retry=judge_retry)
    async def judge_episode(episode_id: int) -> str:
        return await judge_episode_now(context, episode_id)

    return app
