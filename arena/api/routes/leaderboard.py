"""The leaderboard: the latest cycle's standings, its champion, the weights sent, and who is waiting to race.
The dashboard's ``/`` page (``routes/pages.py``) renders the same board as HTML."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy.orm import Session

from arena.api.deps import ReadSession, not_found
from arena.api.params import CycleFilter
from arena.api.schemas import ErrorBody, Leaderboard, WeightsView
from arena.api.views import standing_views, waiting_submissions
from arena.store import repositories as repo
from arena.store.standings import latest_ranked_cycle

router = APIRouter(tags=["leaderboard"])


def build_leaderboard(session: Session, cycle: int | None = None) -> Leaderboard:
    if cycle is None:
        cycle = latest_ranked_cycle(session)
    info = repo.get_cycle(session, cycle) if cycle is not None else None
    if cycle is not None and info is None:
        raise not_found(f"cycle {cycle}")
    entries = standing_views(session, repo.standings(session, cycle)) if cycle is not None else []
    sent = repo.weights_sent(session, cycle=cycle) if cycle is not None else []
    return Leaderboard(
        cycle=cycle,
        stage=info.stage if info else None,
        champion=next((e for e in entries if e.is_champion), None),
        entries=entries,
        weights=WeightsView.model_validate(sent[-1].model_dump()) if sent else None,
        waiting=waiting_submissions(session),
    )


@router.get(
    "/v1/leaderboard",
    response_model=Leaderboard,
    responses={404: {"model": ErrorBody, "description": "No such cycle."}},
    summary="Standings of the latest finished cycle (or of ?cycle=N)",
)
def leaderboard(session: ReadSession, cycle: CycleFilter = None) -> Leaderboard:
    return build_leaderboard(session, cycle)
