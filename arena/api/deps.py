"""Dependency injection: what a route gets from the app it runs in.

``create_app`` puts one ``ApiContext`` on ``app.state``; routes ask for the
pieces they need (a read session, the chain, the settings) through the
functions below, so a test can build an app on any store and chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from arena.api.metrics import ApiMetrics
from arena.api.settings import ApiSettings, AppSettings
from arena.chain.protocol import Chain
from arena.intake.service import SubmissionIntake
from arena.race.embargo import EmbargoRule
from arena.store.db import Store


@dataclass
class ApiContext:
    settings: AppSettings  # the ArenaSettings the app was built from
    api: ApiSettings
    store: Store
    chain: Chain
    validator_hotkey: str | None
    embargo: EmbargoRule  # the race's rule (arena.race.embargo), from its settings
    metrics: ApiMetrics
    intake: SubmissionIntake


def get_context(request: Request) -> ApiContext:
    return request.app.state.context


def get_api_settings(context: Annotated[ApiContext, Depends(get_context)]) -> ApiSettings:
    return context.api


def get_session(context: Annotated[ApiContext, Depends(get_context)]) -> Iterator[Session]:
    """One transaction per request, rolled back or committed when the response is done (reads write nothing)."""
    with context.store.transaction() as session:
        yield session


Context = Annotated[ApiContext, Depends(get_context)]
ReadSession = Annotated[Session, Depends(get_session)]
Settings = Annotated[ApiSettings, Depends(get_api_settings)]


def get_embargo_rule(context: Annotated[ApiContext, Depends(get_context)]) -> EmbargoRule:
    return context.embargo


Embargo = Annotated[EmbargoRule, Depends(get_embargo_rule)]


class ApiError(Exception):
    """An error answer of a read endpoint, in the same ``{"error", "detail", ...}`` shape as intake's."""

    def __init__(self, status_code: int, code: str, detail: str, **extra: object) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.code = code
        self.detail = detail
        self.extra = extra

    def to_body(self) -> dict[str, object]:
        return {"error": self.code, "detail": self.detail, **self.extra}


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} does not exist")
