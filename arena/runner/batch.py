"""Many episodes: K samples of one agent on a set of problems, C at a time,
each scored (strict by default) and appended to a JSONL file as it finishes,
so an interrupted run keeps every record already taken."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from arena.problems.model import Problem
from arena.runner.episode import AgentSource, EpisodeRunner
from arena.runner.record import EpisodeRecord
from arena.runner.verdict import score_episode
from arena.scoring.metrics import AsrSummary, asr, group_attempts, mean_pass_at_k, mean_pass_hat_k
from arena.scoring.outcome import OutcomeScore, ScoreMode


class BatchSummary(BaseModel):
    episodes: int
    asr: AsrSummary
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    pass_hat_k: dict[int, float] = Field(default_factory=dict)
    terminations: dict[str, int] = Field(default_factory=dict)


def ks_for(samples: int) -> list[int]:
    ks, k = [], 1
    while k <= samples:
        ks.append(k)
        k *= 2
    if samples not in ks:
        ks.append(samples)
    return ks


async def run_batch(
    runner: EpisodeRunner,
    agent: AgentSource,
    problems: list[Problem],
    *,
    model: str,
    samples: int = 1,
    concurrency: int = 2,
    mode: ScoreMode = ScoreMode.strict,
    out: Path | None = None,
    on_done: Callable[[EpisodeRecord], None] | None = None,
) -> tuple[list[EpisodeRecord], BatchSummary]:
    gate = asyncio.Semaphore(max(1, concurrency))
    records: list[EpisodeRecord] = []
    scores: list[OutcomeScore] = []
    handle = out.open("a", encoding="utf-8") if out else None

    async def one(problem: Problem, attempt: int) -> None:
        async with gate:
            record = await runner.run(agent, problem, model, attempt=attempt)
        # A crashed, timed-out or stopped episode is a result too: scored under the race's rule.
        score = score_episode(problem, record, runner.catalog, mode=mode)
        record.outcome = score.model_dump(mode="json")
        records.append(record)
        scores.append(score)
        if handle is not None:
            handle.write(record.model_dump_json() + "\n")
            handle.flush()
        if on_done is not None:
            on_done(record)

    try:
        await asyncio.gather(*(one(p, a) for p in problems for a in range(samples)))
    finally:
        if handle is not None:
            handle.close()
    attempts = group_attempts(scores)
    terminations: dict[str, int] = {}
    for record in records:
        terminations[record.termination.value] = terminations.get(record.termination.value, 0) + 1
    summary = BatchSummary(
        episodes=len(records),
        asr=asr(scores),
        pass_at_k={k: mean_pass_at_k(attempts, k) for k in ks_for(samples)},
        pass_hat_k={k: mean_pass_hat_k(attempts, k) for k in ks_for(samples)},
        terminations=terminations,
    )
    return records, summary
