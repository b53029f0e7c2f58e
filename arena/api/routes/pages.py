"""The dashboard's HTML pages: ``/``, ``/cycles``, ``/cycles/{n}``, ``/submissions/{id}``, ``/episodes/{id}``.

Thin routes over ``arena.api.dashboard``; an unknown id answers an HTML 404
page (a browser reader gets a page, a program should use ``/v1``).
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from arena.api import dashboard
from arena.api.deps import ApiError, Embargo, ReadSession, Settings
from arena.api.params import CycleNumber, RowId

router = APIRouter(tags=["dashboard"], include_in_schema=False)


def _page(build: Callable[[], str]) -> HTMLResponse:
    try:
        return HTMLResponse(build())
    except ApiError as exc:
        title = "not found" if exc.status_code == 404 else exc.code
        return HTMLResponse(dashboard.error_html(exc.status_code, title, exc.detail), status_code=exc.status_code)


@router.get("/", response_class=HTMLResponse)
def leaderboard_page(session: ReadSession) -> HTMLResponse:
    return _page(lambda: dashboard.leaderboard_html(session))


@router.get("/cycles", response_class=HTMLResponse)
def cycles_page(session: ReadSession) -> HTMLResponse:
    return _page(lambda: dashboard.cycles_html(session))


@router.get("/cycles/{number}", response_class=HTMLResponse)
def cycle_page(number: CycleNumber, session: ReadSession) -> HTMLResponse:
    return _page(lambda: dashboard.cycle_html(session, number))


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(submission_id: RowId, session: ReadSession, rule: Embargo, settings: Settings) -> HTMLResponse:
    return _page(lambda: dashboard.submission_html(session, submission_id, rule, settings.page_size))


@router.get("/episodes/{episode_id}", response_class=HTMLResponse)
def episode_page(episode_id: RowId, session: ReadSession) -> HTMLResponse:
    return _page(lambda: dashboard.episode_html(session, episode_id))
