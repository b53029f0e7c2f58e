"""The offline policy as an OpenAI-compatible model server (FastAPI).

``create_policy_app(seed)`` serves ``POST /v1/chat/completions`` (plain and
SSE streaming, with tool-call deltas) and ``GET /v1/models``. It stands in
for vLLM wherever the arena needs a model and none is available: the
episode runner's inference proxy can point at it over HTTP, or use it
in-process as ``httpx.ASGITransport(app=create_policy_app())``.

Like a real server it counts tokens (``protocol.count_tokens``), honours
``max_tokens`` (content cut, tool calls dropped, ``finish_reason: "length"``),
``stop``, ``n``, ``seed``, ``temperature``, ``tool_choice`` and
``parallel_tool_calls``, and answers a malformed request with a 400 in
OpenAI's error envelope. The model id is ``heuristic-policy``: its answers
come from a hand-written heuristic (``arena.policy.heuristic``), never from a
neural network, and every response says so in ``system_fingerprint``.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from arena.policy.chat_format import (
    MODEL_ID,
    SYSTEM_FINGERPRINT,
    AssistantMessage,
    ChatCompletion,
    ChatCompletionRequest,
    Choice,
    FunctionCall,
    ModelCard,
    ModelList,
    ToolCall,
    Usage,
    count_tokens,
    error_body,
    truncate_tokens,
)
from arena.policy.heuristic import Decision
from arena.policy.policy import HeuristicPolicy

_STARTED = int(time.time())
_PIECE = re.compile(r"\S+\s*|\s+")  # stream content a few words at a time, as a tokenizer would


@dataclass
class RenderedChoice:
    index: int
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    completion_tokens: int = 0


def create_policy_app(seed: int = 0, model_names: tuple[str, ...] = (MODEL_ID,)) -> FastAPI:
    """The FastAPI app of the heuristic policy (``model_names``: the ids it answers to)."""
    app = FastAPI(title="heuristic-policy (offline, not a neural model)", version="1")
    policy = HeuristicPolicy(seed)

    @app.get("/v1/models")
    def list_models() -> dict:
        return ModelList(data=[ModelCard(id=name, created=_STARTED) for name in model_names]).model_dump()

    @app.get("/v1/models/{model_id}")
    def get_model(model_id: str):
        if model_id not in model_names:
            return _error(404, f"The model {model_id!r} does not exist", code="model_not_found", param="model")
        return ModelCard(id=model_id, created=_STARTED).model_dump()

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok", "model": model_names[0], "seed": seed, "kind": "heuristic"}

    @app.post("/v1/chat/completions")
    async def chat_completions(http: Request):
        raw = await http.body()
        try:
            payload = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _error(400, f"We could not parse the JSON body of your request: {exc}")
        if not isinstance(payload, dict):
            return _error(400, "The request body must be a JSON object")
        try:
            request = ChatCompletionRequest.model_validate(payload)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return _error(400, f"Invalid request: {where}: {first['msg']}", param=where)
        if request.model not in model_names:
            return _error(
                404, f"The model {request.model!r} does not exist; this server serves {', '.join(model_names)}",
                code="model_not_found", param="model",
            )  # fmt: skip
        conversation = _conversation_key(request)
        choices = [_render(policy.respond(request, i), request, i, seed, conversation) for i in range(request.n)]
        usage = _usage(request, choices)
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        if request.stream:
            include_usage = bool(request.stream_options and request.stream_options.include_usage)
            stream = _sse(completion_id, request.model, choices, usage if include_usage else None)
            return StreamingResponse(stream, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        body = ChatCompletion(
            id=completion_id,
            created=int(time.time()),
            model=request.model,
            choices=[
                Choice(
                    index=c.index,
                    message=AssistantMessage(
                        content=c.content, reasoning_content=c.content or None, tool_calls=c.tool_calls or None
                    ),
                    finish_reason=c.finish_reason,
                )
                for c in choices
            ],
            usage=usage,
        )
        return JSONResponse(body.model_dump())

    return app


def _error(status: int, message: str, *, code: str | None = None, param: str | None = None) -> JSONResponse:
    kind = "invalid_request_error"
    return JSONResponse(error_body(message, kind=kind, param=param, code=code), status_code=status)


def _conversation_key(request: ChatCompletionRequest) -> str:
    dumped = json.dumps([m.model_dump(exclude_none=True) for m in request.messages], sort_keys=True, default=str)
    return hashlib.sha256(dumped.encode()).hexdigest()


def _render(decision: Decision, request: ChatCompletionRequest, index: int, seed: int, key: str) -> RenderedChoice:
    content = decision.content
    calls = [
        ToolCall(
            id="call_" + hashlib.sha256(f"{seed}|{key}|{index}|{j}".encode()).hexdigest()[:24],
            function=FunctionCall(name=c.name, arguments=json.dumps(c.arguments, ensure_ascii=False)),
        )
        for j, c in enumerate(decision.tool_calls)
    ]
    finish = "tool_calls" if calls else "stop"
    for stop in request.stops:
        if stop in content:
            content, calls, finish = content[: content.index(stop)], [], "stop"
    call_tokens = sum(count_tokens(c.function.name) + count_tokens(c.function.arguments) for c in calls)
    limit = request.completion_limit
    if limit is not None and count_tokens(content) + call_tokens > limit:
        # Generation stops mid-way: the text is cut and the tool calls never get emitted.
        content, calls, finish = truncate_tokens(content, limit), [], "length"
        return RenderedChoice(index, content, calls, finish, limit)
    return RenderedChoice(index, content, calls, finish, count_tokens(content) + call_tokens)


def _usage(request: ChatCompletionRequest, choices: list[RenderedChoice]) -> Usage:
    prompt = 0
    for message in request.messages:
        prompt += 3 + count_tokens(message.text())  # 3: the role and message separators
        for call in message.tool_calls or []:
            prompt += count_tokens(call.function.name) + count_tokens(call.function.arguments)
    if request.tools:
        prompt += count_tokens(json.dumps([t.model_dump(exclude_none=True) for t in request.tools]))
    completion = sum(c.completion_tokens for c in choices)
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


def _sse(completion_id: str, model: str, choices: list[RenderedChoice], usage: Usage | None) -> Iterator[str]:
    created = int(time.time())

    def chunk(choice: int | None, delta: dict | None = None, finish: str | None = None, **extra) -> str:
        body = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": []
            if choice is None
            else [{"index": choice, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    for c in choices:
        yield chunk(c.index, {"role": "assistant", "content": ""})
        for piece in _PIECE.findall(c.content):
            yield chunk(c.index, {"reasoning_content": piece})
        for piece in _PIECE.findall(c.content):
            yield chunk(c.index, {"content": piece})
        for j, call in enumerate(c.tool_calls):
            opening: dict[str, Any] = {
                "index": j,
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name},
            }
            opening["function"]["arguments"] = ""
            yield chunk(c.index, {"tool_calls": [opening]})
            arguments = call.function.arguments
            for start in range(0, len(arguments), 24):
                piece = {"index": j, "function": {"arguments": arguments[start : start + 24]}}
                yield chunk(c.index, {"tool_calls": [piece]})
        yield chunk(c.index, {}, c.finish_reason)
    if usage is not None:
        yield chunk(None, usage=usage.model_dump())
    yield "data: [DONE]\n\n"
