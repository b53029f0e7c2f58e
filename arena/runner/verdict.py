"""An episode's outcome: its last recommendation scored, under the rule of how the episode ended.

The one place the race's workers (arena/race/episode_jobs.py) and the batch runner
(arena/runner/batch.py) score an episode record, so that both apply the same rule:
an episode the validator had to stop (``timeout``, ``limit``: ``Termination.can_succeed``)
is a failure whatever it recommended. Otherwise holding a worker until the wall clock
after recommending would cost the agent nothing.
"""

from __future__ import annotations

from arena.problems.model import Problem
from arena.runner.record import EpisodeRecord
from arena.scoring.outcome import OutcomeScore, ScoreMode, score_problem
from arena.shop.catalog import ProductLookup


def score_episode(
    problem: Problem, record: EpisodeRecord, catalog: ProductLookup, mode: ScoreMode = ScoreMode.strict
) -> OutcomeScore:
    outcome = score_problem(problem, record.final_recommendation, catalog, mode=mode)
    if not record.termination.can_succeed:
        # The answer's scores are kept (what it recommended, how close it came); only success is denied.
        outcome = outcome.model_copy(update={"success": False, "failed_by": record.termination.value})
    return outcome
