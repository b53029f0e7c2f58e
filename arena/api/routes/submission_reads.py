"""Reading submissions: the list, one submission's results per intent, its episodes, and its source after the embargo."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from arena.api import reads, views
from arena.api.deps import ApiError, Embargo, ReadSession, Settings, not_found
from arena.api.embargo_view import embargo_state
from arena.api.params import CycleFilter, HotkeyFilter, Limit, Offset, RowId
from arena.api.redaction import Redactor
from arena.api.schemas import (
    EpisodePage,
    ErrorBody,
    SubmissionDetail,
    SubmissionPage,
    SubmissionSource,
)
from arena.store import submissions as submission_rows
from arena.store.models import SubmissionStatus, utcnow
from arena.store.models_race import EpisodeStage

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
    limit = min(limit or settings.page_size, settings.page_size)
    total, items = views.submission_page(session, status=status, hotkey=hotkey, offset=offset, limit=limit)
    return SubmissionPage(total=total, offset=offset, items=items)


@router.get("/{submission_id}", response_model=SubmissionDetail, responses=NOT_FOUND, summary="A submission's results")
def get_submission(submission_id: RowId, session: ReadSession, rule: Embargo) -> SubmissionDetail:
    return reads.submission_detail(session, submission_id, rule)


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
    info = submission_rows.get_submission(session, submission_id)
    if info is None:
        raise not_found(f"submission {submission_id}")
    embargo = embargo_state(session, info, rule, utcnow())
    if embargo.embargoed:
        raise ApiError(403, "embargoed", embargo.reason, embargo_until=embargo.until, until_cycle=embargo.until_cycle)
    code = submission_rows.submission_code(session, submission_id)
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
    if submission_rows.get_submission(session, submission_id) is None:
        raise not_found(f"submission {submission_id}")
    limit = min(limit or settings.page_size, settings.page_size)
    total, items = views.episode_summaries(
        session, Redactor(session), submission_id=submission_id, cycle=cycle, stage=stage, offset=offset, limit=limit
    )
    return EpisodePage(total=total, offset=offset, items=items)
