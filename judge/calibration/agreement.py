"""How far a judge agrees with labelled trajectories, and what it costs.

Agreement: exact accuracy, accuracy within one level, Cohen's kappa with
quadratic weights over the six ordinal levels (a 0.9 judged 0.7 is a smaller
miss than a 0.9 judged 0.1), and the confusion matrix. Cost: judge requests
and tokens, per episode and per judge model; latency per judgment. Pending
episodes are counted and named, and left out of the agreement figures (a
failure to judge is not a disagreement, nor a 0).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, Field

from judge.batch import Judge, judge_batch
from judge.records import LabelledEpisode
from judge.rubric import LEVELS, RUBRIC_VERSION, level_index
from judge.verdict import Attempt, JudgmentOutcome, ReasoningJudgment


class Confusion(BaseModel):
    levels: list[float] = Field(default_factory=lambda: list(LEVELS))
    matrix: list[list[int]]  # matrix[gold][predicted], in ``levels`` order


class Latency(BaseModel):
    mean_ms: float = 0.0
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    max_ms: float = 0.0

    @classmethod
    def of(cls, samples: Sequence[float]) -> Latency:
        if not samples:
            return cls()
        ordered = sorted(samples)

        def rank(q: float) -> float:  # nearest rank
            return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

        return cls(
            mean_ms=round(sum(ordered) / len(ordered), 3),
            p50_ms=round(rank(0.5), 3),
            p95_ms=round(rank(0.95), 3),
            max_ms=round(ordered[-1], 3),
        )


class ModelUsage(BaseModel):
    """One judge model's share: how often it was asked, failed, and what it spent."""

    model: str
    requests: int
    failures: int
    prompt_tokens: int
    completion_tokens: int
    latency: Latency


class Cost(BaseModel):
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_per_episode: float = 0.0


class Miss(BaseModel):
    case: str
    episode_id: str
    gold: float
    predicted: float
    explanation: str


class CalibrationReport(BaseModel):
    judge: str
    rubric_version: str = RUBRIC_VERSION
    n: int
    judged: int
    pending: int
    accuracy: float
    within_one_level: float
    kappa_quadratic: float
    confusion: Confusion
    cost: Cost
    latency: Latency  # per episode, retries included
    by_model: list[ModelUsage] = Field(default_factory=list)
    misses: list[Miss] = Field(default_factory=list)
    pending_cases: list[str] = Field(default_factory=list)
    wall_s: float


def confusion_matrix(gold: Sequence[float], predicted: Sequence[float]) -> Confusion:
    matrix = [[0] * len(LEVELS) for _ in LEVELS]
    for g, p in zip(gold, predicted, strict=True):
        matrix[level_index(g)][level_index(p)] += 1
    return Confusion(matrix=matrix)


def quadratic_kappa(gold: Sequence[float], predicted: Sequence[float]) -> float:
    """Cohen's kappa with weights (i - j)^2 / (k - 1)^2 over the k rubric levels.
    1 is perfect agreement, 0 what chance gives; when chance alone cannot disagree
    (every label and prediction on one level) it is 1.0 if they agree."""
    if not gold:
        return 0.0
    k = len(LEVELS)
    observed = confusion_matrix(gold, predicted).matrix
    n = len(gold)
    gold_totals = [sum(row) for row in observed]
    predicted_totals = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    weight = [[(i - j) ** 2 / (k - 1) ** 2 for j in range(k)] for i in range(k)]
    seen = sum(weight[i][j] * observed[i][j] for i in range(k) for j in range(k))
    chance = sum(weight[i][j] * gold_totals[i] * predicted_totals[j] / n for i in range(k) for j in range(k))
    if chance == 0:
        return 1.0 if seen == 0 else 0.0
    return round(1.0 - seen / chance, 6)


def _by_model(attempts: list[Attempt]) -> list[ModelUsage]:
    groups: dict[str, list[Attempt]] = defaultdict(list)
    for attempt in attempts:
        groups[attempt.model].append(attempt)
    return [
        ModelUsage(
            model=model,
            requests=len(items),
            failures=sum(not a.ok for a in items),
            prompt_tokens=sum(a.prompt_tokens for a in items),
            completion_tokens=sum(a.completion_tokens for a in items),
            latency=Latency.of([a.latency_ms for a in items]),
        )
        for model, items in sorted(groups.items())
    ]


def summarize(
    judge_name: str, labels: Sequence[LabelledEpisode], outcomes: Sequence[JudgmentOutcome], wall_s: float
) -> CalibrationReport:
    gold: list[float] = []
    predicted: list[float] = []
    misses: list[Miss] = []
    pending: list[str] = []
    attempts: list[Attempt] = []
    cost = Cost()
    for label, outcome in zip(labels, outcomes, strict=True):
        cost.requests += outcome.cost.requests
        cost.prompt_tokens += outcome.cost.prompt_tokens
        cost.completion_tokens += outcome.cost.completion_tokens
        attempts += outcome.attempts if isinstance(outcome, ReasoningJudgment) else outcome.errors
        if not isinstance(outcome, ReasoningJudgment):
            pending.append(label.case)
            continue
        gold.append(label.gold)
        predicted.append(outcome.level)
        if outcome.level != label.gold:
            misses.append(
                Miss(
                    case=label.case,
                    episode_id=outcome.episode_id,
                    gold=label.gold,
                    predicted=outcome.level,
                    explanation=outcome.explanation,
                )
            )
    judged = len(gold)
    cost.tokens_per_episode = round((cost.prompt_tokens + cost.completion_tokens) / max(1, len(labels)), 1)
    near = sum(abs(level_index(g) - level_index(p)) <= 1 for g, p in zip(gold, predicted, strict=True))
    return CalibrationReport(
        judge=judge_name,
        n=len(labels),
        judged=judged,
        pending=len(pending),
        accuracy=round((judged - len(misses)) / judged, 6) if judged else 0.0,
        within_one_level=round(near / judged, 6) if judged else 0.0,
        kappa_quadratic=quadratic_kappa(gold, predicted),
        confusion=confusion_matrix(gold, predicted),
        cost=cost,
        latency=Latency.of([o.latency_ms for o in outcomes]),
        by_model=_by_model(attempts),
        misses=misses,
        pending_cases=pending,
        wall_s=round(wall_s, 3),
    )


async def calibrate(
    judge: Judge,
    labels: Sequence[LabelledEpisode],
    *,
    concurrency: int = 16,
    pending_rounds: int = 0,
    pending_pause_s: float = 0.0,
) -> CalibrationReport:
    started = time.perf_counter()
    outcomes = await judge_batch(
        judge,
        [label.record for label in labels],
        concurrency=concurrency,
        pending_rounds=pending_rounds,
        pending_pause_s=pending_pause_s,
    )
    return summarize(judge.name, labels, outcomes, time.perf_counter() - started)
