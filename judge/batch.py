"""Judging many episodes: a bounded pool of workers, then more passes over the pending ones.

An episode whose judgment is pending after a pass is tried again (after a
pause: a judge server that was restarting has time to come back) up to
``pending_rounds`` more times; what is still pending then is returned as
pending, with every attempt of every round kept, for the caller to store and
retry later. A judgment reached on a later round keeps the failed attempts of
the earlier ones too: nothing about a failure is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from arena.runner.record import EpisodeRecord
from judge.rubric import RUBRIC_VERSION
from judge.verdict import JudgmentOutcome, JudgmentPending, ReasoningJudgment

logger = logging.getLogger(__name__)


class Judge(Protocol):
    """A judge. ``judge`` never holds the event loop for long (CPU work runs in a thread), so a worker that
    serves episodes' tool servers on the same loop can await it directly."""

    @property
    def name(self) -> str: ...

    async def judge(self, record: EpisodeRecord) -> JudgmentOutcome: ...

    async def aclose(self) -> None: ...


async def judge_guarded(judge: Judge, record: EpisodeRecord) -> JudgmentOutcome:
    """The judge's outcome; a crash is a pending judgment naming it."""
    try:
        return await judge.judge(record)
    except Exception as exc:  # a judge bug leaves the episode pending, loudly, not unjudged and silent
        logger.exception("judge %s crashed on %s", judge.name, record.episode_id)
        return JudgmentPending(
            episode_id=record.episode_id,
            reason=f"the judge crashed: {type(exc).__name__}: {exc}",
            attempts=0,
            judge=judge.name,
            rubric_version=RUBRIC_VERSION,
        )


async def _pass(
    judge: Judge,
    records: Sequence[EpisodeRecord],
    indexes: list[int],
    concurrency: int,
    done: Callable[[int, JudgmentOutcome], None],
) -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in indexes:
        queue.put_nowait(index)

    async def worker() -> None:
        while not queue.empty():
            index = queue.get_nowait()
            done(index, await judge_guarded(judge, records[index]))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(indexes)) or 1)))


def _merge(previous: JudgmentPending, outcome: JudgmentOutcome) -> JudgmentOutcome:
    """Carry the earlier rounds' attempts and cost into the newer outcome."""
    outcome.cost.add(previous.cost)
    outcome.latency_ms += previous.latency_ms
    if isinstance(outcome, ReasoningJudgment):
        outcome.attempts = [*previous.errors, *outcome.attempts]
        return outcome
    outcome.attempts += previous.attempts
    outcome.rounds = previous.rounds + 1
    outcome.errors = [*previous.errors, *outcome.errors]
    return outcome


async def judge_batch(
    judge: Judge,
    records: Sequence[EpisodeRecord],
    *,
    concurrency: int = 16,
    pending_rounds: int = 0,
    pending_pause_s: float = 0.0,
    on_final: Callable[[JudgmentOutcome], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> list[JudgmentOutcome]:
    """One outcome per record, in input order. ``on_final`` sees each outcome once it is final
    (a judgment, or pending after the last round), in completion order."""
    outcomes: dict[int, JudgmentOutcome] = {}
    todo = list(range(len(records)))
    for round_number in range(pending_rounds + 1):
        if round_number:
            logger.info("retrying %d pending judgment(s) in %.1fs", len(todo), pending_pause_s)
            await sleep(pending_pause_s)
        still_pending: list[int] = []
        last_round = round_number == pending_rounds

        def done(
            index: int, outcome: JudgmentOutcome, last_round: bool = last_round, retry: list[int] = still_pending
        ) -> None:
            previous = outcomes.get(index)
            if isinstance(previous, JudgmentPending):
                outcome = _merge(previous, outcome)
            outcomes[index] = outcome
            if isinstance(outcome, JudgmentPending) and not last_round:
                retry.append(index)
            elif on_final is not None:
                on_final(outcome)

        await _pass(judge, records, todo, concurrency, done)
        todo = sorted(still_pending)
        if not todo:
            break
    return [outcomes[i] for i in range(len(records))]
