"""What the corpus export reads from the store and what it writes back (``arena export --database-url``):
done episodes with their outcome, problem place and latest judgment; export runs and per-episode verdicts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel
from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from arena.store.models import ProblemRow, utcnow
from arena.store.models_export import ExportRun, ExportVerdict
from arena.store.models_race import Episode, EpisodeStatus, Judgment, JudgmentStatus


class LatestJudgment(BaseModel):
    """An episode's latest done judgment."""

    level: float
    coefficient: float
    judge: str
    rubric_version: str


class ExportableEpisode(BaseModel):
    """A done episode as the export reads it. ``outcome`` is the episode's OutcomeScore: its home is the
    episode's own column (``episodes.complete`` writes it beside the record), not the record."""

    id: int
    cycle: int
    submission_id: int
    suite_id: str
    record: Any  # the EpisodeRecord's JSON, unchecked: the reader reports a bad one and goes on
    outcome: dict | None
    cluster_id: str
    partition: str
    judgment: LatestJudgment | None  # None: not judged (yet)


def exportable_episodes(
    session: Session, *, cycles: tuple[int, int] | None = None, suites: list[str] | None = None, batch_size: int = 500
) -> Iterator[ExportableEpisode]:
    """Done episodes with their latest done judgment and problem place, in id order, streamed in batches.

    ``yield_per`` makes PostgreSQL use a server-side cursor (SQLite steps its
    cursor): only ``batch_size`` records are in memory at once, however big the store.
    """
    newest = (
        select(Judgment.episode_id, func.max(Judgment.version).label("version"))
        .where(Judgment.status == JudgmentStatus.done)
        .group_by(Judgment.episode_id)
        .subquery()
    )
    statement = (
        select(
            Episode.id,
            Episode.cycle,
            Episode.submission_id,
            Episode.suite_id,
            Episode.record,
            Episode.outcome,
            ProblemRow.cluster_id,
            ProblemRow.partition,
            Judgment.level,
            Judgment.coefficient,
            Judgment.judge,
            Judgment.rubric_version,
        )  # fmt: skip
        .join(ProblemRow, and_(ProblemRow.suite_id == Episode.suite_id, ProblemRow.problem_id == Episode.problem_id))
        .outerjoin(newest, newest.c.episode_id == Episode.id)
        .outerjoin(Judgment, and_(Judgment.episode_id == Episode.id, Judgment.version == newest.c.version))
        .where(Episode.status == EpisodeStatus.done)
        .order_by(Episode.id)
    )
    if cycles is not None:
        statement = statement.where(Episode.cycle.between(*cycles))
    if suites:
        statement = statement.where(Episode.suite_id.in_(suites))
    for row in session.execute(statement, execution_options={"yield_per": batch_size}):
        judged = row.coefficient is not None
        yield ExportableEpisode(
            id=row.id,
            cycle=row.cycle,
            submission_id=row.submission_id,
            suite_id=row.suite_id,
            record=row.record,
            outcome=row.outcome,
            cluster_id=row.cluster_id,
            partition=getattr(row.partition, "value", row.partition),
            judgment=LatestJudgment(
                level=row.level, coefficient=row.coefficient, judge=row.judge, rubric_version=row.rubric_version
            )
            if judged
            else None,
        )


def start_export_run(session: Session, out: str, config: dict) -> int:
    run = ExportRun(out=out, config=config)
    session.add(run)
    session.flush()
    return run.id


def add_verdicts(session: Session, run_id: int, verdicts: Iterable[dict]) -> int:
    """Store a batch of ``{episode_id, destination, filter, gates}``; returns how many."""
    rows = [ExportVerdict(run_id=run_id, **v) for v in verdicts]
    session.add_all(rows)
    return len(rows)


def finish_export_run(session: Session, run_id: int, funnel: dict) -> None:
    run = session.get(ExportRun, run_id)
    if run is None:
        raise ValueError(f"no export run {run_id}")
    run.funnel, run.finished_at = funnel, utcnow()


def latest_verdict(session: Session, episode_id: str) -> dict | None:
    """Where the latest finished export put this episode, and why."""
    row = session.execute(
        select(ExportVerdict, ExportRun.id)
        .join(ExportRun, ExportRun.id == ExportVerdict.run_id)
        .where(ExportVerdict.episode_id == episode_id, ExportRun.finished_at.is_not(None))
        .order_by(ExportRun.id.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    verdict = row[0]
    return {"run_id": row[1], "destination": verdict.destination, "filter": verdict.filter, "gates": verdict.gates}
