"""The recording inference proxy: the only way an episode's agent reaches a model.

What is let through, and how much may be spent, is decided by
``arena.runner.budgets``; this module forwards what was admitted (bounded by
the per-call deadline), relays the answer, and writes the ``LLMCallRecord`` of
every request, refusals and failures included, because the record is the
trajectory everything downstream learns from. Whatever the agent sends, the
answer is an OpenAI-shaped response, never an exception:
``docs/inference-proxy.md`` lists the codes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

import httpx
import orjson

from arena.runner.budgets import (
    FORWARDED_KEYS,
    REFUSED_BODIES_READ,
    TOKENIZED_MARGIN,
    Admission,
    Budget,
    Call,
    Plan,
)
from arena.runner.limits import LimitLog
from arena.runner.record import EpisodeLimits, LLMCallRecord, TokenUsage
from arena.runner.settings import SamplingPin, Upstream
from arena.runner.upstream_answers import StreamAssembler, completion_record, estimate_usage, parse_usage
from arena.runner.upstreams import (
    CallFailure,
    UpstreamRegistry,
    close,
    context_overflow,
    count_prompt_tokens,
    fetch_chat,
    open_chat,
    stream_events,
)
from arena.runner.wire import Reply, StreamReply

__all__ = ["DROPPED_HEADER", "FORWARDED_KEYS", "InferenceProxy", "SamplingPin", "Upstream", "UpstreamRegistry"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

DROPPED_HEADER = "x-arena-dropped-keys"
# The agent's own fault or budget: a retry (the openai client retries by default) cannot succeed.
_NO_RETRY = frozenset({400, 403, 404, 409, 413, 422, 429})


def _outline(call: Call, body: Any) -> None:
    """What a refused request asked for, without its text (``body`` None: over the body limit, never read)."""
    if body is None:
        call.request = {"body_bytes_over": True}
        return
    if isinstance(body, bytes | bytearray | str):
        try:
            body = orjson.loads(body)
        except orjson.JSONDecodeError:
            call.request = {"body_chars": len(body)}
            return
    if not isinstance(body, dict):
        call.request = {"body_type": type(body).__name__}
        return
    call.model = body["model"][:200] if isinstance(body.get("model"), str) else ""
    call.stream = body.get("stream") is True
    messages = body.get("messages")
    call.request = {"keys": sorted(body), "message_count": len(messages) if isinstance(messages, list) else None}


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
        limit_log: LimitLog | None = None,
    ) -> None:
        self._registry = registry
        self._limits = limits
        self._on_call = on_call
        self._clock = clock
        self._limit_log = limit_log or LimitLog(clock)
        self._budget = Budget(limits)
        self._admission = Admission(registry, allowlist, self._budget, pin)
        self._next_index = 0
        self._refusals = 0  # refused calls recorded

    @property
    def calls_forwarded(self) -> int:
        return self._budget.forwarded

    @property
    def tokens_used(self) -> TokenUsage:
        return self._budget.used.model_copy()

    async def models(self) -> dict:
        data = []
        for model in self._admission.allowlist:
            upstream = self._registry.for_model(model)
            if upstream is not None:
                data.append({"id": model, "object": "model", "created": 0, "owned_by": upstream.name})
        return {"object": "list", "data": data}

    async def chat_completions(self, body: Any) -> Reply | StreamReply:
        """``body``: the parsed JSON, or the raw request bytes (then invalid JSON is a 400 here)."""
        call = self._arrive()
        admitted = False
        try:
            plan = self._admission.admit(call, body)
            if plan.count_prompt:
                await self._count_prompt(call, plan)
            admitted = True
            return await self._forward(call, plan)
        except CallFailure as refusal:
            return self._refuse(call, refusal, by_proxy=not admitted)
        except Exception as exc:  # a proxy bug must still answer in OpenAI shape and leave a record
            logger.exception("inference proxy failed on LLM call %d", call.index)
            failure = CallFailure(500, "proxy_error", f"internal proxy error: {type(exc).__name__}: {exc}")
            self._record(call, 500, None, TokenUsage(), failure.message)
            return Reply(500, orjson.dumps(failure.body()))
        except BaseException:  # cancelled: the agent hung up mid-call (or the episode is being torn down)
            self._record(call, 499, None, TokenUsage(), "the agent closed the connection before the answer")
            raise

    def refuse_oversized(self, limit_bytes: int) -> Reply:
        """A request whose body was over the server's limit: refused, and recorded like any other."""
        call = self._arrive()
        call.request = {"body_bytes_over": limit_bytes}
        message = f"request body over {limit_bytes} bytes"
        return self._refuse(call, CallFailure(413, "request_too_large", message, limit="llm_body_bytes"))

    def refuse_after_terminate(self, body: Any) -> Reply:
        """A model call after the agent's terminate: the episode is over, so nothing is forwarded
        (an answer now could only earn judge credit for text that decided nothing). Recorded in
        outline like any refusal: when (``at_s``), and what was asked (its keys, model, stream)."""
        call = self._arrive()
        if isinstance(body, bytes | bytearray | str):
            # Read within the same allowance as the bodies of calls refused before terminate: past it, the
            # outline is the body's size alone (a late body is the agent's to send, its parse the validator's).
            size = len(body.encode() if isinstance(body, str) else body)
            if self._budget.refused_bytes + size > REFUSED_BODIES_READ * self._limits.llm_body_bytes:
                call.request = {"body_bytes": size, "unread": True}
                return self._refuse(call, CallFailure(409, "episode_terminated", "the episode has terminated"))
            self._budget.refused_bytes += size
        _outline(call, body)
        return self._refuse(call, CallFailure(409, "episode_terminated", "the episode has terminated"))

    def _arrive(self) -> Call:
        started = time.perf_counter()
        call = Call(index=self._next_index, at_s=self._clock(), started=started,
                    deadline=started + self._limits.llm_call_timeout_s)  # fmt: skip
        self._next_index += 1
        return call

    def _refuse(self, call: Call, refusal: CallFailure, by_proxy: bool = True) -> Reply:
        """``by_proxy``: refused before forwarding (not an upstream's failure)."""
        if refusal.limit is not None:
            self._limit_log.hit(refusal.limit, refusal.message)
        headers = {"x-should-retry": "false"} if refusal.status in _NO_RETRY else {}
        reply = Reply(refusal.status, orjson.dumps(refusal.body()), headers)
        if by_proxy:
            # The budgets count forwarded calls only, so a loop on refusals is bounded here:
            # past ``llm_refusals`` of them a refusal is counted, not recorded.
            if self._refusals >= self._limits.llm_refusals:
                self._limit_log.hit("llm_refusals", f"LLM call refused unrecorded: {refusal.message}")
                if call.index == self._next_index - 1:
                    self._next_index -= 1  # admission never awaits: this was the latest arrival
                call.recorded = True
                return reply
            self._refusals += 1
        self._record(call, refusal.status, None, TokenUsage(), refusal.message)
        return reply

    # --- forwarding ----------------------------------------------------------------------------------

    async def _count_prompt(self, call: Call, plan: Plan) -> None:
        """The prompt's byte bound did not fit: the upstream's tokenizer counts it (the call
        holds what is left meanwhile), and the call goes on only if that count fits."""
        link = self._registry.link(plan.upstream.name)
        assert plan.upstream.tokenize_url is not None  # admission counts the prompt only with a tokenizer
        count = await count_prompt_tokens(link, plan.upstream.tokenize_url, plan.payload, call.deadline)
        try:
            self._budget.reprice(call, plan.prompt_bound if count is None else count + TOKENIZED_MARGIN)
        except CallFailure:
            self._budget.withdraw(call)
            raise

    async def _forward(self, call: Call, plan: Plan) -> Reply | StreamReply:
        headers = {DROPPED_HEADER: ",".join(plan.dropped)} if plan.dropped else {}
        if plan.stream:
            response = await self._send(call, plan, open_chat)
            headers["cache-control"] = "no-cache"
            relay = _Relay(self._relay(call, plan, response), partial(self._abandon, call, response))
            return StreamReply(relay, headers)
        raw, answer = await self._send(call, plan, fetch_chat)
        call.answered = time.perf_counter()
        record = completion_record(answer)
        usage = parse_usage(answer.get("usage"))
        if usage is None:
            usage = estimate_usage(call.request, record)
            record["usage_estimated"] = True
        self._record(call, 200, record, usage, None)
        return Reply(200, raw, headers)

    async def _send(self, call: Call, plan: Plan, exchange: Callable[..., Awaitable[T]]) -> T:
        link = self._registry.link(plan.upstream.name)
        args = (plan.upstream.name, call.deadline, self._limits.llm_call_timeout_s)
        call.sent = time.perf_counter()
        try:
            return await exchange(link, plan.payload, *args)
        except CallFailure as failure:
            overflow = context_overflow(failure.message) if plan.injected_cap and failure.status == 400 else None
            room = overflow[0] - overflow[1] if overflow else 0
            if not 1 <= room < plan.payload["max_tokens"]:
                call.answered = time.perf_counter()
                raise
            assert overflow is not None  # a room of 1 or more comes from an overflow
            self._admission.learned_context[plan.upstream.name] = overflow[0]
        # Our own cap overflowed the context window (vLLM rejects prompt + max_tokens above it):
        # the agent asked for no limit, so the largest completion that fits is what it would get.
        plan.change("max_tokens", room)
        call.request["max_tokens"] = room
        try:
            return await exchange(link, plan.payload, *args)
        except CallFailure:
            call.answered = time.perf_counter()
            raise

    async def _relay(self, call: Call, plan: Plan, response: httpx.Response) -> AsyncGenerator[bytes, None]:
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
                    yield b"data: %s\n\n" % data.encode()
                if not assembler.finished:
                    failure = CallFailure(
                        502, "upstream_error", f"upstream {call.upstream} ended the stream unfinished"
                    )
            except CallFailure as exc:
                failure = exc
            call.answered = time.perf_counter()
            await close(response)
            self._record_stream(call, assembler, failure)
            if failure is not None:
                yield b"data: %s\n\n" % orjson.dumps(failure.body())
            yield b"data: [DONE]\n\n"
        finally:
            await close(response)
            closed = CallFailure(499, "client_closed_request", "the agent closed the stream before its end")
            self._record_stream(call, assembler, closed)

    async def _abandon(self, call: Call, response: httpx.Response) -> None:
        await close(response)
        self._record(call, 499, None, TokenUsage(), "the agent closed the stream before its first byte")

    # --- recording ----------------------------------------------------------------------------------

    def _record_stream(self, call: Call, assembler: StreamAssembler, failure: CallFailure | None) -> None:
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
        self, call: Call, status: int, response: dict[str, Any] | None, usage: TokenUsage, error: str | None
    ) -> None:
        if call.recorded:
            return
        call.recorded = True
        self._budget.settle(call, usage)
        now = time.perf_counter()
        upstream_ms = None if call.sent is None else ((call.answered or now) - call.sent) * 1000.0
        # model_construct: every field is the proxy's own, already typed; validating it again costs cold CPU
        # on the path between the upstream's answer and the agent's.
        record = LLMCallRecord.model_construct(
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
            latency_ms=(now - call.started) * 1000.0,
            upstream_ms=upstream_ms,
        )
        try:
            self._on_call(record)
        except Exception:  # the validator's sink failing must not turn into the agent's error
            logger.exception("on_call failed for LLM call %d", call.index)


class _Relay:
    """The relay as the socket server iterates it. Closed before its first chunk was
    asked for (the agent hung up while the upstream was being opened), the generator's
    own cleanup never runs, so the upstream is closed and the call recorded here."""

    def __init__(self, events: AsyncGenerator[bytes, None], abandon: Callable[[], Awaitable[None]]) -> None:
        self._events, self._abandon, self._started = events, abandon, False

    def __aiter__(self) -> _Relay:
        return self

    async def __anext__(self) -> bytes:
        self._started = True
        return await self._events.__anext__()

    async def aclose(self) -> None:
        if not self._started:
            self._started = True
            await self._abandon()
        await self._events.aclose()
