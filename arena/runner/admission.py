"""What the inference proxy lets through: validation, allowlist, budgets, and the
exact request sent upstream.

The agent is untrusted, so the proxy, not the agent, decides what reaches the
upstream (a fixed shape of OpenAI chat parameters, see ``request_fields``), which
models may be used (the race's allowlist) and how much may be spent (the
episode's call and token budgets). A refusal is a ``CallFailure`` carrying the
status and OpenAI error code the agent gets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.runner.record import EpisodeLimits, TokenUsage
from arena.runner.request_fields import REQUEST_SHAPE, STREAM_OPTIONS_SHAPE, allowed_fields, forwarded_fields
from arena.runner.upstreams import CallFailure, Upstream, UpstreamRegistry

# The fields that reach the upstream, at every depth: arena/runner/request_fields.py.
FORWARDED_KEYS = frozenset(REQUEST_SHAPE)
SET_BY_PROXY = frozenset({"model", "stream", "stream_options"})


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
class Call:
    """One request through the proxy, from arrival to its record."""

    index: int
    at_s: float
    started: float  # perf_counter at arrival: latency and the per-call deadline count from here
    deadline: float
    model: str = ""
    stream: bool = False
    request: dict[str, Any] = field(default_factory=dict)
    upstream: str | None = None
    reserved: int = 0  # completion tokens held for this call while it is in flight
    sent: float | None = None  # perf_counter when the request left for the upstream
    answered: float | None = None  # perf_counter when the upstream's last byte arrived
    recorded: bool = False


@dataclass
class Plan:
    upstream: Upstream
    payload: dict[str, Any]  # exactly what is sent upstream
    changes: dict[str, dict[str, Any]]  # key -> {"agent": ..., "sent": ...}
    dropped: list[str]
    stream: bool
    agent_wants_usage: bool
    injected_cap: bool  # max_tokens is the proxy's, not the agent's

    def change(self, key: str, value: Any) -> None:
        agent = self.changes.get(key, {}).get("agent", self.payload.get(key))
        if agent != value or key in self.changes:
            self.changes[key] = {"agent": agent, "sent": value}
        self.payload[key] = value


class Budget:
    """One episode's spending: calls forwarded, tokens used, and the completion
    tokens held by calls still in flight."""

    def __init__(self, limits: EpisodeLimits) -> None:
        self.limits = limits
        self.forwarded = 0
        self.used = TokenUsage()
        self.reserved = 0

    def completion_room(self) -> int:
        """Refuses a call that starts with a budget already spent; returns the completion
        tokens left once calls in flight have their reservations."""
        limits, used = self.limits, self.used
        if self.forwarded >= limits.llm_calls:
            raise CallFailure(
                429, "llm_call_budget_exhausted", f"LLM call budget exhausted: {limits.llm_calls} calls already made"
            )
        if used.prompt_tokens >= limits.prompt_tokens:
            raise CallFailure(
                429,
                "prompt_token_budget_exhausted",
                f"prompt-token budget exhausted: {used.prompt_tokens} of {limits.prompt_tokens} used",
            )
        return limits.completion_tokens - used.completion_tokens - self.reserved

    def completion_exhausted(self) -> CallFailure:
        return CallFailure(
            429,
            "completion_token_budget_exhausted",
            f"completion-token budget exhausted: {self.used.completion_tokens} of {self.limits.completion_tokens} "
            f"used, {self.reserved} reserved by calls in flight",
        )

    def hold(self, call: Call, tokens: int) -> None:
        self.forwarded += 1
        self.reserved += tokens
        call.reserved = tokens

    def settle(self, call: Call, usage: TokenUsage) -> None:
        """Charges what the call spent and releases what it held."""
        self.used.prompt_tokens += usage.prompt_tokens
        self.used.completion_tokens += usage.completion_tokens
        self.used.total_tokens += usage.total_tokens
        self.reserved -= call.reserved
        call.reserved = 0


class Admission:
    """Turns an agent's request into a ``Plan`` or refuses it. Per episode, like its budget."""

    def __init__(
        self, registry: UpstreamRegistry, allowlist: list[str], budget: Budget, pin: SamplingPin | None = None
    ) -> None:
        self.registry = registry
        self.allowlist = list(dict.fromkeys(allowlist))
        self.budget = budget
        self.pin = pin or SamplingPin()
        self.learned_context: dict[str, int] = {}  # from vLLM's overflow messages, for unconfigured upstreams

    def admit(self, call: Call, body: Any) -> Plan:
        """``body``: the parsed JSON, or the raw request bytes (then invalid JSON is a 400 here)."""
        if isinstance(body, bytes | bytearray | str):
            call.request = {"body_chars": len(body)}
            try:
                body = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
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
        if head.model not in self.allowlist:
            raise CallFailure(
                403, "model_not_allowed", f"model {head.model!r} is not allowed here; allowed: {self.allowlist}"
            )
        upstream = self.registry.for_model(head.model)
        if upstream is None:
            raise CallFailure(
                404, "model_not_found", f"model {head.model!r} is allowed but no upstream serves it (validator config)"
            )
        n = head.n or 1
        room = self.budget.completion_room() // n
        if room < 1:
            raise self.budget.completion_exhausted()
        payload, dropped = forwarded_fields(body, SET_BY_PROXY)
        plan = Plan(
            upstream=upstream,
            payload=payload,
            changes={},
            dropped=dropped,
            stream=bool(head.stream),
            agent_wants_usage=bool((head.stream_options or {}).get("include_usage")),
            injected_cap=False,
        )
        for key in ("temperature", "seed"):
            value = getattr(self.pin, key)
            if value is not None:
                plan.change(key, value)
        reserve = self._cap_max_tokens(plan, room) * n
        payload["model"] = head.model
        if plan.stream:
            # Usage must come back for the budget even when the agent did not ask for it.
            payload["stream"] = True
            options = allowed_fields(head.stream_options or {}, STREAM_OPTIONS_SHAPE, "stream_options", plan.dropped)
            payload["stream_options"] = {**options, "include_usage": True}
        call.upstream = upstream.name
        call.request = {key: value for key, value in payload.items() if key not in SET_BY_PROXY}
        if plan.dropped or plan.changes:
            call.request["proxy"] = {"dropped_keys": plan.dropped, "changed": plan.changes}
        self.budget.hold(call, reserve)
        return plan

    def _cap_max_tokens(self, plan: Plan, room: int) -> int:
        """Caps each choice's completion to the budget left; returns what the call may spend per choice."""
        asked = [key for key in ("max_tokens", "max_completion_tokens") if plan.payload.get(key) is not None]
        for key in asked:
            if plan.payload[key] > room:
                plan.change(key, room)
        if asked:
            return max(plan.payload[key] for key in asked)
        context = plan.upstream.context_length or self.learned_context.get(plan.upstream.name)
        if context is not None and room >= context:
            # No completion can outgrow the context window, and vLLM rejects prompt + max_tokens
            # above it: leave max_tokens to the server.
            return context
        plan.change("max_tokens", room)
        plan.injected_cap = True
        return room
