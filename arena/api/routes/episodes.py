"""``GET /v1/episodes/{id}``: one episode (the episodes table's key) with its record, scores and judgments,
as much of it as ``arena.api.redaction`` allows."""

from __future__ import annotations

from fastapi import APIRouter

from arena.api.deps import ReadSession, not_found
from arena.api.params import RowId
from arena.api.redaction import Level, Redactor
from arena.api.schemas import EpisodeDetail, ErrorBody, JudgmentView, ProblemView
from arena.api.views import episode_summary
from arena.store import repositories as repo
from arena.store.models_race import JudgmentStatus

router = APIRouter(prefix="/v1/episodes", tags=["episodes"])


@router.get(
    "/{episode_id}",
    response_model=EpisodeDetail,
    responses={404: {"model": ErrorBody, "description": "No such episode (held-out episodes are never served)."}},
    summary="One episode: record, scores, judgments",
)
def get_episode(episode_id: RowId, session: ReadSession) -> EpisodeDetail:
    info = repo.get_episode(session, episode_id, with_record=True)
    if info is None:
        raise not_found(f"episode {episode_id}")
    redactor = Redactor(session)
    view = redactor.episode(info.cycle, info.suite_id, info.problem_id)
    if view.level is Level.hidden:
        raise not_found(f"episode {episode_id}")  # the same answer as a missing one: held-out leaves no trace
    judgments = repo.versions(session, episode_id) if view.shows_scores else []
    done = [j for j in judgments if j.status is JudgmentStatus.done]
    facts = info.model_dump() | {"termination": (info.record or {}).get("termination")}
    summary = episode_summary(facts, view.level, done[-1].coefficient if done else None)
    problem = None
    if view.shows_content:
        row = redactor.problem_row(info.suite_id, info.problem_id)
        assert row is not None  # the visibility came from this row
        problem = ProblemView(
            suite_id=row.suite_id,
            problem_id=row.problem_id,
            cluster_id=row.cluster_id,
            partition=row.partition,
            intent=row.intent,
            difficulty=row.difficulty,
            query=str(row.row.get("query", "")),
            row=row.row,
        )
    return EpisodeDetail(
        **summary.model_dump(),
        redaction=None if view.shows_content else view.reason,
        problem=problem,
        record=info.record if view.shows_content else None,
        outcome=info.outcome if view.shows_content else None,
        error=info.error if view.shows_content else None,
        fault_kind=info.fault_kind,
        fault_charged=info.fault_charged,
        judgments=[
            JudgmentView(
                version=j.version,
                judge=j.judge,
                rubric_version=j.rubric_version,
                status=j.status,
                level=j.level,
                coefficient=j.coefficient,
                explanation=j.explanation if view.shows_content else None,
                detail=j.detail if view.shows_content else None,
                judged_at=j.judged_at,
            )
            for j in judgments
        ],
    )
