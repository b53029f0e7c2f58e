"""Qualifying: each new submission runs the public suite; the close-enough ones race.

The qualifying score is the race score's formula (``arena.race.stage_scores``) on
the first ``qualifying_size`` public problems (by problem id),
``qualifying_attempts`` times each. The leader is the best qualifying score
among this cycle's entrants and the champion (its per-problem values from the
cycle it qualified in). An entrant races unless it is *confidently* worse than
``qualification_fraction`` x the leader: paired on the problems both ran, the
upper bound of mean(entrant - fraction x leader) at ``confidence`` (a paired
bootstrap seeded by the cycle's draw, ``arena.scoring.paired``) is below 0.
Six problems cannot tell 0.333 from 0.456, so noise knocks nobody out. The
others leave the race (``retired``, their source embargoed by the day rule).

The stage waits ``judge_timeout_s`` for judgments from the moment its
episodes are all done in this process (a restart waits afresh: the wait is
only ever longer, never shorter, than configured).
"""

from __future__ import annotations

import time

from arena.problems.partitions import PartitionName
from arena.race import stage_scores
from arena.race.context import CycleContext
from arena.race.embargo import EmbargoRule, day_rule_end
from arena.scoring.paired import compare, confidently_worse, paired_values
from arena.store import judgments as judgment_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, EpisodeStage
from arena.store.resilience import in_thread
from arena.store.standings import StandingIn


def _public_problems(ctx: CycleContext) -> list[str]:
    with ctx.store.transaction() as session:
        problems = suite_rows.suite_problems(session, ctx.suite_id, PartitionName.public)
    return [p.id for p in problems][: ctx.race.qualifying_size]


def _champion_qualifying(ctx: CycleContext, champion: int | None) -> tuple[float | None, dict[str, float]]:
    """The champion's qualifying score and per-problem values, from the latest cycle it qualified in."""
    if champion is None:
        return None, {}
    with ctx.store.transaction() as session:
        last = standing_rows.last_qualifying_score(session, champion, before_cycle=ctx.number)
        if last is None:
            return None, {}
        outcomes = judgment_rows.stage_outcomes(session, last.cycle, EpisodeStage.qualifying)
    return last.score, stage_scores.problem_values(outcomes, champion)


def _outcomes(ctx: CycleContext) -> list[judgment_rows.EpisodeOutcome]:
    with ctx.store.transaction() as session:
        return judgment_rows.stage_outcomes(session, ctx.number, EpisodeStage.qualifying)


def _record(ctx: CycleContext, scores: dict[int, stage_scores.SubmissionScore], qualified: list[int],
            champion: int | None, champion_score: float | None) -> None:  # fmt: skip
    rule = EmbargoRule(
        cycles_after_champion=ctx.race.embargo_cycles_after_champion,
        days_after_submission=ctx.race.embargo_days_after_submission,
    )
    with ctx.store.transaction() as session:
        for submission_id, score in scores.items():
            standing_rows.record_standing(
                session, StandingIn(cycle=ctx.number, submission_id=submission_id, qualifying_score=score.score)
            )
            if submission_id in qualified:
                submission_rows.set_status(session, submission_id, SubmissionStatus.qualified)
            else:
                info = submission_rows.get_submission(session, submission_id)
                assert info is not None
                until = day_rule_end(info.submitted_at, rule, info.embargo_until)
                submission_rows.set_status(session, submission_id, SubmissionStatus.retired, embargo_until=until)
        if champion is not None:
            standing_rows.record_standing(
                session, StandingIn(cycle=ctx.number, submission_id=champion, qualifying_score=champion_score)
            )


async def run(ctx: CycleContext) -> dict:
    closed = ctx.detail(CycleStage.intake)  # what closing intake fixed: the entrants and the sitting champion
    entrants: list[int] = closed.get("entrants", [])
    champion: int | None = closed.get("champion")
    if not entrants:
        return {"entrants": [], "qualified": [], "note": "no new submission this cycle"}
    problems = await in_thread(_public_problems, ctx)
    if not problems:
        raise RuntimeError(f"suite {ctx.suite_id} has no public problems to qualify on")
    await ctx.run_episodes(EpisodeStage.qualifying, entrants, problems, ctx.race.qualifying_attempts)
    unjudged = await ctx.dispatcher.wait_for_judgments(
        ctx.number, EpisodeStage.qualifying, time.time() + ctx.race.judge_timeout_s
    )
    await ctx.check_judgments(EpisodeStage.qualifying, unjudged, entrants)
    outcomes = await in_thread(_outcomes, ctx)
    scores, exclusions = stage_scores.score_outcomes(outcomes, entrants)
    champion_score, champion_values = await in_thread(_champion_qualifying, ctx, champion)
    values = {s: stage_scores.problem_values(outcomes, s) for s in entrants}
    candidates = {s: scores[s].score for s in entrants}
    if champion_score is not None:
        assert champion is not None  # only a champion has a qualifying score to defend
        values[champion] = champion_values
        candidates[champion] = champion_score
    leader_id = max(candidates, key=lambda s: (candidates[s], -s))
    leader = candidates[leader_id]
    threshold = ctx.race.qualification_fraction * leader
    comparisons = {}
    for submission_id in entrants:
        a, b = paired_values(values[submission_id], values[leader_id])
        comparisons[submission_id] = compare(
            a, b, seed=f"{ctx.seed}:qualifying:{submission_id}:{leader_id}",
            scale_b=ctx.race.qualification_fraction, confidence=ctx.race.confidence,
        )  # fmt: skip
    qualified = [s for s in entrants if not confidently_worse(comparisons[s])]
    await in_thread(_record, ctx, scores, qualified, champion, champion_score)
    return {
        "entrants": entrants,
        "problems": problems,
        "attempts": ctx.race.qualifying_attempts,
        "scores": {str(k): v.model_dump() for k, v in scores.items()},
        "champion_qualifying_score": champion_score,
        "leader": leader_id,
        "leader_score": leader,
        "threshold": threshold,
        "rule": f"an entrant races unless confidently ({ctx.race.confidence:.0%}, paired bootstrap) below "
        f"{ctx.race.qualification_fraction} x the leader on the same problems",
        "comparisons": {str(k): v.model_dump() for k, v in comparisons.items()},
        "qualified": qualified,
        "not_qualified": [s for s in entrants if s not in qualified],
        "unjudged_at_timeout": unjudged,
        "excluded": [e.model_dump() for e in exclusions],
        "exclusion_rules": stage_scores.RULE_TEXT if exclusions else {},
    }
