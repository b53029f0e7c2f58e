"""Stage scores: mean over a stage's episodes of outcome success x judge coefficient.

The rule for every episode of a submission in a stage (qualifying or race),
in this order:

1. ``failed`` (the validator gave up after ``episode_attempts`` tries) with the
   failure charged to the submission (the canary ran clean on the same sandbox,
   so the failure follows the submission; or its workers kept dying): counts 0.
   Not excluded, so an agent cannot dodge a hard problem by breaking the runner.
   ``failed`` on a validator fault the canary shared is **excluded** by
   ``EXCLUDED_VALIDATOR_FAULT``: never a miner's loss (and it halts the cycle,
   ``arena.race.halt``, so no decision is taken on such a stage anyway).
2. done and unsuccessful: counts 0; the judgment does not matter (0 x anything).
3. done and successful with a done judgment: counts its coefficient.
4. done and successful without a done judgment when the stage's wait for
   judgments ran out (``judge_timeout_s``): **excluded**, from the numerator
   and the denominator, by the rule ``EXCLUDED_JUDGMENT_TIMEOUT``, and listed
   in the stage's detail. A judge failure is never a silent 0 (nor a silent 1).
5. not finished at all (only if the stage was forced on): excluded by
   ``EXCLUDED_UNFINISHED``.

A submission whose every episode is excluded scores 0 with ``counted == 0``.

``problem_values`` gives the same per-episode values per problem (the mean
over its counted attempts): what the paired statistics of qualifying and
promotion compare (``arena.scoring.paired``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel

from arena.store.judgments import EpisodeOutcome
from arena.store.models_race import EpisodeStatus, JudgmentStatus

EXCLUDED_JUDGMENT_TIMEOUT = "judgment-timeout"
EXCLUDED_UNFINISHED = "unfinished"
EXCLUDED_VALIDATOR_FAULT = "validator-fault"
RULE_TEXT = {
    EXCLUDED_VALIDATOR_FAULT: "an episode given up on for a validator fault that the canary shared (sandbox, model "
    "server, runner) is left out of its submission's score: the validator's failure is never the miner's",
    EXCLUDED_JUDGMENT_TIMEOUT: "a successful episode whose judgment was still not done when the stage's wait for "
    "judgments ended is left out of its submission's score (numerator and denominator)",
    EXCLUDED_UNFINISHED: "an episode that never finished is left out of its submission's score",
}


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
            value = episode_value(o)
            if isinstance(value, Exclusion):
                exclusions.append(value)
                continue
            values.append(value)
            failed += o.status is EpisodeStatus.failed
            successes += bool(o.status is EpisodeStatus.done and o.success)  # judged: the unjudged are excluded
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


def episode_value(o: EpisodeOutcome) -> float | Exclusion:
    """One episode's contribution by the module's rule: a value in [0, 1], or the exclusion that drops it."""
    if o.status is EpisodeStatus.failed:
        if o.fault_kind is not None and o.fault_charged is False:
            return _exclusion(o, EXCLUDED_VALIDATOR_FAULT, f"{o.fault_kind} fault, shared by the canary")
        return 0.0
    if o.status is not EpisodeStatus.done:
        return _exclusion(o, EXCLUDED_UNFINISHED, f"episode is {o.status.value}")
    if not o.success:
        return 0.0
    if o.coefficient is not None:
        return o.coefficient
    state = o.judgment.value if o.judgment is not None else "never started"
    return _exclusion(o, EXCLUDED_JUDGMENT_TIMEOUT, f"successful, judgment {state}")


def problem_values(outcomes: Iterable[EpisodeOutcome], submission_id: int) -> dict[str, float]:
    """A submission's value per problem: the mean over its counted attempts (problems with none are left out)."""
    per_problem: dict[str, list[float]] = defaultdict(list)
    for o in outcomes:
        if o.submission_id != submission_id:
            continue
        value = episode_value(o)
        if not isinstance(value, Exclusion):
            per_problem[o.problem_id].append(value)
    return {p: round(sum(v) / len(v), 9) for p, v in sorted(per_problem.items())}


def _exclusion(outcome: EpisodeOutcome, rule: str, reason: str) -> Exclusion:
    return Exclusion(
        episode_id=outcome.episode_id,
        submission_id=outcome.submission_id,
        problem_id=outcome.problem_id,
        attempt=outcome.attempt,
        rule=rule,
        reason=reason,
    )
