"""The per-episode server behind the sandbox's one socket.

Routes: ``GET /episode`` (the problem without its reward, the model name, the
tool schemas), ``POST /tools/{name}`` (a shop tool against this episode's
state, recorded here), and the inference proxy's ``/v1/chat/completions`` and
``/v1/models``. Everything the agent sends is untrusted: oversized or
malformed bodies get a clear error, never an exception in the validator.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.runner.record import ToolCallRecord
from arena.shop.tools import ShopEnvironment, ToolResult

MAX_BODY_BYTES = 4 * 1024 * 1024


class EpisodeSession:
    """This episode's mutable state: the environment and what was recorded."""

    def __init__(self, env: ShopEnvironment, public_problem: dict, model: str, proxy: Any, clock) -> None:
        self.env = env
        self.public_problem = public_problem
        self.model = model
        self.proxy = proxy
        self.clock = clock
        self.tool_calls: list[ToolCallRecord] = []
        self.first_tool_call_s: float | None = None

    def call_tool(self, name: str, arguments: Any) -> ToolResult:
        at = self.clock()
        if self.first_tool_call_s is None:
            self.first_tool_call_s = at
        started = time.perf_counter()
        result = self.env.call(name, arguments)
        self.tool_calls.append(
            ToolCallRecord(
                index=len(self.tool_calls),
                name=result.name,
                arguments=result.arguments,
                ok=result.ok,
                result=result.result,
                error=result.error,
                notice=result.notice,
                at_s=round(at, 6),
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
            )
        )
        return result


def _error(status: int, message: str, code: str, kind: str = "invalid_request_error") -> JSONResponse:
    # The proxy's error shape: a string code, and no client retry for a request that cannot improve.
    return JSONResponse(
        {"error": {"message": message, "type": kind, "code": code}},
        status_code=status,
        headers={"x-should-retry": "false"},
    )


async def _json_body(request: Request) -> tuple[Any, JSONResponse | None]:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None, _error(413, f"request body over {MAX_BODY_BYTES} bytes", "request_too_large")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return None, _error(413, f"request body over {MAX_BODY_BYTES} bytes", "request_too_large")
    if not body:
        return {}, None
    try:
        return orjson.loads(body), None
    except orjson.JSONDecodeError as exc:
        return None, _error(400, f"body is not valid JSON: {exc}", "invalid_json")


def build_episode_app(session: EpisodeSession) -> Starlette:
    """A bare Starlette app: built per episode, so it must cost microseconds, not
    the tens of milliseconds FastAPI spends analysing routes."""

    async def episode(request: Request) -> Response:
        body = {"problem": session.public_problem, "model": session.model, "tools": session.env.schemas()}
        return Response(orjson.dumps(body), media_type="application/json")

    async def tools(request: Request) -> Response:
        arguments, problem = await _json_body(request)
        # A broken call is still a call the agent made: it is recorded with its error.
        result = session.call_tool(request.path_params["name"], "<malformed request body>" if problem else arguments)
        return Response(orjson.dumps(result.model_dump(mode="json")), media_type="application/json")

    async def chat_completions(request: Request) -> Response:
        body, problem = await _json_body(request)
        if problem is not None:
            return problem
        return await session.proxy.chat_completions(body)

    async def models(request: Request) -> Response:
        return JSONResponse(await session.proxy.models())

    return Starlette(
        routes=[
            Route("/episode", episode, methods=["GET"]),
            Route("/tools/{name}", tools, methods=["POST"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ]
    )
