"""The recording inference proxy: the only way an episode's agent reaches a model.

The agent is untrusted, so the proxy, not the agent, decides what reaches the
upstream (a fixed set of OpenAI chat parameters; see ``FORWARDED_KEYS``), which
models may be used (the race's allowlist), how much may be spent (the
episode's call and token budgets) and how long a call may take; and it writes
the ``LLMCallRecord`` of every request, refusals and failures included, because
the record is the trajectory everything downstream learns from. Whatever the
agent sends, the answer is an OpenAI-shaped response, never an exception:
``docs/inference-proxy.md`` lists the codes.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from arena.runner.record import EpisodeLimits, LLMCallRecord, TokenUsage
from arena.runner.upstreams import (
    CallFailure,
    StreamAssembler,
    Upstream,
    UpstreamRegistry,
    close,
    completion_record,
    context_overflow,
    estimate_usage,
    open_chat,
    parse_usage,
    read_answer,
    stream_events,
)

__all__ = ["DROPPED_HEADER", "FORWARDED_KEYS", "InferenceProxy", "SamplingPin", "Upstream", "UpstreamRegistry"]

logger = logging.getLogger(__name__)

# OpenAI chat parameters, plus the vLLM sampling extras a reasoning agent reasonably tunes
# (chat_template_kwargs carries Qwen3's enable_thinking). Anything else is dropped, because
# it either leaks identity or state upstream (user, metadata, store, service_tier) or reaches
# server internals an agent has no business in (vLLM's chat_template, priority, lora/kv params).
FORWARDED_KEYS = frozenset(
    {
        "messages", "tools", "tool_choice", "parallel_tool_calls", "response_format",
        "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "stop", "n",
        "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "reasoning_effort",
        "top_k", "min_p", "repetition_penalty", "chat_template_kwargs",
    }
)  # fmt: skip
_SET_BY_PROXY = frozenset({"model", "stream", "stream_options"})
DROPPED_HEADER = "x-arena-dropped-keys"
# The agent's own fault or budget: a retry (the openai client retries by default) cannot succeed.
_NO_RETRY = frozenset({400, 403, 404, 413, 422, 429})


class SamplingPin(BaseModel):
    """Reproducible races: these values replace the agent's on every forwarded request."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = None
    seed: int | None = None


class _RequestHead(BaseModel):
    """The fields the proxy acts on. Strict: a value the proxy reads (say, to cap
    max_tokens) must be the value the upstream sees, so nothing is coerced."""

    model_config = ConfigDict(extra="ignore", strict=True)

    model: str = Field(min_length=1)
    messages: list[dict[str, Any]]
    stream: bool | None = None
    stream_options: dict[str, Any] | None = None
    n: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)


@dataclass
class _Call:
    index: int
    at_s: float
    started: float  # perf_counter at arrival: latency and the per-call deadline count from here
    deadline: float
    model: str = ""
    stream: bool = False
    request: dict[str, Any] = field(default_factory=dict)
    upstream: str | None = None
    reserved: int = 0  # completion tokens held for this call while it is in flight
    recorded: bool = False


@dataclass
class _Plan:
    upstream: Upstream
    payload: dict[str, Any]  # exactly what is sent upstream
    changes: dict[str, dict[str, Any]]  # key -> {"agent": ..., "sent": ...}
    dropped: list[str]
    stream: bool
    agent_wants_usage: bool
    injected_cap: bool  # max_tokens is the proxy's, not the agent's


