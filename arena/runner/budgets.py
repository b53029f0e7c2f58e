"""What the inference proxy lets through: validation, allowlist, budgets, and the
exact request sent upstream.

The agent is untrusted, so the proxy, not the agent, decides what reaches the
upstream (a fixed shape of OpenAI chat parameters, see ``request_fields``), which
models may be used (the race's allowlist) and how much may be spent (the
episode's call and token budgets). A refusal is a ``CallFailure`` carrying the
status and OpenAI error code the agent gets.

Budgets hold for calls in flight too: a call reserves, before it is forwarded,
the most it can spend (its completion cap, and an upper bound of its prompt
tokens), and settles on the usage the upstream reports. The prompt bound is the
request's JSON bytes plus the chat template's own tokens: a byte-level BPE
token covers at least one byte of text, and the JSON around the text is
longer than the template's markers around each message. When that bound does
not fit and the upstream has a tokenizer endpoint, its count is the bound.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.runner.record import EpisodeLimits, TokenUsage
from arena.runner.request_fields import REQUEST_SHAPE, STREAM_OPTIONS_SHAPE, allowed_fields, forwarded_fields
from arena.runner.settings import SamplingPin, Upstream
from arena.runner.steering import refuse_steering
from arena.runner.upstreams import CallFailure, UpstreamRegistry

# The fields that reach the upstream, at every depth: arena/runner/request_fields.py.
FORWARDED_KEYS = frozenset(REQUEST_SHAPE)
SET_BY_PROXY = frozenset({"model", "stream", "stream_options"})
# The chat template's fixed text (a default system prompt, the tool-use preamble) in tokens,
# over what the request's bytes already bound.
TEMPLATE_TOKENS = 512
TOKENIZED_MARGIN = 16  # over an upstream tokenizer's count: the completion's own start markers
# Bytes of request bodies the proxy reads for calls it then refuses, per episode, in llm_body_bytes: past them
# a call is refused unread. Reading is the validator's cost, not the agent's: a body within llm_body_bytes of
# 1.4 M empty lists takes about a CPU-second to parse (the event loop every episode of the process shares),
# and the agent may send it again after every refusal; a forwarded call's body is bounded by the prompt
# budget instead (a call refused after the upstream's tokenizer counted it is withdrawn, and counted here too).
# An honest agent's refusals are a few small bodies.
REFUSED_BODIES_READ = 4


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
    reserved_prompt: int = 0  # the prompt tokens it may use, held likewise
    in_flight: bool = False
    sent: float | None = None  # perf_counter when the request left for the upstream
    answered: float | None = None  # perf_counter when the upstream's last byte arrived
    recorded: bool = False
    body_bytes: int = 0  # of the request body the proxy read (0: handed parsed)


@dataclass
class Plan:
    upstream: Upstream
    payload: dict[str, Any]  # exactly what is sent upstream
    changes: dict[str, dict[str, Any]]  # key -> {"agent": ..., "sent": ...}
    dropped: list[str]
    stream: bool
    agent_wants_usage: bool
    injected_cap: bool  # max_tokens is the proxy's, not the agent's
    prompt_bound: int = 0  # the prompt tokens the request's bytes bound
    count_prompt: bool = False  # the bound does not fit: the upstream's tokenizer is to count the prompt

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
        self.reserved_prompt = 0
        self.in_flight = 0
        self.refused_bytes = 0  # of the bodies read for calls refused before they were sent (REFUSED_BODIES_READ)

    def completion_room(self) -> int:
        """Refuses a call that starts with a budget already spent, or one too many in
        flight; returns the completion tokens left once calls in flight have their reservations."""
        limits, used = self.limits, self.used
        if self.forwarded >= limits.llm_calls:
            raise CallFailure(
                429,
                "llm_call_budget_exhausted",
                f"LLM call budget exhausted: {limits.llm_calls} calls already made",
                limit="llm_calls",
            )
        if used.prompt_tokens >= limits.prompt_tokens:
            raise CallFailure(
                429,
                "prompt_token_budget_exhausted",
                f"prompt-token budget exhausted: {used.prompt_tokens} of {limits.prompt_tokens} used",
                limit="prompt_tokens",
            )
        if self.in_flight >= limits.llm_calls_in_flight:
            raise CallFailure(
                429,
                "llm_calls_in_flight",
                f"at most {limits.llm_calls_in_flight} LLM calls in flight at once",
                limit="llm_calls_in_flight",
            )
        return limits.completion_tokens - used.completion_tokens - self.reserved

    def prompt_left(self) -> int:
        return self.limits.prompt_tokens - self.used.prompt_tokens - self.reserved_prompt

    def check_prompt(self, bound: int) -> None:
        """Refuses a call whose prompt could outspend what calls in flight leave of the budget."""
        if bound > self.prompt_left():
            raise self._prompt_refusal(bound, self.prompt_left())

    def reprice(self, call: Call, bound: int) -> None:
        """Replaces a held call's prompt reservation by a better bound, or refuses the call."""
        left = self.prompt_left() + call.reserved_prompt
        if bound > left:
            raise self._prompt_refusal(bound, left)
        self.reserved_prompt += bound - call.reserved_prompt
        call.reserved_prompt = bound

    def withdraw(self, call: Call) -> None:
        """A held call refused before it was sent: it counts as no call made, and its body as one refused."""
        self.forwarded -= 1
        self.refused_bytes += call.body_bytes

    def _prompt_refusal(self, bound: int, left: int) -> CallFailure:
        limits, used = self.limits, self.used
        return CallFailure(
            429,
            "prompt_token_budget_exhausted",
            f"prompt-token budget: this call may take up to {bound} prompt tokens and {max(left, 0)} of "
            f"{limits.prompt_tokens} are left ({used.prompt_tokens} used, {self.reserved_prompt} reserved "
            "by calls in flight)",
            limit="prompt_tokens",
        )

    def completion_exhausted(self) -> CallFailure:
        return CallFailure(
            429,
            "completion_token_budget_exhausted",
            f"completion-token budget exhausted: {self.used.completion_tokens} of {self.limits.completion_tokens} "
            f"used, {self.reserved} reserved by calls in flight",
            limit="completion_tokens",
        )

    def hold(self, call: Call, tokens: int, prompt_tokens: int) -> None:
        self.forwarded += 1
        self.in_flight += 1
        self.reserved += tokens
        self.reserved_prompt += prompt_tokens
        call.reserved, call.reserved_prompt, call.in_flight = tokens, prompt_tokens, True

    def settle(self, call: Call, usage: TokenUsage) -> None:
        """Charges what the call spent and releases what it held."""
        self.used.prompt_tokens += usage.prompt_tokens
        self.used.completion_tokens += usage.completion_tokens
        self.used.total_tokens += usage.total_tokens
        self.reserved -= call.reserved
        self.reserved_prompt -= call.reserved_prompt
        self.in_flight -= call.in_flight
        call.reserved = call.reserved_prompt = 0
        call.in_flight = False


