"""Read queries the routes share: submissions with their miners' uids, standings with names, results per intent.

Route functions stay thin; the joins and aggregations live here, each
returning the typed models of ``arena.api.schemas``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from arena.api.redaction import Level, Redactor
from arena.api.schemas import EpisodeSummary, IntentResult, StageResult, StandingView, SubmissionSummary
from arena.problems.model import Intent
from arena.problems.partitions import PartitionName
from arena.store import repositories as repo
from arena.store.models import Miner, ProblemRow, Submission, SubmissionStatus
from arena.store.models_race import Cycle, CycleStage, Episode, EpisodeStatus, Judgment, JudgmentStatus, Standing

_SUMMARY = (
    Submission.id,
    Submission.hotkey,
    Miner.uid,
    Submission.agent_name,
    Submission.sha256,
    Submission.size,
    Submission.submitted_at,
    Submission.commitment_block,
    Submission.status,
    Submission.rejection_reason,
)


def _summaries(session: Session, *conditions, offset: int = 0, limit: int | None = None) -> list[SubmissionSummary]:
    statement = (
        select(*_SUMMARY).join(Miner, Miner.hotkey == Submission.hotkey).where(*conditions).order_by(Submission.id)
    )
    if offset:
        statement = statement.offset(offset)
    if limit is not None:
        statement = statement.limit(limit)
    return [SubmissionSummary.model_validate(dict(row)) for row in session.execute(statement).mappings()]


def submission_summary(session: Session, submission_id: int) -> SubmissionSummary | None:
    found = _summaries(session, Submission.id == submission_id)
    return found[0] if found else None


def submission_page(session: Session, conditions: list, offset: int, limit: int) -> tuple[int, list[SubmissionSummary]]:
    total = session.execute(select(func.count()).select_from(Submission).where(*conditions)).scalar_one()
    return total, _summaries(session, *conditions, offset=offset, limit=limit)


def waiting_submissions(session: Session) -> list[SubmissionSummary]:
    """Accepted submissions that no cycle has ranked yet."""
    ranked = select(Standing.submission_id).distinct()
    return _summaries(session, Submission.status == SubmissionStatus.accepted, Submission.id.not_in(ranked))


def standing_views(session: Session, standings: Iterable[repo.StandingInfo]) -> list[StandingView]:
    standings = list(standings)
    ids = {s.submission_id for s in standings}
    names = {
        row.id: row
        for row in session.execute(
            select(Submission.id, Submission.hotkey, Submission.agent_name, Miner.uid)
            .join(Miner, Miner.hotkey == Submission.hotkey)
            .where(Submission.id.in_(ids))
        )
    }
    return [
        StandingView(
            cycle=s.cycle,
            submission_id=s.submission_id,
            hotkey=names[s.submission_id].hotkey,
            uid=names[s.submission_id].uid,
            agent_name=names[s.submission_id].agent_name,
            rank=s.rank,
            qualifying_score=s.qualifying_score,
            race_score=s.race_score,
            success_rate=s.success_rate,
            mean_coefficient=s.mean_coefficient,
            is_champion=s.is_champion,
        )
        for s in standings
    ]


def submission_standings(session: Session, submission_id: int) -> list[StandingView]:
    rows = session.scalars(select(Standing).where(Standing.submission_id == submission_id).order_by(Standing.cycle))
    return standing_views(session, [repo.StandingInfo.model_validate(row) for row in rows])


def latest_coefficients():
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


def _result(intent: Intent | None, rows: list, finished: bool) -> IntentResult:
    done = [r for r in rows if r.status is EpisodeStatus.done]
    judged = [r.coefficient for r in done if r.coefficient is not None]
    successes = sum(1 for r in done if r.success) if finished else None
    return IntentResult(
        intent=intent,
        episodes=len(rows),
        done=len(done),
        failed=sum(1 for r in rows if r.status is EpisodeStatus.failed),
        unfinished=sum(1 for r in rows if r.status in (EpisodeStatus.pending, EpisodeStatus.running)),
        successes=successes,
        success_rate=(successes / len(done)) if successes is not None and done else None,
        mean_rule=(sum(r.rule or 0.0 for r in done) / len(done)) if finished and done else None,
        mean_coefficient=(sum(judged) / len(judged)) if finished and judged else None,
        judged=len(judged) if finished else 0,
    )


def submission_results(session: Session, submission_id: int) -> list[StageResult]:
    """Per cycle and stage, the submission's episodes by intent. Held-out problems count nowhere;
    while a cycle runs only progress is shown (scores once it finished)."""
    coefficients = latest_coefficients()
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
    groups: dict[tuple, list] = defaultdict(list)
    finished: dict[int, bool] = {}
    for row in session.execute(statement):
        groups[(row.cycle, row.stage)].append(row)
        finished[row.cycle] = row.cycle_stage is CycleStage.done
    results = []
    for (cycle, stage), rows in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1].value)):
        by_intent = defaultdict(list)
        for row in rows:
            by_intent[row.intent].append(row)
        results.append(
            StageResult(
                cycle=cycle,
                stage=stage,
                cycle_finished=finished[cycle],
                total=_result(None, rows, finished[cycle]),
                by_intent=[
                    _result(intent, by_intent[intent], finished[cycle]) for intent in Intent if intent in by_intent
                ],
            )
        )
    return results


def episode_summaries(
    session: Session, redactor: Redactor, conditions: list, offset: int, limit: int
) -> tuple[int, list[EpisodeSummary]]:
    """Episodes matching ``conditions`` with what may be shown of each; held-out ones are left out entirely."""
    coefficients = latest_coefficients()
    visible = [
        *conditions,
        ~select(ProblemRow.problem_id)
        .where(
            ProblemRow.suite_id == Episode.suite_id,
            ProblemRow.problem_id == Episode.problem_id,
            ProblemRow.partition == PartitionName.heldout,
        )
        .exists(),
    ]
    total = session.execute(select(func.count()).select_from(Episode).where(*visible)).scalar_one()
    columns = [c for c in Episode.__table__.columns if c.key not in ("record", "outcome")]
    statement = (
        select(*columns, coefficients.c.coefficient, Episode.record["termination"].as_string().label("termination"))
        .outerjoin(coefficients, coefficients.c.episode_id == Episode.id)
        .where(*visible)
        .order_by(Episode.id)
        .offset(offset)
        .limit(limit)
    )
    items = []
    for row in session.execute(statement).mappings():
        view = redactor.episode(row["cycle"], row["suite_id"], row["problem_id"])
        items.append(episode_summary(row, view.level, row["coefficient"]))
    return total, items


def episode_summary(row, level: Level, coefficient: float | None) -> EpisodeSummary:
    scores = level in (Level.full, Level.scores)
    return EpisodeSummary(
        id=row["id"],
        cycle=row["cycle"],
        stage=row["stage"],
        submission_id=row["submission_id"],
        suite_id=row["suite_id"],
        problem_id=row["problem_id"],
        attempt=row["attempt"],
        status=row["status"],
        # how it ended is a score-level fact: a crashed episode is "done" (its record is stored) yet scored 0
        termination=row.get("termination") if scores else None,
        visibility=level,
        success=row["success"] if scores else None,
        rule=row["rule"] if scores else None,
        coefficient=coefficient if scores else None,
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )
