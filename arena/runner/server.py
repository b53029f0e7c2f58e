"""The per-episode server behind the sandbox's one socket.

Routes: ``GET /episode`` (the problem without its reward, the model name, the
tool schemas), ``POST /tools/{name}`` (a shop tool against this episode's
state, recorded here), and the inference proxy's ``/v1/chat/completions`` and
``/v1/models``. Everything the agent sends is untrusted: oversized or
malformed bodies get a clear error, never an exception in the validator.
HTTP itself is ``arena.runner.wire``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote

import orjson
from pydantic_core import to_jsonable_python

from arena.runner.limits import LimitLog
from arena.runner.record import EpisodeLimits, ToolCallRecord
from arena.runner.request_reader import Request
from arena.runner.wire import EpisodeWireServer, Handler, Reply, WireBounds
from arena.shop.tools import ShopEnvironment, ToolResult

MALFORMED_BODY = "<malformed request body>"
# The read-only tools' work (searches, lookups, encoding their answers) runs here, off the event
# loop every episode shares: one episode's heavy call delays only its own next call (one at a
# time per episode), never another episode's socket. The hand-off costs tens of microseconds.
TOOL_THREADS = min(8, os.cpu_count() or 1)
_TOOL_POOL = ThreadPoolExecutor(max_workers=TOOL_THREADS, thread_name_prefix="arena-tool")
# Tools whose result may be withheld when too large: they change nothing, so a call answered
# with an error is as if it had not been made. recommend_product and terminate answer in a few bytes.
_READ_ONLY_TOOLS = frozenset({"find_product", "view_product_information", "web_search"})
_LIMIT_NAMES = frozenset(EpisodeLimits.model_fields)
_RECORD_RESERVE = 512  # left of tool_record_bytes below which no call is executed (a small answer fits)


class EpisodeSession:
    """This episode's mutable state: the environment and what was recorded."""

    def __init__(
        self,
        env: ShopEnvironment,
        public_problem: dict,
        model: str,
        proxy: Any,
        clock,
        limits: EpisodeLimits | None = None,
        limit_log: LimitLog | None = None,
        on_terminate: Callable[[], None] | None = None,
    ) -> None:
        self.env = env
        self.public_problem = public_problem
        self.model = model
        self.proxy = proxy
        self.clock = clock
        self.limits = limits or EpisodeLimits()
        self.limit_log = limit_log or LimitLog(clock)
        self.tool_calls: list[ToolCallRecord] = []
        self.tool_record_bytes = 0  # the record's share spent on tool calls (their encoded answers)
        self.first_tool_call_s: float | None = None
        self._turn = asyncio.Lock()  # one tool call at a time: the record's order is the execution order
        # The boot handshake: the sandbox's boot code asks for the episode before it loads any agent code,
        # so a session never asked means the agent never started (arena.runner.faults.boot_fault).
        self.booted_s: float | None = None
        # The agent's terminate ends the episode: the runner is told (it stops the sandbox after a grace),
        # and from here on every tool and model call is refused and recorded.
        self.on_terminate = on_terminate
        self.terminated_s: float | None = None

    async def call_tool(self, name: str, arguments: Any) -> bytes:
        """Executes and records one call; returns the answer's JSON body. Never raises
        (but a cancellation: the call is then still recorded before it propagates)."""
        if self.first_tool_call_s is None:
            self.first_tool_call_s = self.clock()
        async with self._turn:
            if self._over_call_limit(name):
                return _reply_body(
                    _refusal(name, "tool_calls", f"tool-call limit: {self.limits.tool_calls} calls made")
                )
            at = self.clock()
            refusal = None
            if self.env.state.terminated:
                refusal = _refusal(name, "terminated", "the episode has terminated")
            elif name in _READ_ONLY_TOOLS and self.tool_record_bytes + _RECORD_RESERVE > self.limits.tool_record_bytes:
                refusal = _refusal(name, "tool_record_bytes", self._record_spent())
            if refusal is not None:
                body = _reply_body(refusal)
                self._record(refusal, at, 0.0, body)
                return body
            if name not in _READ_ONLY_TOOLS:  # recommend, terminate, unknown names: a few microseconds
                result, body, duration_ms = self._execute(name, arguments)
                self._record(result, at, duration_ms, body)
                if self.env.state.terminated and self.terminated_s is None:
                    self.terminated_s = at
                    if self.on_terminate is not None:
                        self.on_terminate()
                return body
            work = asyncio.get_running_loop().run_in_executor(_TOOL_POOL, self._execute, name, arguments)
            try:
                result, body, duration_ms = await asyncio.shield(work)
            except asyncio.CancelledError:
                # The agent is gone, but the call ran (it may have changed the state): record it.
                result, body, duration_ms = await work
                self._record(result, at, duration_ms, body)
                raise
            self._record(result, at, duration_ms, body)
            return body

    def refuse_body(self, name: str, limit: int) -> bytes:
        """A tool call whose body was over ``tool_body_bytes``: recorded, refused, never parsed."""
        if self.env.state.terminated:  # after terminate every call is refused as such, whatever its size
            result = _refusal(name, "terminated", "the episode has terminated")
        else:
            result = _refusal(name, "tool_body_bytes", f"tool-call body over {limit} bytes")
        body = _reply_body(result)
        if not self._over_call_limit(name):
            self._record(result, self.clock(), 0.0, body)
        return body

    def _over_call_limit(self, name: str) -> bool:
        # Over the cap nothing more is recorded, only counted: the record stays bounded.
        if len(self.tool_calls) < self.limits.tool_calls:
            return False
        self.limit_log.hit("tool_calls", f"tool call {name[:200]!r} refused: {self.limits.tool_calls} calls made")
        return True

    def _execute(self, name: str, arguments: Any) -> tuple[ToolResult, bytes, float]:
        # In the tool pool's thread: the environment's work and the answer's encoding.
        started = time.perf_counter()
        result = self.env.call(name, arguments)
        try:
            body = _reply_body(result)
        except (TypeError, ValueError):  # arguments orjson cannot write (an integer over 64 bits)
            result = ToolResult.model_construct(name=result.name, arguments={}, ok=False, result=None,
                                                error="the arguments cannot be encoded as JSON", notice=None)  # fmt: skip
            body = _reply_body(result)
        limit = self.limits.tool_result_bytes
        if result.refused is not None or result.name not in _READ_ONLY_TOOLS:
            pass  # refusals are recorded in outline; the other tools answer in a few bytes
        elif len(body) > limit:
            message = f"the answer is {len(body)} bytes, over the {limit}-byte limit; ask for fewer products"
            result = _refusal(result.name, "tool_result_bytes", message)
            body = _reply_body(result)
        elif self.tool_record_bytes + len(body) > self.limits.tool_record_bytes:
            result = _refusal(result.name, "tool_record_bytes", self._record_spent())
            body = _reply_body(result)
        return result, body, round((time.perf_counter() - started) * 1000, 3)

    def _record_spent(self) -> str:
        return f"record limit: {self.tool_record_bytes} of {self.limits.tool_record_bytes} bytes of tool calls kept"

    def _record(self, result: ToolResult, at: float, duration_ms: float, body: bytes) -> None:
        name, arguments = result.name, result.arguments
        if result.refused is None:
            self.tool_record_bytes += len(body)
        else:
            # A refused call is kept in outline (its name, the refusal), so refusals, at most
            # ``tool_calls`` of them, cost the record a few hundred bytes each, whatever was sent.
            name, arguments = name[:200], {}
            if result.refused in _LIMIT_NAMES:
                self.limit_log.hit(result.refused, result.error or result.refused)
        # model_construct: ToolResult has just validated every field, a second pass would only cost.
        self.tool_calls.append(
            ToolCallRecord.model_construct(
                index=len(self.tool_calls),
                name=name,
                arguments=arguments,
                ok=result.ok,
                result=result.result,
                error=result.error,
                notice=result.notice,
                at_s=round(at, 6),
                duration_ms=duration_ms,
                refused=result.refused,
            )
        )


