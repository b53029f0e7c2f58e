"""The store's state counted: what the API's Prometheus gauges and the dashboard's progress bars show.

Every function reads one aggregate in the caller's session; the store is the truth every API process
shares, so the counts are the same whichever process answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.store.models import Submission, SubmissionStatus
from arena.store.models_race import Cycle, Episode, EpisodeStage, EpisodeStatus, Judgment, JudgmentStatus, WeightsSent


@dataclass(frozen=True)
class FaultCount:
    """Episodes that hit one kind of validator-side failure, by whether it was charged and where they stand."""

    kind: str
    charged: bool | None
    status: EpisodeStatus
    episodes: int


def episodes_by_stage_and_status(
    session: Session, *, cycle: int | None = None
) -> dict[tuple[EpisodeStage, EpisodeStatus], int]:
    """Episode counts per (stage, status) present (of one cycle, when given)."""
    conditions = [] if cycle is None else [Episode.cycle == cycle]
    rows = session.execute(
        select(Episode.stage, Episode.status, func.count()).where(*conditions).group_by(Episode.stage, Episode.status)
    )
    return {(stage, status): n for stage, status, n in rows}


def started_by_stage(session: Session) -> dict[EpisodeStage, int]:
    """Episodes a worker started, per stage (every stage, zero included)."""
    counts = dict.fromkeys(EpisodeStage, 0)
    counts.update(
        session.execute(
            select(Episode.stage, func.count()).where(Episode.started_at.is_not(None)).group_by(Episode.stage)
        ).all()
    )
    return counts


def pending_by_stage(session: Session) -> dict[EpisodeStage, int]:
    """Episodes waiting for a worker, per stage (every stage, zero included)."""
    counts = dict.fromkeys(EpisodeStage, 0)
    counts.update(
        session.execute(
            select(Episode.stage, func.count()).where(Episode.status == EpisodeStatus.pending).group_by(Episode.stage)
        ).all()
    )
    return counts


def judgments_by_status(session: Session) -> dict[JudgmentStatus, int]:
    counts = dict.fromkeys(JudgmentStatus, 0)
    counts.update(session.execute(select(Judgment.status, func.count()).group_by(Judgment.status)).all())
    return counts


def submissions_by_status(session: Session) -> dict[SubmissionStatus, int]:
    counts = dict.fromkeys(SubmissionStatus, 0)
    counts.update(session.execute(select(Submission.status, func.count()).group_by(Submission.status)).all())
    return counts


def weights_by_result(session: Session) -> dict[bool, int]:
    """Weight-setting attempts by whether they succeeded (results never seen are absent)."""
    return dict(session.execute(select(WeightsSent.ok, func.count()).group_by(WeightsSent.ok)).all())


def validator_faults(session: Session) -> list[FaultCount]:
    rows = session.execute(
        select(Episode.fault_kind, Episode.fault_charged, Episode.status, func.count())
        .where(Episode.fault_kind.is_not(None))
        .group_by(Episode.fault_kind, Episode.fault_charged, Episode.status)
    ).all()
    # the WHERE keeps only rows with a fault kind
    return [FaultCount(kind=str(kind), charged=charged, status=status, episodes=n) for kind, charged, status, n in rows]


def halt_kinds(session: Session) -> Counter[str]:
    """Halted cycles by the kind their halt names."""
    halted = session.scalars(select(Cycle.halt).where(Cycle.halt.is_not(None)))
    return Counter(str(halt.get("kind")) for halt in halted if halt)


def done_episode_ids(session: Session) -> set[int]:
    """Done episodes that have a record: immutable, so a reader that saw one need never read it again."""
    return set(
        session.scalars(select(Episode.id).where(Episode.status == EpisodeStatus.done, Episode.record.is_not(None)))
    )


def episode_records(session: Session, ids: Iterable[int]) -> list[tuple[int, dict]]:
    """(id, record) of the given episodes; the caller batches ``ids`` (a record can be megabytes)."""
    rows = session.execute(select(Episode.id, Episode.record).where(Episode.id.in_(list(ids))))
    return [(episode_id, record) for episode_id, record in rows]
