"""Qualifying: each new submission runs the public suite; the close-enough ones race.

The qualifying score is the race score's formula (``arena.race.scoring``) on
the first ``qualifying_size`` public problems (by problem id),
``qualifying_attempts`` times each. The leader is the best qualifying score
among this cycle's entrants and the champion (its score from the cycle it
qualified in); an entrant races when its score is at least
``qualification_fraction`` x the leader's. The others leave the race
(``retired``, their source embargoed by the day rule).

The stage waits ``judge_timeout_s`` for judgments from the moment its
episodes are all done in this process (a restart waits afresh: the wait is
only ever longer, never shorter, than configured).
"""

from __future__ import annotations

import time

from sqlalchemy import select

from arena.problems.partitions import PartitionName
from arena.race import scoring
from arena.race.cycle import CycleContext
from arena.race.embargo import EmbargoRule, day_rule_end
from arena.race.resilience import in_thread
from arena.store import repositories as repo
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, EpisodeStage, Standing

QUALIFY_EPSILON = 1e-9  # a score equal to the threshold qualifies, whatever the float rounding


def _public_problems(ctx: CycleContext) -> list[str]:
    with ctx.store.transaction() as session:
        problems = repo.suite_problems(session, ctx.suite_id, PartitionName.public)
    return [p.id for p in problems][: ctx.race.qualifying_size]


def _champion_qualifying_score(ctx: CycleContext, champion: int | None) -> float | None:
    if champion is None:
        return None
    with ctx.store.transaction() as session:
        return session.execute(
            select(Standing.qualifying_score)
            .where(Standing.submission_id == champion, Standing.qualifying_score.is_not(None))
            .order_by(Standing.cycle.desc())
            .limit(1)
        ).scalar_one_or_none()


def _outcomes(ctx: CycleContext) -> list[scoring.EpisodeOutcome]:
    with ctx.store.transaction() as session:
        return scoring.load_outcomes(session, ctx.number, EpisodeStage.qualifying)


def _record(ctx: CycleContext, scores: dict[int, scoring.SubmissionScore], qualified: list[int],
            champion: int | None, champion_score: float | None) -> None:  # fmt: skip
    rule = EmbargoRule(
        cycles_after_champion=ctx.race.embargo_cycles_after_champion,
        days_after_submission=ctx.race.embargo_days_after_submission,
    )
    with ctx.store.transaction() as session:
        for submission_id, score in scores.items():
            repo.record_standing(
                session, repo.StandingIn(cycle=ctx.number, submission_id=submission_id, qualifying_score=score.score)
            )
            if submission_id in qualified:
                repo.set_status(session, submission_id, SubmissionStatus.qualified)
            else:
                info = repo.get_submission(session, submission_id)
                assert info is not None
                until = day_rule_end(info.submitted_at, rule, info.embargo_until)
                repo.set_status(session, submission_id, SubmissionStatus.retired, embargo_until=until)
        if champion is not None:
            repo.record_standing(
                session, repo.StandingIn(cycle=ctx.number, submission_id=champion, qualifying_score=champion_score)
            )


async def run(ctx: CycleContext) -> dict:
    intake = ctx.detail(CycleStage.intake)
    entrants: list[int] = intake.get("entrants", [])
    champion: int | None = intake.get("champion")
    if not entrants:
        return {"entrants": [], "qualified": [], "note": "no new submission this cycle"}
    problems = await in_thread(_public_problems, ctx)
    if not problems:
        raise RuntimeError(f"suite {ctx.suite_id} has no public problems to qualify on")
    await ctx.run_episodes(EpisodeStage.qualifying, entrants, problems, ctx.race.qualifying_attempts)
    unjudged = await ctx.dispatcher.wait_for_judgments(
        ctx.number, EpisodeStage.qualifying, time.time() + ctx.race.judge_timeout_s
    )
    outcomes = await in_thread(_outcomes, ctx)
    scores, exclusions = scoring.score_outcomes(outcomes, entrants)
    champion_score = await in_thread(_champion_qualifying_score, ctx, champion)
    candidates = [s.score for s in scores.values()] + ([champion_score] if champion_score is not None else [])
    leader = max(candidates)
    threshold = ctx.race.qualification_fraction * leader
    qualified = [s for s in entrants if scores[s].score + QUALIFY_EPSILON >= threshold]
    await in_thread(_record, ctx, scores, qualified, champion, champion_score)
    return {
        "entrants": entrants,
        "problems": problems,
        "attempts": ctx.race.qualifying_attempts,
        "scores": {str(k): v.model_dump() for k, v in scores.items()},
        "champion_qualifying_score": champion_score,
        "leader_score": leader,
        "threshold": threshold,
        "qualified": qualified,
        "not_qualified": [s for s in entrants if s not in qualified],
        "unjudged_at_timeout": unjudged,
        "excluded": [e.model_dump() for e in exclusions],
        "exclusion_rules": scoring.RULE_TEXT if exclusions else {},
    }
