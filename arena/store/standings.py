"""Standings per cycle and the weights each cycle sent.

Standings are a cycle's result table: one row per submission per cycle, so
earlier cycles stay as they were. Weights are a log of every attempt to set
them, failures included (a trigger keeps it append-only).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.store.db import StoreError, dialect_insert
from arena.store.models import utcnow
from arena.store.models_race import Cycle, Standing, WeightsSent

STANDING_FIELDS = ("qualifying_score", "race_score", "success_rate", "mean_coefficient", "rank", "is_champion")


class StandingIn(BaseModel):
    """One submission's result in one cycle. Unset fields keep what an earlier stage stored."""

    cycle: int
    submission_id: int
    qualifying_score: float | None = None
    race_score: float | None = None
    success_rate: float | None = Field(None, ge=0.0, le=1.0)
    mean_coefficient: float | None = None
    rank: int | None = Field(None, ge=1)
    is_champion: bool = False


class StandingInfo(StandingIn):
    model_config = ConfigDict(from_attributes=True)

    id: int


class WeightsInfo(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    cycle: int
    uids: list[int]
    weights: list[float]
    block: int | None
    ok: bool
    message: str
    sent_at: datetime


def record_standing(session: Session, standing: StandingIn) -> StandingInfo:
    """Insert or update the (cycle, submission) row: qualifying fills some fields, scoring the rest."""
    given = standing.model_dump(exclude_unset=True)
    insert = dialect_insert(session, Standing).values(**standing.model_dump())
    updates = {name: insert.excluded[name] for name in STANDING_FIELDS if name in given}
    if updates:
        statement = insert.on_conflict_do_update(index_elements=["cycle", "submission_id"], set_=updates)
    else:
        statement = insert.on_conflict_do_nothing(index_elements=["cycle", "submission_id"])
    session.execute(statement)
    row = session.scalars(
        select(Standing)
        .where(Standing.cycle == standing.cycle, Standing.submission_id == standing.submission_id)
        .execution_options(populate_existing=True)
    ).one()
    return StandingInfo.model_validate(row)


def list_standings(session: Session, cycle: int) -> list[StandingInfo]:
    """A cycle's table: ranked rows first by rank, then the unranked by submission id."""
    rows = session.scalars(
        select(Standing)
        .where(Standing.cycle == cycle)
        .order_by(Standing.rank.is_(None), Standing.rank, Standing.submission_id)
    )
    return [StandingInfo.model_validate(row) for row in rows]


def finished_standings(session: Session) -> list[StandingInfo]:
    """Every finished cycle's table, oldest cycle first, each ranked then unranked as ``list_standings``: the
    history the front page and ``/v1/history`` tell (a running cycle's qualifying rows are no result yet)."""
    rows = session.scalars(
        select(Standing)
        .join(Cycle, Cycle.number == Standing.cycle)
        .where(Cycle.finished_at.is_not(None))
        .order_by(Standing.cycle, Standing.rank.is_(None), Standing.rank, Standing.submission_id)
    )
    return [StandingInfo.model_validate(row) for row in rows]


def champion(session: Session, *, up_to_cycle: int | None = None) -> StandingInfo | None:
    """The champion of the latest cycle (up to ``up_to_cycle``) that crowned one."""
    statement = select(Standing).where(Standing.is_champion.is_(True))
    if up_to_cycle is not None:
        statement = statement.where(Standing.cycle <= up_to_cycle)
    row = session.scalars(statement.order_by(Standing.cycle.desc()).limit(1)).one_or_none()
    return None if row is None else StandingInfo.model_validate(row)


def standings_of_submission(session: Session, submission_id: int) -> list[StandingInfo]:
    """The submission's row in every cycle it stood in, oldest cycle first."""
    rows = session.scalars(select(Standing).where(Standing.submission_id == submission_id).order_by(Standing.cycle))
    return [StandingInfo.model_validate(row) for row in rows]


def latest_ranked_cycle(session: Session) -> int | None:
    """The latest finished cycle with standings: a running cycle already holds qualifying rows, not yet a ranking."""
    return session.execute(
        select(func.max(Standing.cycle))
        .join(Cycle, Cycle.number == Standing.cycle)
        .where(Cycle.finished_at.is_not(None))
    ).scalar_one_or_none()


class Reign(BaseModel):
    """A submission's history as champion (the facts the embargo rule reads)."""

    last_reign_cycle: int | None = None  # the latest cycle it was champion in (None: never reigned)
    dethroned_cycle: int | None = None  # the first later cycle that crowned another submission
    until_cycle_finished_at: datetime | None = None  # when cycle dethroned + ``cycles_after`` finished (None: not yet)


def reign(session: Session, submission_id: int, cycles_after: int) -> Reign:
    """When the submission last reigned, which cycle dethroned it, and whether cycle dethroned + N finished."""
    last = session.execute(
        select(func.max(Standing.cycle)).where(Standing.submission_id == submission_id, Standing.is_champion.is_(True))
    ).scalar_one_or_none()
    if last is None:
        return Reign()
    dethroned = session.execute(
        select(func.min(Standing.cycle)).where(
            Standing.cycle > last, Standing.is_champion.is_(True), Standing.submission_id != submission_id
        )
    ).scalar_one_or_none()
    finished = None
    if dethroned is not None:
        finished = session.execute(
            select(Cycle.finished_at).where(Cycle.number == dethroned + cycles_after)
        ).scalar_one_or_none()
    return Reign(last_reign_cycle=last, dethroned_cycle=dethroned, until_cycle_finished_at=finished)


class QualifyingScore(BaseModel):
    cycle: int
    score: float


def last_qualifying_score(session: Session, submission_id: int, *, before_cycle: int) -> QualifyingScore | None:
    """The submission's qualifying score of the latest cycle before ``before_cycle`` that recorded one."""
    row = session.execute(
        select(Standing.cycle, Standing.qualifying_score)
        .where(
            Standing.submission_id == submission_id,
            Standing.qualifying_score.is_not(None),
            Standing.cycle < before_cycle,
        )
        .order_by(Standing.cycle.desc())
        .limit(1)
    ).one_or_none()
    return None if row is None else QualifyingScore(cycle=row.cycle, score=row.qualifying_score)


def first_crowned(session: Session, submission_id: int) -> int | None:
    """The first cycle that crowned the submission champion."""
    return session.execute(
        select(func.min(Standing.cycle)).where(Standing.submission_id == submission_id, Standing.is_champion.is_(True))
    ).scalar_one_or_none()


def record_weights(
    session: Session,
    cycle: int,
    uids: list[int],
    weights: list[float],
    *,
    ok: bool,
    block: int | None = None,
    message: str = "",
    now: datetime | None = None,
) -> WeightsInfo:
    """Log one attempt to set weights for ``cycle``: what was sent and the chain's answer
    (``record_weights(s, cycle, **receipt.model_dump())`` for a chain ``WeightsReceipt``)."""
    if session.get(Cycle, cycle) is None:
        raise StoreError(f"cycle {cycle} does not exist")
    if len(uids) != len(weights):
        raise StoreError(f"cycle {cycle}: {len(uids)} uids but {len(weights)} weights")
    row = WeightsSent(
        cycle=cycle,
        uids=[int(u) for u in uids],
        weights=[float(w) for w in weights],
        block=block,
        ok=ok,
        message=message,
        sent_at=now or utcnow(),
    )
    session.add(row)
    session.flush()
    return WeightsInfo.model_validate(row)


def weights_sent(session: Session, *, cycle: int | None = None) -> list[WeightsInfo]:
    statement = select(WeightsSent).order_by(WeightsSent.id)
    if cycle is not None:
        statement = statement.where(WeightsSent.cycle == cycle)
    return [WeightsInfo.model_validate(row) for row in session.scalars(statement)]


def latest_weights(session: Session, *, ok: bool | None = None) -> WeightsInfo | None:
    """The last weight-setting attempt (of this result, when ``ok`` is given)."""
    statement = select(WeightsSent).order_by(WeightsSent.id.desc()).limit(1)
    if ok is not None:
        statement = statement.where(WeightsSent.ok.is_(ok))
    row = session.scalars(statement).one_or_none()
    return None if row is None else WeightsInfo.model_validate(row)
