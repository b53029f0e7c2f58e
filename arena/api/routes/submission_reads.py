"""Reading submissions: the list, one submission's results per intent, its episodes, and its source after the embargo."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from arena.api.deps import ApiError, Embargo, ReadSession, Settings, not_found
from arena.api.embargo_view import embargo_state
from arena.api.params import CycleFilter, HotkeyFilter, Limit, Offset, RowId
from arena.api.redaction import Redactor
from arena.api.routes import queries
from arena.api.schemas import (
    EmbargoView,
    EpisodePage,
    ErrorBody,
    SubmissionDetail,
    SubmissionPage,
    SubmissionSource,
)
from arena.store import repositories as repo
from arena.store.models import Submission, SubmissionStatus, utcnow
from arena.store.models_race import Episode, EpisodeStage

router = APIRouter(prefix="/v1/submissions", tags=["submissions"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such submission."}}


@router.get("", response_model=SubmissionPage, summary="List submissions")
def list_submissions(
    session: ReadSession,
    settings: Settings,
    status: SubmissionStatus | None = None,
    hotkey: HotkeyFilter = None,
    offset: Offset = 0,
    limit: Limit = None,
) -> SubmissionPage:
    conditions = []
    if status is not None:
        conditions.append(Submission.status == status)
    if hotkey is not None:
        conditions.append(Submission.hotkey == hotkey)
    limit = min(limit or settings.page_size, settings.page_size)
    total, items = queries.submission_page(session, conditions, offset, limit)
    return SubmissionPage(total=total, offset=offset, items=items)


@router.get("/{submission_id}", response_model=SubmissionDetail, responses=NOT_FOUND, summary="A submission's results")
def get_submission(submission_id: RowId, session: ReadSession, rule: Embargo) -> SubmissionDetail:
    summary = queries.submission_summary(session, submission_id)
    info = repo.get_submission(session, submission_id)
    if summary is None or info is None:
        raise not_found(f"submission {submission_id}")
    embargo = embargo_state(session, info, rule, utcnow())
    return SubmissionDetail(
        submission=summary,
        embargo=EmbargoView.model_validate(embargo.model_dump()),
        standings=queries.submission_standings(session, submission_id),
        results=queries.submission_results(session, submission_id),
    )


@router.get(
    "/{submission_id}/source",
    response_model=SubmissionSource,
    responses={
        **NOT_FOUND,
        403: {"model": ErrorBody, "description": "Still embargoed; embargo_until / until_cycle say until when."},
    },
    summary="A submission's agent file, once its embargo ended",
)
def get_source(submission_id: RowId, session: ReadSession, rule: Embargo) -> SubmissionSource:
    info = repo.get_submission(session, submission_id)
    if info is None:
        raise not_found(f"submission {submission_id}")
    embargo = embargo_state(session, info, rule, utcnow())
    if embargo.embargoed:
        raise ApiError(403, "embargoed", embargo.reason, embargo_until=embargo.until, until_cycle=embargo.until_cycle)
    code = repo.submission_code(session, submission_id)
    assert code is not None  # the row exists: it was read above in this transaction
    return SubmissionSource(
        submission_id=info.id,
        hotkey=info.hotkey,
        agent_name=info.agent_name,
        sha256=info.sha256,
        size=info.size,
        code=code.decode("utf-8"),
    )


@router.get(
    "/{submission_id}/episodes", response_model=EpisodePage, responses=NOT_FOUND, summary="A submission's episodes"
)
def list_episodes(
    submission_id: RowId,
    session: ReadSession,
    settings: Settings,
    cycle: CycleFilter = None,
    stage: EpisodeStage | None = None,
    offset: Offset = 0,
    limit: Limit = None,
) -> EpisodePage:
    if repo.get_submission(session, submission_id) is None:
        raise not_found(f"submission {submission_id}")
    conditions = [Episode.submission_id == submission_id]
    if cycle is not None:
        conditions.append(Episode.cycle == cycle)
    if stage is not None:
        conditions.append(Episode.stage == stage)
    limit = min(limit or settings.page_size, settings.page_size)
    total, items = queries.episode_summaries(session, Redactor(session), conditions, offset, limit)
    return EpisodePage(total=total, offset=offset, items=items)