class _RelayResponse(StreamingResponse):
    """Watches for the agent hanging up whatever ASGI version the server speaks (from 2.4
    Starlette only notices at the next send, which may be a whole upstream stall away), so
    the call is recorded and the upstream released at once, not when generation ends."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def relay() -> None:
                    try:
                        await self.stream_response(send)
                    except OSError:  # the agent hung up between our checks
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(relay)
                await self.listen_for_disconnect(receive)
                group.cancel_scope.cancel()
        finally:
            await self.body_iterator.aclose()  # type: ignore[attr-defined]


class InferenceProxy:
    """One episode's proxy: its budgets are the episode's, so make one per episode
    (the registry and its pooled clients are shared)."""

    def __init__(
        self,
        registry: UpstreamRegistry,
        allowlist: list[str],
        limits: EpisodeLimits,
        on_call: Callable[[LLMCallRecord], None],
        clock: Callable[[], float],
        pin: SamplingPin | None = None,
    ) -> None:
        self._registry = registry
        self._allowlist = list(dict.fromkeys(allowlist))
        self._limits = limits
        self._on_call = on_call
        self._clock = clock
        self._pin = pin or SamplingPin()
        self._next_index = 0
        self._forwarded = 0
        self._used = TokenUsage()
        self._reserved = 0
        self._learned_context: dict[str, int] = {}  # from vLLM's overflow messages, for unconfigured upstreams

    @property
    def calls_forwarded(self) -> int:
        return self._forwarded

    @property
    def tokens_used(self) -> TokenUsage:
        return self._used.model_copy()

    async def models(self) -> dict:
        data = []
        for model in self._allowlist:
            upstream = self._registry.for_model(model)
            if upstream is not None:
                data.append({"id": model, "object": "model", "created": 0, "owned_by": upstream.name})
        return {"object": "list", "data": data}

    async def chat_completions(self, body: Any) -> Response:
        """``body``: the parsed JSON, or the raw request bytes (then invalid JSON is a 400 here)."""
        started = time.perf_counter()
        deadline = started + self._limits.llm_call_timeout_s
        call = _Call(index=self._next_index, at_s=self._clock(), started=started, deadline=deadline)
        self._next_index += 1
        try:
            plan = self._admit(call, body)
            return await self._forward(call, plan)
        except CallFailure as refusal:
            self._record(call, refusal.status, None, TokenUsage(), refusal.message)
            headers = {"x-should-retry": "false"} if refusal.status in _NO_RETRY else None
            return JSONResponse(refusal.body(), status_code=refusal.status, headers=headers)
        except Exception as exc:  # a proxy bug must still answer in OpenAI shape and leave a record
            logger.exception("inference proxy failed on LLM call %d", call.index)
            refusal = CallFailure(500, "proxy_error", f"internal proxy error: {type(exc).__name__}: {exc}")
            self._record(call, 500, None, TokenUsage(), refusal.message)
            return JSONResponse(refusal.body(), status_code=500)
        except BaseException:  # cancelled: the agent hung up mid-call (or the episode is being torn down)
            self._record(call, 499, None, TokenUsage(), "the agent closed the connection before the answer")
            raise

    # --- admission: validation, allowlist, budgets, what is sent -----------------------------------

    def _admit(self, call: _Call, body: Any) -> _Plan:
        if isinstance(body, bytes | bytearray | str):
            call.request = {"body_chars": len(body)}
            try:
                body = json.loads(body)
            except ValueError as exc:
                raise CallFailure(400, "invalid_json", f"request body is not valid JSON: {exc}") from None
        if not isinstance(body, dict):
            call.request = {"body_type": type(body).__name__}
            raise CallFailure(400, "invalid_request", f"request body must be a JSON object, not {type(body).__name__}")
        call.model = body["model"] if isinstance(body.get("model"), str) else ""
        call.stream = body.get("stream") is True
        # Until forwarded, a request is recorded only in outline: an agent looping on
        # refusals must not grow the episode record by a copy of its prompt each time.
        messages = body.get("messages")
        call.request = {"keys": sorted(body), "message_count": len(messages) if isinstance(messages, list) else None}
        try:
            head = _RequestHead.model_validate(body)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
            raise CallFailure(400, "invalid_request", f"invalid chat completion request: {problems}") from None
        if head.model not in self._allowlist:
            raise CallFailure(
                403, "model_not_allowed", f"model {head.model!r} is not allowed here; allowed: {self._allowlist}"
            )
        upstream = self._registry.for_model(head.model)
        if upstream is None:
            raise CallFailure(
                404, "model_not_found", f"model {head.model!r} is allowed but no upstream serves it (validator config)"
            )
        n = head.n or 1
        room = self._completion_room() // n
        if room < 1:
            raise CallFailure(429, "completion_token_budget_exhausted", self._completion_budget_text())
        payload = {key: value for key, value in body.items() if key in FORWARDED_KEYS}
        plan = _Plan(
            upstream=upstream,
            payload=payload,
            changes={},
            dropped=sorted(key for key in body if key not in FORWARDED_KEYS | _SET_BY_PROXY),
            stream=bool(head.stream),
            agent_wants_usage=bool((head.stream_options or {}).get("include_usage")),
            injected_cap=False,
        )
        for key in ("temperature", "seed"):
            value = getattr(self._pin, key)
            if value is not None:
                _change(plan, key, value)
        reserve = self._cap_max_tokens(plan, room) * n
        payload["model"] = head.model
        if plan.stream:
            # Usage must come back for the budget even when the agent did not ask for it.
            payload["stream"] = True
            payload["stream_options"] = {**(head.stream_options or {}), "include_usage": True}
        call.upstream = upstream.name
        call.request = {key: value for key, value in payload.items() if key not in _SET_BY_PROXY}
        if plan.dropped or plan.changes:
            call.request["proxy"] = {"dropped_keys": plan.dropped, "changed": plan.changes}
        self._forwarded += 1
        self._reserved += reserve
        call.reserved = reserve
        return plan

    def _completion_room(self) -> int:
        """Refuses a call that starts with a budget already spent; returns the completion
        tokens left once calls in flight have their reservations."""
        limits, used = self._limits, self._used
        if self._forwarded >= limits.llm_calls:
            raise CallFailure(
                429, "llm_call_budget_exhausted", f"LLM call budget exhausted: {limits.llm_calls} calls already made"
            )
        if used.prompt_tokens >= limits.prompt_tokens:
            raise CallFailure(
                429,
                "prompt_token_budget_exhausted",
                f"prompt-token budget exhausted: {used.prompt_tokens} of {limits.prompt_tokens} used",
            )
        return limits.completion_tokens - used.completion_tokens - self._reserved

    def _completion_budget_text(self) -> str:
        return (
            f"completion-token budget exhausted: {self._used.completion_tokens} of {self._limits.completion_tokens} "
            f"used, {self._reserved} reserved by calls in flight"
        )

    def _cap_max_tokens(self, plan: _Plan, room: int) -> int:
        """Caps each choice's completion to the budget left; returns what the call may spend per choice."""
        asked = [key for key in ("max_tokens", "max_completion_tokens") if plan.payload.get(key) is not None]
        for key in asked:
            if plan.payload[key] > room:
                _change(plan, key, room)
        if asked:
            return max(plan.payload[key] for key in asked)
        context = plan.upstream.context_length or self._learned_context.get(plan.upstream.name)
        if context is not None and room >= context:
            # No completion can outgrow the context window, and vLLM rejects prompt + max_tokens
            # above it: leave max_tokens to the server.
            return context
        _change(plan, "max_tokens", room)
        plan.injected_cap = True
        return room

    # --- forwarding ----------------------------------------------------------------------------------

    async def _forward(self, call: _Call, plan: _Plan) -> Response:
        response = await self._open(call, plan)
        headers = {DROPPED_HEADER: ",".join(plan.dropped)} if plan.dropped else {}
        if plan.stream:
            headers["cache-control"] = "no-cache"
            return _RelayResponse(self._relay(call, plan, response), media_type="text/event-stream", headers=headers)
        raw, answer = await read_answer(response, plan.upstream.name, call.deadline, self._limits.llm_call_timeout_s)
        record = completion_record(answer)
        usage = parse_usage(answer.get("usage"))
        if usage is None:
            usage = estimate_usage(call.request, record)
            record["usage_estimated"] = True
        self._record(call, 200, record, usage, None)
        return Response(raw, media_type="application/json", headers=headers)

    async def _open(self, call: _Call, plan: _Plan) -> httpx.Response:
        client = self._registry.client(plan.upstream.name)
        args = (plan.upstream.name, call.deadline, self._limits.llm_call_timeout_s)
        try:
            return await open_chat(client, plan.payload, *args)
        except CallFailure as failure:
            overflow = context_overflow(failure.message) if plan.injected_cap and failure.status == 400 else None
            room = overflow[0] - overflow[1] if overflow else 0
            if not 1 <= room < plan.payload["max_tokens"]:
                raise
            self._learned_context[plan.upstream.name] = overflow[0]
        # Our own cap overflowed the context window (vLLM rejects prompt + max_tokens above it):
        # the agent asked for no limit, so the largest completion that fits is what it would get.
        _change(plan, "max_tokens", room)
        call.request["max_tokens"] = room
        return await open_chat(client, plan.payload, *args)

    async def _relay(self, call: _Call, plan: _Plan, response: httpx.Response) -> AsyncIterator[str]:
        """Passes the upstream's SSE chunks through as they arrive while assembling the
        full answer for the record; a failure after the headers ends the stream with an
        OpenAI error event (the openai client raises on it)."""
        assembler = StreamAssembler()
        failure: CallFailure | None = None
        try:
            try:
                events = stream_events(response, plan.upstream.name, call.deadline, self._limits.llm_call_timeout_s)
                async for data, chunk in events:
                    assembler.add(chunk)
                    if chunk.get("choices") == [] and not plan.agent_wants_usage:
                        continue  # the usage-only chunk the proxy asked for on the budget's behalf
                    yield f"data: {data}\n\n"
                if not assembler.finished:
                    failure = CallFailure(
                        502, "upstream_error", f"upstream {call.upstream} ended the stream unfinished"
                    )
            except CallFailure as exc:
                failure = exc
            await close(response)
            self._record_stream(call, assembler, failure)
            if failure is not None:
                yield f"data: {json.dumps(failure.body())}\n\n"
            yield "data: [DONE]\n\n"
        finally:
            await close(response)
            closed = CallFailure(499, "client_closed_request", "the agent closed the stream before its end")
            self._record_stream(call, assembler, closed)

    # --- recording ----------------------------------------------------------------------------------

    def _record_stream(self, call: _Call, assembler: StreamAssembler, failure: CallFailure | None) -> None:
        if call.recorded:
            return
        record = assembler.record() if assembler.chunks else None
        usage = assembler.usage
        if usage is None:
            # Nothing came back, so nothing is charged; partial output is charged by estimate.
            usage = estimate_usage(call.request, record) if record is not None else TokenUsage()
            if record is not None:
                record["usage_estimated"] = True
        if failure is None:
            self._record(call, 200, record, usage, None)
        else:
            self._record(call, failure.status, record, usage, failure.message)

    def _record(
        self, call: _Call, status: int, response: dict[str, Any] | None, usage: TokenUsage, error: str | None
    ) -> None:
        if call.recorded:
            return
        call.recorded = True
        self._used.prompt_tokens += usage.prompt_tokens
        self._used.completion_tokens += usage.completion_tokens
        self._used.total_tokens += usage.total_tokens
        self._reserved -= call.reserved
        call.reserved = 0
        record = LLMCallRecord(
            index=call.index,
            model=call.model,
            upstream=call.upstream,
            stream=call.stream,
            request=call.request,
            response=response,
            usage=usage,
            status_code=status,
            error=error,
            at_s=call.at_s,
            latency_ms=(time.perf_counter() - call.started) * 1000.0,
        )
        try:
            self._on_call(record)
        except Exception:  # the validator's sink failing must not turn into the agent's error
            logger.exception("on_call failed for LLM call %d", call.index)


def _change(plan: _Plan, key: str, value: Any) -> None:
    agent = plan.changes.get(key, {}).get("agent", plan.payload.get(key))
    if agent != value or key in plan.changes:
        plan.changes[key] = {"agent": agent, "sent": value}
    plan.payload[key] = value
