"""Episodes as the API lists them: each with its latest done judgment's coefficient; a submission's result rows.

Held-out problems are left out of every read here: they are never served and count in no aggregate.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from arena.problems.model import Intent
from arena.problems.partitions import PartitionName
from arena.store.models import ProblemRow
from arena.store.models_race import (
    Cycle,
    CycleStage,
    Episode,
    EpisodeStage,
    EpisodeStatus,
    Judgment,
    JudgmentStatus,
)


class ListedEpisode(BaseModel):
    """An episode without its record and outcome: its keys, status, scores and how it ended."""

    id: int
    cycle: int
    stage: EpisodeStage
    submission_id: int
    suite_id: str
    problem_id: str
    attempt: int
    status: EpisodeStatus
    termination: str | None  # the record's, None while unrun
    success: bool | None
    rule: float | None
    coefficient: float | None  # the latest done judgment's
    created_at: datetime
    finished_at: datetime | None


class ResultRow(BaseModel):
    """One episode of a submission as its per-intent results count it."""

    cycle: int
    stage: EpisodeStage
    status: EpisodeStatus
    success: bool | None
    rule: float | None
    intent: Intent
    cycle_finished: bool
    coefficient: float | None


def _latest_coefficients():
    """Subquery: each episode's latest done judgment coefficient."""
    newest = (
        select(Judgment.episode_id, func.max(Judgment.version).label("version"))
        .where(Judgment.status == JudgmentStatus.done)
        .group_by(Judgment.episode_id)
        .subquery()
    )
    return (
        select(Judgment.episode_id, Judgment.coefficient)
        .join(newest, and_(newest.c.episode_id == Judgment.episode_id, newest.c.version == Judgment.version))
        .subquery()
    )


def result_rows(session: Session, submission_id: int) -> list[ResultRow]:
    """Every episode of the submission on a problem that is not held out, with its intent and cycle's state."""
    coefficients = _latest_coefficients()
    statement = (
        select(
            Episode.cycle,
            Episode.stage,
            Episode.status,
            Episode.success,
            Episode.rule,
            ProblemRow.intent,
            Cycle.stage.label("cycle_stage"),
            coefficients.c.coefficient,
        )
        .join(ProblemRow, and_(ProblemRow.suite_id == Episode.suite_id, ProblemRow.problem_id == Episode.problem_id))
        .join(Cycle, Cycle.number == Episode.cycle)
        .outerjoin(coefficients, coefficients.c.episode_id == Episode.id)
        .where(Episode.submission_id == submission_id, ProblemRow.partition != PartitionName.heldout)
    )
    rows = []
    for row in session.execute(statement).mappings():
        facts = {key: value for key, value in row.items() if key != "cycle_stage"}
        rows.append(ResultRow(**facts, cycle_finished=row["cycle_stage"] is CycleStage.done))
    return rows


def episode_page(
    session: Session,
    *,
    submission_id: int | None = None,
    cycle: int | None = None,
    stage: EpisodeStage | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> tuple[int, list[ListedEpisode]]:
    """How many episodes match (held-out ones never do), and the page of them by id."""
    coefficients = _latest_coefficients()
    visible = [
        ~select(ProblemRow.problem_id)
        .where(
            ProblemRow.suite_id == Episode.suite_id,
            ProblemRow.problem_id == Episode.problem_id,
            ProblemRow.partition == PartitionName.heldout,
        )
        .exists(),
    ]
    if submission_id is not None:
        visible.append(Episode.submission_id == submission_id)
    if cycle is not None:
        visible.append(Episode.cycle == cycle)
    if stage is not None:
        visible.append(Episode.stage == stage)
    total = session.execute(select(func.count()).select_from(Episode).where(*visible)).scalar_one()
    columns = [
        getattr(Episode, name) for name in ListedEpisode.model_fields if name not in ("termination", "coefficient")
    ]
    statement = (
        select(*columns, coefficients.c.coefficient, Episode.record["termination"].as_string().label("termination"))
        .outerjoin(coefficients, coefficients.c.episode_id == Episode.id)
        .where(*visible)
        .order_by(Episode.id)
        .offset(offset)
        .limit(limit)
    )
    return total, [ListedEpisode.model_validate(dict(row)) for row in session.execute(statement).mappings()]
