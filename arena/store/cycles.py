"""Race cycles and their stages: the timeline a restarted validator resumes from.

Every write here is idempotent (starting a cycle or a stage that already
started returns it), so the race can replay its steps after a crash without
checking first. What must never change once set, the draw's block and hash,
is refused if a second call disagrees.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.store.db import StoreError, dialect_insert, jsonable
from arena.store.models import SuiteRow, utcnow
from arena.store.models_race import Cycle, CycleStage, CycleStageRun


class CycleInfo(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    number: int
    suite_id: str
    stage: CycleStage
    started_at: datetime
    intake_closed_at: datetime | None
    draw_block: int | None
    draw_block_hash: str | None
    finished_at: datetime | None
    params: dict
    halt: dict | None = None  # why the cycle stopped without deciding anything (arena.race.halt.Halt)


class StageInfo(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    cycle: int
    stage: CycleStage
    started_at: datetime
    finished_at: datetime | None
    detail: dict


def _cycle(session: Session, number: int) -> Cycle:
    row = session.get(Cycle, number, populate_existing=True)
    if row is None:
        raise StoreError(f"cycle {number} does not exist")
    return row


def start_cycle(
    session: Session, number: int, suite_id: str, params: dict | None = None, *, now: datetime | None = None
) -> CycleInfo:
    """Cycle ``number`` racing ``suite_id``, created at the intake stage unless it exists (then returned as is)."""
    if session.get(SuiteRow, suite_id) is None:
        raise StoreError(f"suite {suite_id} is not in the store; import it before starting cycle {number}")
    values = {"number": number, "suite_id": suite_id, "stage": CycleStage.intake, "started_at": now or utcnow()}
    values["params"] = jsonable(params or {})
    session.execute(dialect_insert(session, Cycle).values(**values).on_conflict_do_nothing(index_elements=["number"]))
    row = _cycle(session, number)
    if row.suite_id != suite_id:
        raise StoreError(f"cycle {number} already races suite {row.suite_id}, not {suite_id}")
    _ensure_stage(session, number, row.stage, row.started_at)
    return CycleInfo.model_validate(row)


def get_cycle(session: Session, number: int) -> CycleInfo | None:
    row = session.get(Cycle, number, populate_existing=True)
    return None if row is None else CycleInfo.model_validate(row)


def latest_cycle(session: Session) -> CycleInfo | None:
    row = session.scalars(select(Cycle).order_by(Cycle.number.desc()).limit(1)).one_or_none()
    return None if row is None else CycleInfo.model_validate(row)


def list_cycles(session: Session) -> list[CycleInfo]:
    return [CycleInfo.model_validate(row) for row in session.scalars(select(Cycle).order_by(Cycle.number))]


def intake_closes(session: Session, numbers: Sequence[int]) -> dict[int, datetime | None]:
    """When each of the cycles ``numbers`` closed intake (those that exist)."""
    rows = session.execute(select(Cycle.number, Cycle.intake_closed_at).where(Cycle.number.in_(list(numbers))))
    return dict(rows.tuples().all())


def close_intake(
    session: Session, number: int, draw_block: int, draw_block_hash: str, *, now: datetime | None = None
) -> CycleInfo:
    """Fix the block whose hash seeds the cycle's draw. Repeating it with the same block is a no-op;
    with another block it is refused: a draw that could be re-rolled would not be fair."""
    row = _cycle(session, number)
    if row.draw_block is None:
        row.intake_closed_at = now or utcnow()
        row.draw_block, row.draw_block_hash = draw_block, draw_block_hash
        session.flush()
    elif (row.draw_block, row.draw_block_hash) != (draw_block, draw_block_hash):
        raise StoreError(
            f"cycle {number}: intake already closed at block {row.draw_block} ({row.draw_block_hash}); "
            f"refusing to move the draw to block {draw_block}"
        )
    return CycleInfo.model_validate(row)


def halt_cycle(session: Session, number: int, halt: dict) -> CycleInfo:
    """Record why cycle ``number`` stopped undecided; the first halt recorded is kept."""
    row = _cycle(session, number)
    if row.halt is None:
        row.halt = jsonable(halt)
        session.flush()
    return CycleInfo.model_validate(row)


def _ensure_stage(session: Session, number: int, stage: CycleStage, started_at: datetime) -> None:
    statement = dialect_insert(session, CycleStageRun).values(
        cycle=number, stage=stage, started_at=started_at, detail={}
    )
    session.execute(statement.on_conflict_do_nothing(index_elements=["cycle", "stage"]))


def begin_stage(session: Session, number: int, stage: CycleStage, *, now: datetime | None = None) -> StageInfo:
    """Move the cycle to ``stage`` (recording when it began; a repeat keeps the first time)."""
    now = now or utcnow()
    _cycle(session, number)
    _ensure_stage(session, number, stage, now)
    values: dict = {"stage": stage}
    if stage is CycleStage.done:
        values["finished_at"] = now
    session.execute(
        update(Cycle).where(Cycle.number == number).values(**values).execution_options(synchronize_session=False)
    )
    return _stage(session, number, stage)


def finish_stage(
    session: Session, number: int, stage: CycleStage, detail: dict | None = None, *, now: datetime | None = None
) -> StageInfo:
    """Record that a stage ended (with what it produced, in ``detail``); a repeat keeps the first record."""
    row = session.scalars(
        select(CycleStageRun).where(CycleStageRun.cycle == number, CycleStageRun.stage == stage)
    ).one_or_none()
    if row is None:
        raise StoreError(f"cycle {number} never began stage {stage.value}")
    if row.finished_at is None:
        row.finished_at = now or utcnow()
        row.detail = jsonable(detail or {})
        session.flush()
    return StageInfo.model_validate(row)


def _stage(session: Session, number: int, stage: CycleStage) -> StageInfo:
    row = session.scalars(
        select(CycleStageRun)
        .where(CycleStageRun.cycle == number, CycleStageRun.stage == stage)
        .execution_options(populate_existing=True)
    ).one()
    return StageInfo.model_validate(row)


def stages(session: Session, number: int) -> list[StageInfo]:
    """The cycle's timeline, in the order the stages began."""
    rows = session.scalars(
        select(CycleStageRun).where(CycleStageRun.cycle == number).order_by(CycleStageRun.started_at, CycleStageRun.id)
    )
    return [StageInfo.model_validate(row) for row in rows]
