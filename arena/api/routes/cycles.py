"""Race cycles and their stages. A running cycle's stage details are withheld (they may name its draw)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from arena.api import reads
from arena.api.deps import ReadSession
from arena.api.params import CycleNumber
from arena.api.schemas import CycleDetail, CycleSummary, ErrorBody, StageView
from arena.store import cycles as cycle_rows

router = APIRouter(prefix="/v1/cycles", tags=["cycles"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorBody, "description": "No such cycle."}}


@router.get("", response_model=list[CycleSummary], summary="Every cycle, oldest first")
def list_cycles(session: ReadSession) -> list[CycleSummary]:
    return [reads.cycle_summary(info) for info in cycle_rows.list_cycles(session)]


@router.get(
    "/{number}", response_model=CycleDetail, responses=NOT_FOUND, summary="One cycle: stages, episodes, standings"
)
def get_cycle(number: CycleNumber, session: ReadSession) -> CycleDetail:
    return reads.cycle_detail(session, number)


@router.get("/{number}/stages", response_model=list[StageView], responses=NOT_FOUND, summary="A cycle's timeline")
def get_stages(number: CycleNumber, session: ReadSession) -> list[StageView]:
    return reads.cycle_stages(session, reads.known_cycle(session, number))
