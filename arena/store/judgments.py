"""Judgments: versioned verdicts of the reasoning judge on finished episodes.

A verdict is never overwritten: re-judging (a new rubric, a new judge model)
adds the next version, and a trigger refuses changes to a done or failed row.
Only a pending version changes, as its attempts are made.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.storable import Changes, storable_json, storable_text
from arena.store.db import StoreError, jsonable
from arena.store.models import utcnow
from arena.store.models_race import Episode, EpisodeStage, EpisodeStatus, Judgment, JudgmentStatus

VERSION_RETRIES = 5  # concurrent add_version calls on one episode: each retry sees the other's version
# A verdict's raw output is the judge's own words (an explanation of up to a few hundred characters, a
# panel's votes): far below these. They only bound what an agent steering an LLM judge could make it say.
_DETAIL_DEPTH = 32
_DETAIL_BYTES = 1024**2
_REASON_CHARS = 4000


class JudgmentResult(BaseModel):
    """What a judge returns for one episode."""

    level: float = Field(ge=0.0, le=1.0, description="Reasoning quality.")
    coefficient: float = Field(ge=0.0, description="Multiplies success in the race score.")
    explanation: str = ""
    detail: dict | None = None  # the judge's raw output


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
    fault_kind: str | None = None  # the validator fault the episode last hit
    fault_charged: bool | None = None  # that fault was charged to the submission


class JudgmentInfo(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    episode_id: int
    version: int
    judge: str
    rubric_version: str
    status: JudgmentStatus
    level: float | None
    coefficient: float | None
    explanation: str | None
    detail: dict | None
    reason: str | None
    attempts: int
    created_at: datetime
    judged_at: datetime | None


def add_version(
    session: Session, episode_id: int, judge: str, rubric_version: str, result: JudgmentResult | None = None
) -> JudgmentInfo:
    """The episode's next judgment version: pending, or done at once when ``result`` is given."""
    status = session.execute(select(Episode.status).where(Episode.id == episode_id)).scalar_one_or_none()
    if status is None:
        raise StoreError(f"episode {episode_id} does not exist")
    if status is not EpisodeStatus.done:
        raise StoreError(f"episode {episode_id} is {status.value}; only a done episode can be judged")
    for _ in range(VERSION_RETRIES):
        latest = session.execute(
            select(func.max(Judgment.version)).where(Judgment.episode_id == episode_id)
        ).scalar_one()
        row = Judgment(
            episode_id=episode_id, version=(latest or 0) + 1, judge=judge, rubric_version=rubric_version, attempts=0
        )
        if result is not None:
            _fill(row, result)
        try:
            with session.begin_nested():
                session.add(row)
        except IntegrityError:
            continue  # another process took this version number meanwhile
        return JudgmentInfo.model_validate(row)
    raise StoreError(f"episode {episode_id}: could not claim a judgment version after {VERSION_RETRIES} tries")


def _storable(result: JudgmentResult) -> tuple[str, dict | None]:
    """The explanation and raw output as every backend stores them. An LLM judge reads agent-written text
    and its reply is parsed as JSON, so an agent can steer it into a U+0000 or a lone surrogate (a
    ``\\u0000`` escape in its reply): refused by PostgreSQL (and the surrogate by SQLite), the verdict
    would never be stored, the judge job would fail on every retry, and the stage would leave the episode
    out of the score at its judging deadline. What was replaced is named in the detail (``storable``)."""
    changes = Changes()
    explanation = storable_text(result.explanation, changes, "explanation")
    detail = None
    if result.detail is not None:
        detail = storable_json(result.detail, max_depth=_DETAIL_DEPTH, max_bytes=_DETAIL_BYTES, changes=changes)
    if changes.counts:
        detail = {**(detail or {}), "storable": {kind: changes.first[kind] for kind in sorted(changes.counts)}}
    return explanation, detail


