"""Export runs and per-episode verdicts (``arena export --database-url``)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.store.models import utcnow
from arena.store.models_export import ExportRun, ExportVerdict


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
