"""``POST /v1/submissions`` and its dry run ``/admission``: read the body, call the intake service, count the answer.

The checks, their order and the one transaction that stores a submission are
``arena.intake.service``'s; a refusal is an ``IntakeError``, which ``create_app``
answers with its status, body and Retry-After.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from starlette.concurrency import run_in_threadpool

from arena.api.deps import Context
from arena.api.schemas import ErrorBody
from arena.intake.checks import too_large
from arena.intake.receipts import SubmissionAccepted, SubmissionAdmission
from arena.intake.signed_requests import IntakeError

router = APIRouter(tags=["submissions"])

AGENT_NAME_HEADER = "x-arena-agent-name"  # cosmetic and unsigned: the file name the leaderboard shows
DRAIN_LIMIT = 8 * 1024 * 1024  # an oversized body is read (and dropped) up to this, so the client sees the 413


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refused (413) once it passes ``limit`` bytes without buffering the excess."""
    declared = request.headers.get("content-length", "")
    declared_size = int(declared) if declared.isdigit() else None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            if size > DRAIN_LIMIT:
                break
            continue  # keep draining: a client still sending would see a reset instead of the answer
        chunks.append(chunk)
    if size > limit or (declared_size is not None and declared_size > limit):
        raise too_large(declared_size if declared_size is not None and declared_size > limit else None, limit)
    return b"".join(chunks)


def request_target(request: Request) -> str:
    """Path and query exactly as received: what the miner signed (``btauth/1`` covers the target)."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    target = raw.decode("latin-1")
    query = request.scope.get("query_string") or b""
    return f"{target}?{query.decode('latin-1')}" if query else target


def clean_agent_name(raw: str | None) -> str:
    name = (raw or "").strip().replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable())[:200]
    return name or "agent.py"


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text_}
    for code, text_ in {
        400: "Empty file or not UTF-8.",
        401: "Missing, malformed, stale or badly signed btauth/1 headers.",
        403: "Signed for another validator, or the hotkey is not registered on the subnet.",
        409: "A replayed request, or a copy of an earlier submission (named only when it is the caller's own).",
        413: "The agent file is larger than the limit.",
        422: "Not valid Python, or no top-level def agent_main(problem).",
        429: "Rate limited: one accepted submission per hotkey per window, or the day's copy refusals used up "
        "(Retry-After).",
        503: "This validator accepts no submissions now (no hotkey configured, chain unreachable).",
    }.items()
}

RAW_BODY = {
    "requestBody": {
        "required": True,
        "description": "The agent file, as raw bytes, signed with btauth/1 (bittensor.http_auth.sign) for this "
        "validator's hotkey. Optional header X-Arena-Agent-Name: the file name to show.",
        "content": {"text/x-python": {"schema": {"type": "string", "format": "binary"}}},
    }
}


@router.post(
    "/v1/submissions",
    status_code=status.HTTP_201_CREATED,
    response_model=SubmissionAccepted,
    responses=ERRORS,
    openapi_extra=RAW_BODY,
    summary="Submit a signed agent file",
)
async def post_submission(request: Request, context: Context) -> SubmissionAccepted:
    intake = context.intake
    try:
        body = await read_body(request, intake.limits.max_bytes)
        accepted = await run_in_threadpool(
            intake.submit,
            request.headers,
            body,
            request.method,
            request_target(request),
            clean_agent_name(request.headers.get(AGENT_NAME_HEADER)),
        )
    except IntakeError as exc:
        context.metrics.rejected(exc.code)
        raise
    context.metrics.accepted()
    return accepted


@router.post(
    "/v1/submissions/admission",
    response_model=SubmissionAdmission,
    responses=ERRORS,
    openapi_extra=RAW_BODY,
    summary="Dry run: may this hotkey submit this file now? (stores nothing, compares no copies)",
)
async def post_admission(request: Request, context: Context) -> SubmissionAdmission:
    intake = context.intake
    body = await read_body(request, intake.limits.max_bytes)
    return await run_in_threadpool(intake.admit, request.headers, body, request.method, request_target(request))