def _parsed(body: bytes | bytearray | str) -> Any:
    """The JSON of a request body, parsed with the cyclic collector paused: JSON makes no cycles, and a body of
    many small lists would otherwise run it over and over as they are made (1.4 M lists: 0.64 s against
    0.19 s)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return orjson.loads(body)
    finally:
        if paused:
            gc.enable()


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
        try:
            return self._admit(call, body)
        except CallFailure as refusal:
            if refusal.limit != "llm_body_bytes":  # one refused unread cost nothing to read
                self.budget.refused_bytes += call.body_bytes
            raise

    def _admit(self, call: Call, body: Any) -> Plan:
        body_bytes: int | None = None
        if isinstance(body, bytes | bytearray | str):
            body_bytes = len(body.encode() if isinstance(body, str) else body)
            call.request = {"body_chars": len(body)}
            allowance, refused = REFUSED_BODIES_READ * self.budget.limits.llm_body_bytes, self.budget.refused_bytes
            if refused + body_bytes > allowance:
                raise CallFailure(
                    429,
                    "refused_requests_exhausted",
                    f"this episode's refused model calls have sent {refused} bytes, and the proxy reads "
                    f"at most {allowance} bytes of requests it refuses: this one ({body_bytes} bytes) is refused "
                    "unread",
                    limit="llm_body_bytes",
                )
            call.body_bytes = body_bytes
            try:
                body = _parsed(body)
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
        refuse_steering(body)
        n = head.n or 1
        room = self.budget.completion_room() // n
        if room < 1:
            raise self.budget.completion_exhausted()
        payload, dropped = forwarded_fields(body, SET_BY_PROXY)
        if body_bytes is None:  # handed parsed: what is forwarded bounds the prompt
            body_bytes = len(orjson.dumps(payload, default=str))
        prompt_bound = held_prompt = body_bytes + TEMPLATE_TOKENS
        count_prompt = upstream.tokenize_url is not None and 0 < self.budget.prompt_left() < prompt_bound
        if count_prompt:
            # The upstream's tokenizer will tell; until it has, the call holds all that is left.
            held_prompt = self.budget.prompt_left()
        self.budget.check_prompt(held_prompt)
        plan = Plan(
            upstream=upstream,
            payload=payload,
            changes={},
            dropped=dropped,
            stream=bool(head.stream),
            agent_wants_usage=bool((head.stream_options or {}).get("include_usage")),
            injected_cap=False,
            prompt_bound=prompt_bound,
            count_prompt=count_prompt,
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
        self.budget.hold(call, reserve, held_prompt)
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
