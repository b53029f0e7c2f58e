"""The judgment job: judge a stored episode (``judge.stored_episodes``), and retry while it stays pending."""

from __future__ import annotations

from arena.race.worker_context import WorkerContext
from judge.stored_episodes import judge_stored_episode
from judge.verdict import JudgmentPending


class JudgmentStillPending(RuntimeError):
    """The judge could not judge the episode this time; the job is retried with backoff."""


async def judge_episode_now(ctx: WorkerContext, episode_id: int) -> str:
    """The body of ``judge_episode``. A failure is recorded on the pending version and raised (retried):
    never a silent coefficient. A pending judgment whose judge canary fails too is marked a judge outage."""
    outcome = await judge_stored_episode(ctx.store, ctx.judge, episode_id, canary=True)
    if outcome is None:
        return "nothing to judge"
    if isinstance(outcome, JudgmentPending):
        raise JudgmentStillPending(f"episode {episode_id}: judgment pending: {outcome.reason}")
    return f"judged level {outcome.level}"
