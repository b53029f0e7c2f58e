"""Race cycles and their stages. A running cycle's stage details are withheld (they may name its draw)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sqlalchemy.orm import Session

from arena.api.deps import ReadSession, not_found
from arena.api.params import CycleNumber
from arena.api.routes.queries import standing_views
from arena.api.schemas import CycleDetail, CycleSummary, ErrorBody, StageView, WeightsView
from arena.store import repositories as repo
from arena.store.cycles import CycleInfo
from arena.store.models_race import CycleStage, EpisodeStage

router = APIRouter(prefix="/v1/cycles", tags=["cycles"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such cycle."}}


def _summary(info: CycleInfo) -> CycleSummary:
    return CycleSummary(**info.model_dump(exclude={"params"}), finished=info.stage is CycleStage.done)


def _stages(session: Session, info: CycleInfo) -> list[StageView]:
    done = info.stage is CycleStage.done
    return [
        StageView(stage=s.stage, started_at=s.started_at, finished_at=s.finished_at, detail=s.detail if done else None)
        for s in repo.stages(session, info.number)
    ]


def _cycle(session: Session, number: int) -> CycleInfo:
    info = repo.get_cycle(session, number)
    if info is None:
        raise not_found(f"cycle {number}")
    return info


@router.get("", response_model=list[CycleSummary], summary="Every cycle, oldest first")
def list_cycles(session: ReadSession) -> list[CycleSummary]:
    return [_summary(info) for info in repo.list_cycles(session)]


@router.get(
    "/{number}", response_model=CycleDetail, responses=NOT_FOUND, summary="One cycle: stages, episodes, standings"
)
def get_cycle(number: CycleNumber, session: ReadSession) -> CycleDetail:
    info = _cycle(session, number)
    episodes = {
        stage: {status: n for status, n in repo.status_counts(session, cycle=number, stage=stage).items()}
        for stage in EpisodeStage
    }
    return CycleDetail(
        **_summary(info).model_dump(),
        params=info.params,
        stages=_stages(session, info),
        episodes=episodes,
        standings=standing_views(session, repo.standings(session, number)),
        weights=[WeightsView.model_validate(w.model_dump()) for w in repo.weights_sent(session, cycle=number)],
    )


@router.get("/{number}/stages", response_model=list[StageView], responses=NOT_FOUND, summary="A cycle's timeline")
def get_stages(number: CycleNumber, session: ReadSession) -> list[StageView]:
    return _stages(session, _cycle(session, number))
