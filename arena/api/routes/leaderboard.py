"""The leaderboard: the latest cycle's standings, its champion, the weights sent, and who is waiting to race.
The dashboard's ``/`` page (``routes/pages.py``) renders the same board as HTML."""

from __future__ import annotations

from fastapi import APIRouter

from arena.api import reads
from arena.api.deps import ReadSession
from arena.api.params import CycleFilter
from arena.api.schemas import ErrorBody, Leaderboard

router = APIRouter(tags=["leaderboard"])


@router.get(
    "/v1/leaderboard",
    response_model=Leaderboard,
    responses={404: {"model": ErrorBody, "description": "No such cycle."}},
    summary="Standings of the latest finished cycle (or of ?cycle=N)",
)
def leaderboard(session: ReadSession, cycle: CycleFilter = None) -> Leaderboard:
    return reads.leaderboard(session, cycle)