def _refusal(name: str, limit: str, message: str) -> ToolResult:
    # Arguments are left out: a refused call must not cost the record what its arguments would.
    return ToolResult.model_construct(name=str(name)[:200], arguments={}, ok=False, result=None, error=message,
                                      notice=None, refused=limit)  # fmt: skip


def _reply_body(result: ToolResult) -> bytes:
    return _json({"name": result.name, "arguments": result.arguments, "ok": result.ok, "result": result.result,
                  "error": result.error, "notice": result.notice})  # fmt: skip


def error_reply(status: int, message: str, code: str, kind: str = "invalid_request_error") -> Reply:
    # The proxy's error shape, a string code, and no client retry for a request that cannot improve.
    body = orjson.dumps({"error": {"message": message, "type": kind, "code": code}})
    return Reply(status, body, {"x-should-retry": "false"})


def _json(value: Any) -> bytes:
    return orjson.dumps(value, default=to_jsonable_python)


def build_episode_handler(session: EpisodeSession) -> Handler:
    """The routes, as one function of the request: a tool call goes to the tool pool,
    a model call to the proxy."""
    episode_body: bytes | None = None

    def episode() -> Reply:
        nonlocal episode_body
        if session.booted_s is None:
            session.booted_s = session.clock()
        if episode_body is None:  # fixed for the episode: encoded once
            # The limits an agent's clients must outlast: the SDK's openai client waits as long as the
            # episode may run, so a call the proxy is still working on is never given up by the agent.
            limits = {"wall_s": session.limits.wall_s, "llm_call_timeout_s": session.limits.llm_call_timeout_s}
            episode_body = _json({"problem": session.public_problem, "model": session.model,
                                  "tools": session.env.schemas(), "limits": limits})  # fmt: skip
        return Reply(200, episode_body)

    async def tool(request: Request, name: str) -> Reply:
        if request.too_large:
            return Reply(200, session.refuse_body(name, session.limits.tool_body_bytes))
        arguments: Any = MALFORMED_BODY
        try:
            arguments = orjson.loads(request.body) if request.body else {}
        except orjson.JSONDecodeError:
            pass
        # A broken call is still a call the agent made: it is recorded with its error.
        return Reply(200, await session.call_tool(name, arguments))

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
            if session.env.state.terminated:  # the episode is over: nothing more reaches a model
                return session.proxy.refuse_after_terminate(None if request.too_large else request.body)
            if request.too_large:
                return session.proxy.refuse_oversized(session.limits.llm_body_bytes)
            return session.proxy.chat_completions(request.body)
        if path == "/episode":
            return episode() if method == "GET" else _not_allowed(method, path)
        if path == "/v1/models":
            return models() if method == "GET" else _not_allowed(method, path)
        return error_reply(404, f"no route {path}", "not_found")

    return handle


def _not_allowed(method: str, path: str) -> Reply:
    return error_reply(405, f"{method} is not allowed on {path}", "method_not_allowed")


def route_body_limit(limits: EpisodeLimits):
    """Each route's largest body, known from the request's head: a body no route could use
    is never held (read and dropped, the request refused)."""

    def body_limit(method: str, path: str) -> int:
        if path.startswith("/tools/"):
            return limits.tool_body_bytes
        if path == "/v1/chat/completions":
            return limits.llm_body_bytes
        return 0  # GET /episode, /v1/models and unknown routes take no body

    return body_limit


def build_episode_server(session: EpisodeSession) -> EpisodeWireServer:
    limits = session.limits
    bounds = WireBounds(
        connections=limits.connections,
        buffered_bytes=limits.buffered_bytes,
        unsent_bytes=limits.unsent_bytes,
        body_limit=route_body_limit(limits),
        on_limit=session.limit_log.hit,
    )
    return EpisodeWireServer(build_episode_handler(session), bounds)
