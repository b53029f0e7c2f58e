"""``/healthz``: is the database reachable and migrated, and does this validator take submissions."""

from __future__ import annotations

from fastapi import APIRouter, Response

from arena.api.deps import Context
from arena.api.schemas import Health
from arena.store.migrate import database_state, head_revision

router = APIRouter(tags=["health"])


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"model": Health, "description": "The database is unreachable or not migrated."}},
    summary="Liveness and readiness",
)
def healthz(context: Context, response: Response) -> Health:
    head = head_revision()
    database, revision = database_state(context.store.engine)
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
