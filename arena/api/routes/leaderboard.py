"""The leaderboard: the latest cycle's standings, its champion, the weights sent, and who is waiting to race;
and its history over every finished cycle. The dashboard's ``/`` page (``routes/pages.py``) renders both."""

from __future__ import annotations

from fastapi import APIRouter

from arena.api import history as history_reads
from arena.api import reads
from arena.api.deps import ReadSession, Settings
from arena.api.params import CycleFilter, Limit
from arena.api.schemas import ErrorBody, History, Leaderboard

router = APIRouter(tags=["leaderboard"])


@router.get(
    "/v1/leaderboard",
    response_model=Leaderboard,
    responses={404: {"model": ErrorBody, "description": "No such cycle."}},
    summary="Standings of the latest finished cycle (or of ?cycle=N)",
)
def leaderboard(session: ReadSession, cycle: CycleFilter = None) -> Leaderboard:
    return reads.leaderboard(session, cycle)


@router.get(
    "/v1/history",
    response_model=History,
    summary="Every finished cycle's ranked entrants and champion, all-time standings, champions' reigns, "
    "who is qualifying or racing now and who waits",
)
def history(session: ReadSession, settings: Settings, limit: Limit = None) -> History:
    """``limit``: the latest N finished cycles in ``cycles`` (at most api.page_size); agents and reigns count all."""
    return history_reads.history(session, min(limit or settings.page_size, settings.page_size))