def _fill(row: Judgment, result: JudgmentResult) -> None:
    row.status = JudgmentStatus.done
    explanation, detail = _storable(result)
    row.level, row.coefficient, row.explanation = result.level, result.coefficient, explanation
    row.detail = jsonable(detail) if detail is not None else None
    row.attempts += 1
    row.judged_at = utcnow()
    row.reason = None


def _pending(session: Session, judgment_id: int) -> Judgment:
    row = session.get(Judgment, judgment_id, with_for_update=True, populate_existing=True)
    if row is None:
        raise StoreError(f"judgment {judgment_id} does not exist")
    if row.status is not JudgmentStatus.pending:
        raise StoreError(
            f"judgment {judgment_id} (episode {row.episode_id}, version {row.version}) is {row.status.value}; "
            f"a verdict is never overwritten: add a new version instead"
        )
    return row


def record_result(session: Session, judgment_id: int, result: JudgmentResult) -> JudgmentInfo:
    """A pending version's verdict; refuses a version that is already done or failed."""
    row = _pending(session, judgment_id)
    _fill(row, result)
    session.flush()
    return JudgmentInfo.model_validate(row)


def record_failure(session: Session, judgment_id: int, reason: str, *, give_up: bool = False) -> JudgmentInfo:
    """A failed attempt at a pending version: counted, its reason kept; ``give_up`` makes it final."""
    row = _pending(session, judgment_id)
    row.attempts += 1
    # The reason quotes the judge's failure (its reply, an upstream's error): text like any other.
    row.reason = storable_text(reason[:_REASON_CHARS])
    if give_up:
        row.status = JudgmentStatus.failed
        row.judged_at = utcnow()
    session.flush()
    return JudgmentInfo.model_validate(row)


def latest(session: Session, episode_id: int, *, done_only: bool = True) -> JudgmentInfo | None:
    """The newest (done, by default) version for an episode."""
    statement = select(Judgment).where(Judgment.episode_id == episode_id)
    if done_only:
        statement = statement.where(Judgment.status == JudgmentStatus.done)
    row = session.scalars(statement.order_by(Judgment.version.desc()).limit(1)).one_or_none()
    return None if row is None else JudgmentInfo.model_validate(row)


def versions(session: Session, episode_id: int) -> list[JudgmentInfo]:
    rows = session.scalars(select(Judgment).where(Judgment.episode_id == episode_id).order_by(Judgment.version))
    return [JudgmentInfo.model_validate(row) for row in rows]


def pending(session: Session, *, limit: int = 100) -> list[JudgmentInfo]:
    """Pending versions, oldest first: the judge's work list."""
    rows = session.scalars(
        select(Judgment).where(Judgment.status == JudgmentStatus.pending).order_by(Judgment.id).limit(limit)
    )
    return [JudgmentInfo.model_validate(row) for row in rows]


def stage_outcomes(session: Session, cycle: int, stage: EpisodeStage) -> list[EpisodeOutcome]:
    """Every episode of a cycle's stage with its latest judgment, in episode id order (two queries)."""
    episodes = session.execute(
        select(
            Episode.id,
            Episode.submission_id,
            Episode.problem_id,
            Episode.attempt,
            Episode.status,
            Episode.success,
            Episode.fault_kind,
            Episode.fault_charged,
        )  # fmt: skip
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
            fault_kind=e.fault_kind,
            fault_charged=e.fault_charged,
        )
        for e in episodes
    ]


def unjudged_before(session: Session, cycle: int, *, limit: int = 10_000) -> list[int]:
    """Done episodes of cycles before ``cycle`` without a done judgment, oldest first."""
    judged = select(Judgment.id).where(Judgment.episode_id == Episode.id, Judgment.status == JudgmentStatus.done)
    return list(
        session.scalars(
            select(Episode.id)
            .where(Episode.cycle < cycle, Episode.status == EpisodeStatus.done, ~judged.exists())
            .order_by(Episode.id)
            .limit(limit)
        )
    )
