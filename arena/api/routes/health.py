"""``/healthz``: is the database reachable and migrated, and does this validator take submissions."""

from __future__ import annotations

from fastapi import APIRouter, Response
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from arena.api.deps import Context
from arena.api.schemas import Health
from arena.store.migrate import current_revision, head_revision

router = APIRouter(tags=["health"])


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"model": Health, "description": "The database is unreachable or not migrated."}},
    summary="Liveness and readiness",
)
def healthz(context: Context, response: Response) -> Health:
    head = head_revision()
    try:
        with context.store.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        revision = current_revision(context.store.engine)
        database = "ok"
    except SQLAlchemyError as exc:
        revision, database = None, f"unreachable: {str(getattr(exc, 'orig', None) or exc).strip().splitlines()[0]}"
    healthy = database == "ok" and revision == head
    if not healthy:
        response.status_code = 503
    return Health(
        status="ok" if healthy else "degraded",
        database=database,
        revision=revision,
        head=head,
        up_to_date=revision == head,
        validator_hotkey=context.validator_hotkey,
        accepting_submissions=healthy and context.validator_hotkey is not None,
    )
