"""The store's tables, part two: race cycles, their stages, episodes, judgments, standings and weights sent."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from arena.store.models import HASH, ID, Base, JSONType, UTCDateTime, str_enum, utcnow


class CycleStage(StrEnum):
    intake = "intake"
    qualifying = "qualifying"
    race = "race"
    judging = "judging"
    scoring = "scoring"
    promotion = "promotion"
    weights = "weights"
    done = "done"


class EpisodeStage(StrEnum):
    qualifying = "qualifying"  # a new submission on the public suite
    race = "race"  # a qualifier on the cycle's hidden draw


class EpisodeStatus(StrEnum):
    pending = "pending"
    running = "running"  # claimed by worker_id until leased_until
    done = "done"  # record and outcome stored; final
    failed = "failed"  # gave up (error says why); final


class JudgmentStatus(StrEnum):
    pending = "pending"
    done = "done"  # final: a later judgment is a new version, never an overwrite
    failed = "failed"


class Cycle(Base):
    __tablename__ = "cycles"

    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    suite_id: Mapped[str] = mapped_column(String(ID), ForeignKey("suites.id"))
    stage: Mapped[CycleStage] = mapped_column(str_enum(CycleStage, "cycle_stage"), default=CycleStage.intake)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    intake_closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    draw_block: Mapped[int | None] = mapped_column(Integer)
    draw_block_hash: Mapped[str | None] = mapped_column(String(HASH + 2))  # 0x-prefixed: seeds the race draw
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    params: Mapped[dict] = mapped_column(JSONType, default=dict)  # the cycle's configuration, as run
    halt: Mapped[dict | None] = mapped_column(JSONType)  # why the cycle stopped undecided (arena.race.halt)


class CycleStageRun(Base):
    """When a cycle entered and left each stage: the cycle's timeline, one row per stage."""

    __tablename__ = "cycle_stages"
    __table_args__ = (UniqueConstraint("cycle", "stage"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cycle: Mapped[int] = mapped_column(Integer, ForeignKey("cycles.number"))
    stage: Mapped[CycleStage] = mapped_column(str_enum(CycleStage, "cycle_stage"))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    detail: Mapped[dict] = mapped_column(JSONType, default=dict)


class Episode(Base):
    """One agent on one problem. The record and its outcome are written together, once."""

    __tablename__ = "episodes"
    __table_args__ = (
        UniqueConstraint("cycle", "stage", "submission_id", "problem_id", "attempt"),
        ForeignKeyConstraint(["suite_id", "problem_id"], ["problems.suite_id", "problems.problem_id"]),
        Index("ix_episodes_claim", "status", "cycle", "stage"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cycle: Mapped[int] = mapped_column(Integer, ForeignKey("cycles.number"))
    stage: Mapped[EpisodeStage] = mapped_column(str_enum(EpisodeStage, "episode_stage"))
    submission_id: Mapped[int] = mapped_column(Integer, ForeignKey("submissions.id"), index=True)
    suite_id: Mapped[str] = mapped_column(String(ID))
    problem_id: Mapped[str] = mapped_column(String(ID))
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[EpisodeStatus] = mapped_column(
        str_enum(EpisodeStatus, "episode_status"), default=EpisodeStatus.pending
    )
    worker_id: Mapped[str | None] = mapped_column(String(200))
    leased_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The task queue's job holding the lease: its worker dying releases exactly this lease (migration 0005).
    lease_job_id: Mapped[int | None] = mapped_column(BigInteger, index=True)
    claims: Mapped[int] = mapped_column(Integer, default=0)  # how often it was handed out (retries = claims - 1)
    error: Mapped[str | None] = mapped_column(Text)
    # The validator-side failure the episode last hit (a FaultKind; the reason is in ``error``), and whether
    # it was charged to the submission (the canary ran clean: the failure follows the submission).
    fault_kind: Mapped[str | None] = mapped_column(String(20))
    fault_charged: Mapped[bool | None] = mapped_column(Boolean)
    record: Mapped[dict | None] = mapped_column(JSONType)  # the full EpisodeRecord
    outcome: Mapped[dict | None] = mapped_column(JSONType)  # the OutcomeScore
    success: Mapped[bool | None] = mapped_column(Boolean)
    rule: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Judgment(Base):
    """One version of the judge's verdict on an episode. A done row is never changed (a trigger refuses it)."""

    __tablename__ = "judgments"
    __table_args__ = (UniqueConstraint("episode_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    episode_id: Mapped[int] = mapped_column(Integer, ForeignKey("episodes.id"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    judge: Mapped[str] = mapped_column(String(200))  # judge name / model
    rubric_version: Mapped[str] = mapped_column(String(100))
    status: Mapped[JudgmentStatus] = mapped_column(
        str_enum(JudgmentStatus, "judgment_status"), default=JudgmentStatus.pending
    )
    level: Mapped[float | None] = mapped_column(Float)  # reasoning quality, 0..1
    coefficient: Mapped[float | None] = mapped_column(Float)  # what the race score multiplies success by
    explanation: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[dict | None] = mapped_column(JSONType)  # the judge's raw output, for researchers
    reason: Mapped[str | None] = mapped_column(Text)  # why the last attempt failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    judged_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Standing(Base):
    __tablename__ = "standings"
    __table_args__ = (UniqueConstraint("cycle", "submission_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cycle: Mapped[int] = mapped_column(Integer, ForeignKey("cycles.number"), index=True)
    submission_id: Mapped[int] = mapped_column(Integer, ForeignKey("submissions.id"), index=True)
    qualifying_score: Mapped[float | None] = mapped_column(Float)
    race_score: Mapped[float | None] = mapped_column(Float)
    success_rate: Mapped[float | None] = mapped_column(Float)
    mean_coefficient: Mapped[float | None] = mapped_column(Float)
    rank: Mapped[int | None] = mapped_column(Integer)
    is_champion: Mapped[bool] = mapped_column(Boolean, default=False)


class WeightsSent(Base):
    """Every attempt to set weights, failed ones included: append-only."""

    __tablename__ = "weights_sent"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cycle: Mapped[int] = mapped_column(Integer, ForeignKey("cycles.number"), index=True)
    uids: Mapped[list[int]] = mapped_column(JSONType)
    weights: Mapped[list[float]] = mapped_column(JSONType)
    block: Mapped[int | None] = mapped_column(Integer)
    ok: Mapped[bool] = mapped_column(Boolean)
    message: Mapped[str] = mapped_column(Text, default="")
    sent_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
