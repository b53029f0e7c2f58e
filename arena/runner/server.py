"""The per-episode server behind the sandbox's one socket.

Routes: ``GET /episode`` (the problem without its reward, the model name, the
tool schemas), ``POST /tools/{name}`` (a shop tool against this episode's
state, recorded here), and the inference proxy's ``/v1/chat/completions`` and
``/v1/models``. Everything the agent sends is untrusted: oversized or
malformed bodies get a clear error, never an exception in the validator.
HTTP itself is ``arena.runner.wire``.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import unquote

import orjson
from pydantic_core import to_jsonable_python

from arena.runner.record import ToolCallRecord
from arena.runner.request_reader import MAX_BODY_BYTES, Request
from arena.runner.wire import Handler, Reply
from arena.shop.tools import ShopEnvironment, ToolResult

MALFORMED_BODY = "<malformed request body>"


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
        # The boot handshake: the sandbox's boot code asks for the episode before it loads any agent code,
        # so a session never asked means the agent never started (arena.runner.faults.boot_fault).
        self.booted_s: float | None = None

    def call_tool(self, name: str, arguments: Any) -> ToolResult:
        at = self.clock()
        if self.first_tool_call_s is None:
            self.first_tool_call_s = at
        started = time.perf_counter()
        result = self.env.call(name, arguments)
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        # model_construct: ToolResult has just validated every field, a second pass would only cost.
        self.tool_calls.append(
            ToolCallRecord.model_construct(
                index=len(self.tool_calls),
                name=result.name,
                arguments=result.arguments,
                ok=result.ok,
                result=result.result,
                error=result.error,
                notice=result.notice,
                at_s=round(at, 6),
                duration_ms=duration_ms,
            )
        )
        return result


def error_reply(status: int, message: str, code: str, kind: str = "invalid_request_error") -> Reply:
    # The proxy's error shape, a string code, and no client retry for a request that cannot improve.
    body = orjson.dumps({"error": {"message": message, "type": kind, "code": code}})
    return Reply(status, body, {"x-should-retry": "false"})


def _json(value: Any) -> bytes:
    return orjson.dumps(value, default=to_jsonable_python)


def build_episode_handler(session: EpisodeSession) -> Handler:
    """The routes, as one function of the request: a tool call is answered inside the
    server's read callback (it never awaits), a model call goes to the proxy."""
    episode_body: bytes | None = None

    def episode() -> Reply:
        nonlocal episode_body
        if session.booted_s is None:
            session.booted_s = session.clock()
        if episode_body is None:  # fixed for the episode: encoded once
            episode_body = _json({"problem": session.public_problem, "model": session.model,
                                  "tools": session.env.schemas()})  # fmt: skip
        return Reply(200, episode_body)

    def tool(request: Request, name: str) -> Reply:
        arguments: Any = MALFORMED_BODY
        if not request.too_large:
            try:
                arguments = orjson.loads(request.body) if request.body else {}
            except orjson.JSONDecodeError:
                pass
        # A broken call is still a call the agent made: it is recorded with its error.
        result = session.call_tool(name, arguments)
        return Reply(200, _json({"name": result.name, "arguments": result.arguments, "ok": result.ok,
                                 "result": result.result, "error": result.error, "notice": result.notice}))  # fmt: skip

    async def models() -> Reply:
        return Reply(200, _json(await session.proxy.models()))

    def handle(request: Request):
        path, method = request.path, request.method
        if path.startswith("/tools/"):
            # Whatever the name, a POST here is a tool call the agent made: recorded, unknown or not.
            name = unquote(path[len("/tools/") :])
            return tool(request, name) if method == "POST" else _not_allowed(method, path)
        if path == "/v1/chat/completions":
            if method != "POST":
                return _not_allowed(method, path)
            if request.too_large:
                return session.proxy.refuse_oversized(MAX_BODY_BYTES)
            return session.proxy.chat_completions(request.body)
        if path == "/episode":
            return episode() if method == "GET" else _not_allowed(method, path)
        if path == "/v1/models":
            return models() if method == "GET" else _not_allowed(method, path)
        return error_reply(404, f"no route {path}", "not_found")

    return handle


def _not_allowed(method: str, path: str) -> Reply:
    return error_reply(405, f"{method} is not allowed on {path}", "method_not_allowed")
