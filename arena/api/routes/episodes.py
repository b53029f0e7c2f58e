"""``GET /v1/episodes/{id}``: one episode (the episodes table's key) with its record, scores and judgments,
as much of it as ``arena.api.redaction`` allows."""

from __future__ import annotations

from fastapi import APIRouter

from arena.api import reads
from arena.api.deps import ReadSession
from arena.api.params import RowId
from arena.api.schemas import EpisodeDetail, ErrorBody

router = APIRouter(prefix="/v1/episodes", tags=["episodes"])


@router.get(
    "/{episode_id}",
    response_model=EpisodeDetail,
    responses={404: {"model": ErrorBody, "description": "No such episode (held-out episodes are never served)."}},
    summary="One episode: record, scores, judgments",
)
def get_episode(episode_id: RowId, session: ReadSession) -> EpisodeDetail:
    return reads.episode_detail(session, episode_id)
