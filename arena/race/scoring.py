"""Stage scores: mean over a stage's episodes of outcome success x judge coefficient.

The rule for every episode of a submission in a stage (qualifying or race),
in this order:

1. ``failed`` (the validator gave up after ``episode_attempts`` validator-side
   errors): counts 0. Not excluded, so an agent cannot dodge a hard problem by
   breaking the runner.
2. done and unsuccessful: counts 0; the judgment does not matter (0 x anything).
3. done and successful with a done judgment: counts its coefficient.
4. done and successful without a done judgment when the stage's wait for
   judgments ran out (``judge_timeout_s``): **excluded**, from the numerator
   and the denominator, by the rule ``EXCLUDED_JUDGMENT_TIMEOUT``, and listed
   in the stage's detail. A judge failure is never a silent 0 (nor a silent 1).
5. not finished at all (only if the stage was forced on): excluded by
   ``EXCLUDED_UNFINISHED``.

A submission whose every episode is excluded scores 0 with ``counted == 0``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.store.models_race import Episode, EpisodeStage, EpisodeStatus, Judgment, JudgmentStatus

EXCLUDED_JUDGMENT_TIMEOUT = "judgment-timeout"
EXCLUDED_UNFINISHED = "unfinished"
RULE_TEXT = {
    EXCLUDED_JUDGMENT_TIMEOUT: "a successful episode whose judgment was still not done when the stage's wait for "
    "judgments ended is left out of its submission's score (numerator and denominator)",
    EXCLUDED_UNFINISHED: "an episode that never finished is left out of its submission's score",
}


class EpisodeOutcome(BaseModel):
    """What scoring needs of one episode: its result and its latest judgment."""

    episode_id: int
    submission_id: int
    problem_id: str
    attempt: int
    status: EpisodeStatus
    success: bool | None
    judgment: JudgmentStatus | None  # None: never judged
    coefficient: float | None  # of the latest done judgment


class Exclusion(BaseModel):
    episode_id: int
    submission_id: int
    problem_id: str
    attempt: int
    rule: str
    reason: str


class SubmissionScore(BaseModel):
    submission_id: int
    score: float  # mean of success x coefficient over counted episodes
    success_rate: float
    mean_coefficient: float | None  # over every judged episode, successful or not
    counted: int
    excluded: int
    failed: int  # episodes the validator gave up on (counted as 0)


def load_outcomes(session: Session, cycle: int, stage: EpisodeStage) -> list[EpisodeOutcome]:
    """Every episode of a cycle's stage with its latest judgment, in episode id order (two queries)."""
    episodes = session.execute(
        select(Episode.id, Episode.submission_id, Episode.problem_id, Episode.attempt, Episode.status, Episode.success)
        .where(Episode.cycle == cycle, Episode.stage == stage)
        .order_by(Episode.id)
    ).all()
    judgments = session.execute(
        select(Judgment.episode_id, Judgment.version, Judgment.status, Judgment.coefficient)
        .join(Episode, Episode.id == Judgment.episode_id)
        .where(Episode.cycle == cycle, Episode.stage == stage)
        .order_by(Judgment.episode_id, Judgment.version)
    ).all()
    latest_done: dict[int, float | None] = {}
    latest_status: dict[int, JudgmentStatus] = {}
    for row in judgments:
        latest_status[row.episode_id] = row.status
        if row.status is JudgmentStatus.done:
            latest_done[row.episode_id] = row.coefficient
    return [
        EpisodeOutcome(
            episode_id=e.id,
            submission_id=e.submission_id,
            problem_id=e.problem_id,
            attempt=e.attempt,
            status=e.status,
            success=e.success,
            judgment=JudgmentStatus.done if e.id in latest_done else latest_status.get(e.id),
            coefficient=latest_done.get(e.id),
        )
        for e in episodes
    ]


def unjudged(outcomes: Iterable[EpisodeOutcome]) -> list[int]:
    """Done episodes without a done judgment: what a stage waits for."""
    return [o.episode_id for o in outcomes if o.status is EpisodeStatus.done and o.judgment is not JudgmentStatus.done]


def score_outcomes(
    outcomes: Iterable[EpisodeOutcome], submission_ids: Iterable[int]
) -> tuple[dict[int, SubmissionScore], list[Exclusion]]:
    """Each submission's score by the module's rule, and every exclusion with its rule."""
    by_submission: dict[int, list[EpisodeOutcome]] = defaultdict(list)
    for outcome in outcomes:
        by_submission[outcome.submission_id].append(outcome)
    scores: dict[int, SubmissionScore] = {}
    exclusions: list[Exclusion] = []
    for submission_id in sorted(set(submission_ids)):
        values: list[float] = []
        successes = failed = 0
        coefficients: list[float] = []
        for o in by_submission.get(submission_id, []):
            if o.coefficient is not None:
                coefficients.append(o.coefficient)
            if o.status is EpisodeStatus.failed:
                failed += 1
                values.append(0.0)
            elif o.status is not EpisodeStatus.done:
                exclusions.append(_exclusion(o, EXCLUDED_UNFINISHED, f"episode is {o.status.value}"))
            elif not o.success:
                values.append(0.0)
            elif o.coefficient is not None:
                successes += 1
                values.append(o.coefficient)
            else:
                state = o.judgment.value if o.judgment is not None else "never started"
                exclusions.append(_exclusion(o, EXCLUDED_JUDGMENT_TIMEOUT, f"successful, judgment {state}"))
        counted = len(values)
        scores[submission_id] = SubmissionScore(
            submission_id=submission_id,
            score=round(sum(values) / counted, 9) if counted else 0.0,
            success_rate=round(successes / counted, 9) if counted else 0.0,
            mean_coefficient=round(sum(coefficients) / len(coefficients), 9) if coefficients else None,
            counted=counted,
            excluded=sum(1 for e in exclusions if e.submission_id == submission_id),
            failed=failed,
        )
    return scores, exclusions


def _exclusion(outcome: EpisodeOutcome, rule: str, reason: str) -> Exclusion:
    return Exclusion(
        episode_id=outcome.episode_id,
        submission_id=outcome.submission_id,
        problem_id=outcome.problem_id,
        attempt=outcome.attempt,
        rule=rule,
        reason=reason,
    )
