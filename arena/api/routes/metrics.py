"""``GET /metrics``: the app's Prometheus registry (``arena.api.metrics``) in the text format."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST

from arena.api.deps import Context

router = APIRouter(tags=["health"])


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {
            "content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}},
            "description": "Prometheus text format.",
        }
    },
    summary="Prometheus metrics",
)
def metrics(context: Context) -> Response:
    return Response(context.metrics.render(), media_type=CONTENT_TYPE_LATEST)
