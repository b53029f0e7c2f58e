"""The recording inference proxy against a real OpenAI-compatible test upstream:
in-process (httpx.ASGITransport), over loopback HTTP (uvicorn), and driven by the
real openai client through the episode server's Unix socket, as an agent in the
sandbox drives it."""

from __future__ import annotations

import asyncio
import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import openai
import orjson
import pytest
import uvicorn
from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

import arena.sdk as sdk
from arena.runner.budgets import TEMPLATE_TOKENS
from arena.runner.limits import LimitLog
from arena.runner.proxy import DROPPED_HEADER, InferenceProxy, SamplingPin
from arena.runner.record import EpisodeLimits, LLMCallRecord
from arena.runner.server import EpisodeSession, build_episode_handler
from arena.runner.upstreams import Upstream, UpstreamRegistry, _environment_proxy
from arena.runner.wire import EpisodeWireServer, Reply, StreamReply
from arena.shop.tools import ShopEnvironment

# --- the test upstream: canned answers, shaped like vLLM's ---------------------------------------

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
TOOL_CALLS = [
    {"id": "call_1", "type": "function", "function": {"name": "find_product", "arguments": '{"q": "red widget"}'}},
    {
        "id": "call_2",
        "type": "function",
        "function": {"name": "view_product_information", "arguments": '{"ids": ["1001"]}'},
    },
]
SERVED = ["tool-model", "reasoning-model", "no-usage", "slow", "broken", "garbage", "stream-error", "context-window"]
SERVED += ["pause", "forbidden-model"]
ALLOWED = [m for m in SERVED if m != "forbidden-model"] + ["unserved-model"]
SLOW_S = 2.0
CONTEXT, PROMPT_LEN = 1000, 100  # the context-window model's window and every prompt's length


def _completion(body: dict) -> dict:
    model = body["model"]
    if body.get("tools"):
        message = {"role": "assistant", "content": None, "tool_calls": TOOL_CALLS, "reasoning_content": "Search first."}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": f"hello from {model}"}
        message["reasoning" if model == "reasoning-model" else "reasoning_content"] = "Thinking it over."
        finish = "stop"
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "received": body,  # the echo: what the upstream was sent, as the agent can see it
    }
    if model != "no-usage":
        answer["usage"] = USAGE
    return answer


def _chunk(model: str, delta: dict | None, finish: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return "data: " + json.dumps({"id": "chatcmpl-s", "object": "chat.completion.chunk", "model": model,
                                  "choices": choices, **extra}) + "\n\n"  # fmt: skip


STREAM_DELTAS = [
    {"role": "assistant", "reasoning_content": "Let me "},
    {"reasoning_content": "search."},
    {"content": "Looking"},
    {"content": " now."},
    {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "find_product", "arguments": ""}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": '{"q": '}}]},
    {"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                     "function": {"name": "view_product_information", "arguments": '{"ids": '}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": '"red widget"}'}}]},
    {"tool_calls": [{"index": 1, "function": {"arguments": '["1001"]}'}}]},
]  # fmt: skip


async def _stream(body: dict):
    model = body["model"]
    for delta in STREAM_DELTAS:
        yield _chunk(model, delta)
        await anyio.sleep(0)
        if model == "slow":
            await anyio.sleep(SLOW_S)
        if model == "stream-error":
            yield 'data: {"error": {"message": "engine died", "type": "InternalServerError", "code": 500}}\n\n'
            return
    yield _chunk(model, {}, "tool_calls")
    if model != "no-usage" and (body.get("stream_options") or {}).get("include_usage"):
        yield _chunk(model, None, usage=USAGE)
    yield "data: [DONE]\n\n"


def upstream_app(received: list[dict]) -> FastAPI:
    app = FastAPI()

    @app.post("/tokenize")
    async def tokenize(request: Request) -> Response:
        body = await request.json()
        TOKENIZED.append(body)
        if str(body["messages"][-1].get("content")).startswith("tokenizer-down"):
            return JSONResponse({"error": "down"}, 500)
        return JSONResponse({"count": USAGE["prompt_tokens"], "max_model_len": CONTEXT, "tokens": [1] * 11})

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        received.append(body)
        model = body["model"]
        if model == "broken":
            return JSONResponse({"error": {"message": "engine crashed", "type": "InternalServerError"}}, 500)
        if model == "garbage":
            return Response("this is not json", media_type="application/json")
        if model == "context-window" and (body.get("max_tokens") or 0) > CONTEXT - PROMPT_LEN:
            message = (
                f"'max_tokens' or 'max_completion_tokens' is too large: {body['max_tokens']}. This model's maximum "
                f"context length is {CONTEXT} tokens and your request has {PROMPT_LEN} input tokens "
                f"({body['max_tokens']} > {CONTEXT} - {PROMPT_LEN})."
            )
            return JSONResponse({"error": {"message": message, "type": "BadRequestError", "code": 400}}, 400)
        if body.get("stream"):
            return StreamingResponse(_stream(body), media_type="text/event-stream")
        if model in ("slow", "pause"):
            await anyio.sleep(SLOW_S if model == "slow" else 0.2)
        return JSONResponse(_completion(body))

    return app


RECEIVED: list[dict] = []
TOKENIZED: list[dict] = []
UPSTREAM = upstream_app(RECEIVED)

# --- helpers -------------------------------------------------------------------------------------

MESSAGES = [{"role": "system", "content": "You shop."}, {"role": "user", "content": "a red widget under 20"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "find_product",
            "description": "Search the catalog.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        },
    }
]


class Rig:
    def __init__(self, registry: UpstreamRegistry, allowlist: list[str], limits: EpisodeLimits, **kwargs: Any) -> None:
        self.records: list[LLMCallRecord] = []
        self.proxy = InferenceProxy(registry, allowlist, limits, self.records.append, lambda: 1.5, **kwargs)


@pytest.fixture
async def rig():
    """A factory of proxies over the in-process test upstream; closes their clients."""
    registries: list[UpstreamRegistry] = []

    def make(
        limits: EpisodeLimits | None = None,
        pin: SamplingPin | None = None,
        context_length: int | None = None,
        extra: list[Upstream] = (),
        limit_log: LimitLog | None = None,
        tokenize_url: str | None = None,
    ) -> Rig:
        upstream = Upstream(name="test-upstream", base_url="http://upstream/v1", models=SERVED, api_key="k-1",
                            context_length=context_length, tokenize_url=tokenize_url)  # fmt: skip
        registry = UpstreamRegistry([upstream, *extra], {"test-upstream": httpx.ASGITransport(app=UPSTREAM)})
        registries.append(registry)
        allowlist = ALLOWED + [m for u in extra for m in u.models]
        return Rig(registry, allowlist, limits or EpisodeLimits(), pin=pin, limit_log=limit_log)

    RECEIVED.clear()
    TOKENIZED.clear()
    yield make
    for registry in registries:
        await registry.aclose()


def chat(model: str = "tool-model", **extra: Any) -> dict:
    return {"model": model, "messages": MESSAGES, **extra}


def error_of(response: Reply) -> dict:
    body = json.loads(response.body)
    assert set(body["error"]) >= {"message", "type", "code"}, body
    return body["error"]


async def events_of(response: Reply | StreamReply) -> list[str]:
    assert isinstance(response, StreamReply)
    assert response.media_type == "text/event-stream" and response.headers["cache-control"] == "no-cache"
    text = "".join([part.decode() async for part in response.chunks])
    events = [event for event in text.split("\n\n") if event]
    assert all(event.startswith("data: ") for event in events), events
    return [event[len("data: ") :] for event in events]


def estimate(chars: int) -> int:
    return math.ceil(chars / 4)


# --- forwarding and recording ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_non_streaming_call_is_forwarded_and_recorded(rig) -> None:
    r = rig()
    sampling = {"temperature": 0.7, "top_p": 0.9, "seed": 3, "stop": ["\n\n"], "n": 1, "max_tokens": 50}
    body = chat(tools=TOOLS, tool_choice="auto", response_format={"type": "text"}, **sampling,
                user="miner-42", metadata={"k": "v"}, chat_template="{{ evil }}")  # fmt: skip
    response = await r.proxy.chat_completions(body)

    assert response.status_code == 200
    answer = json.loads(response.body)
    assert answer["choices"][0]["message"]["tool_calls"] == TOOL_CALLS
    assert response.headers[DROPPED_HEADER] == "chat_template,metadata,user"
    sent = RECEIVED[-1]
    assert sent == answer["received"]
    assert {key: sent[key] for key in sampling} == sampling
    assert sent["tools"] == TOOLS and sent["tool_choice"] == "auto" and sent["response_format"] == {"type": "text"}
    assert not {"user", "metadata", "chat_template"} & set(sent)

    [record] = r.records
    assert (record.index, record.model, record.upstream, record.stream) == (0, "tool-model", "test-upstream", False)
    assert record.request["messages"] == MESSAGES and record.request["tools"] == TOOLS
    assert record.request["tool_choice"] == "auto" and record.request["temperature"] == 0.7
    assert record.request["proxy"] == {"dropped_keys": ["chat_template", "metadata", "user"], "changed": {}}
    assert record.response == {
        "id": "chatcmpl-1",
        "content": None,
        "reasoning_content": "Search first.",
        "tool_calls": TOOL_CALLS,
        "finish_reason": "tool_calls",
    }
    assert record.usage.model_dump() == USAGE
    assert (record.status_code, record.error, record.at_s) == (200, None, 1.5)
    # The upstream's share of the call, measured apart from the proxy's own work around it.
    assert 0 < record.upstream_ms < record.latency_ms
    assert r.proxy.tokens_used.model_dump() == USAGE and r.proxy.calls_forwarded == 1


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
async def test_the_field_allowlist_applies_at_every_depth(rig, stream: bool) -> None:
    # vLLM renders the prompt with a chat_template found inside chat_template_kwargs: the
    # top-level allowlist let it through. Every nested object keeps only its allowed keys.
    r = rig()
    messages = [{**MESSAGES[0], "chat_template": "{{ evil }}"}, *MESSAGES[1:]]
    tools = [{**TOOLS[0], "function": {**TOOLS[0]["function"], "cache_control": {"type": "x"}}}]
    body = chat(messages=messages, tools=tools, stream=stream, stream_options={"include_usage": True, "x\ny": 1},
                chat_template_kwargs={"enable_thinking": False, "chat_template": "{{ evil }}",
                                      "thinking": {"chat_template": "{{ evil }}"}})  # fmt: skip
    response = await r.proxy.chat_completions(body)
    if stream:
        await events_of(response)
    dropped = [
        "chat_template_kwargs.chat_template",
        "chat_template_kwargs.thinking",
        "messages[0].chat_template",
        "tools[0].function.cache_control",
        'stream_options."x\\ny"',
    ]
    sent = RECEIVED[-1]
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}
    assert sent["messages"] == MESSAGES and sent["tools"] == TOOLS
    assert sent.get("stream_options", {}) == ({"include_usage": True} if stream else {})
    assert "evil" not in json.dumps(sent)
    assert response.headers[DROPPED_HEADER] == ",".join(dropped if stream else dropped[:4])
    [record] = r.records
    assert record.request["proxy"]["dropped_keys"] == (dropped if stream else dropped[:4])


@pytest.mark.anyio
async def test_reasoning_is_kept_under_either_vllm_field(rig) -> None:
    r = rig()
    await r.proxy.chat_completions(chat("reasoning-model"))
    await r.proxy.chat_completions(chat("no-usage"))
    assert [rec.response["reasoning_content"] for rec in r.records] == ["Thinking it over."] * 2
    assert r.records[0].response["content"] == "hello from reasoning-model"


@pytest.mark.anyio
@pytest.mark.parametrize("agent_wants_usage", [False, True])
async def test_stream_is_passed_through_and_assembled(rig, agent_wants_usage: bool) -> None:
    r = rig()
    extra = {"stream_options": {"include_usage": True}} if agent_wants_usage else {}
    response = await r.proxy.chat_completions(chat(stream=True, tools=TOOLS, **extra))
    events = await events_of(response)

    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert [c["choices"][0]["delta"] for c in chunks[: len(STREAM_DELTAS)]] == STREAM_DELTAS
    usage_chunks = [c for c in chunks if c["choices"] == []]
    # The proxy always asks for usage; the agent only sees the usage chunk when it asked too.
    assert RECEIVED[-1]["stream_options"] == {"include_usage": True}
    assert [c["usage"] for c in usage_chunks] == ([USAGE] if agent_wants_usage else [])

    [record] = r.records
    assert record.stream and record.status_code == 200 and record.error is None
    assert record.response == {
        "id": "chatcmpl-s",
        "content": "Looking now.",
        "reasoning_content": "Let me search.",
        "tool_calls": TOOL_CALLS,
        "finish_reason": "tool_calls",
    }
    assert record.usage.model_dump() == USAGE
    assert "stream_options" not in record.request and record.request["tools"] == TOOLS


@pytest.mark.anyio
async def test_stream_closed_before_its_first_chunk_is_recorded(rig) -> None:
    """The agent hung up while the upstream was being opened: the server closes the relay unread."""
    r = rig()
    reply = await r.proxy.chat_completions(chat(stream=True))
    await reply.chunks.aclose()
    [record] = r.records
    assert (record.status_code, record.stream) == (499, True) and "before its first byte" in record.error
    assert r.proxy.calls_forwarded == 1 and r.proxy.tokens_used.completion_tokens == 0


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
async def test_missing_usage_is_estimated_and_marked(rig, stream: bool) -> None:
    r = rig()
    response = await r.proxy.chat_completions(chat("no-usage", stream=stream, max_tokens=500))
    if stream:
        await events_of(response)
    [record] = r.records
    assert record.response["usage_estimated"] is True
    prompt = estimate(len(json.dumps(MESSAGES, ensure_ascii=False)))
    if stream:
        generated = "Let me search." + "Looking now." + "find_product" + '{"q": "red widget"}'
        generated += "view_product_information" + '{"ids": ["1001"]}'
    else:
        generated = "hello from no-usage" + "Thinking it over."
    assert (record.usage.prompt_tokens, record.usage.completion_tokens) == (prompt, estimate(len(generated)))
    assert record.usage.total_tokens == prompt + estimate(len(generated))
    assert r.proxy.tokens_used.completion_tokens == estimate(len(generated))


@pytest.mark.anyio
async def test_sampling_pin_replaces_the_agents_values(rig) -> None:
    r = rig(pin=SamplingPin(temperature=0.0, seed=7))
    response = await r.proxy.chat_completions(chat(temperature=0.9, max_tokens=10))
    assert json.loads(response.body)["received"]["temperature"] == 0.0
    assert (RECEIVED[-1]["temperature"], RECEIVED[-1]["seed"]) == (0.0, 7)
    changed = r.records[0].request["proxy"]["changed"]
    assert changed == {"temperature": {"agent": 0.9, "sent": 0.0}, "seed": {"agent": None, "sent": 7}}
    await r.proxy.chat_completions(chat(stream=True, temperature=1.3, seed=99, max_tokens=10))
    assert (RECEIVED[-1]["temperature"], RECEIVED[-1]["seed"]) == (0.0, 7)


@pytest.mark.anyio
async def test_models_lists_allowed_models_an_upstream_serves(rig) -> None:
    listing = await rig().proxy.models()
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == [m for m in ALLOWED if m in SERVED]
    assert {m["owned_by"] for m in listing["data"]} == {"test-upstream"}


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_model_outside_the_allowlist_is_403_and_not_forwarded(rig) -> None:
    r = rig()
    response = await r.proxy.chat_completions(chat("forbidden-model"))
    assert response.status_code == 403 and response.headers["x-should-retry"] == "false"
    error = error_of(response)
    assert error["code"] == "model_not_allowed" and "'forbidden-model'" in error["message"]
    response = await r.proxy.chat_completions(chat("unserved-model"))
    assert response.status_code == 404 and error_of(response)["code"] == "model_not_found"
    assert RECEIVED == []
    assert [(rec.status_code, rec.model, rec.upstream) for rec in r.records] == [
        (403, "forbidden-model", None),
        (404, "unserved-model", None),
    ]
    assert "not allowed" in r.records[0].error
    assert [rec.upstream_ms for rec in r.records] == [None, None]  # never sent
    # Refusals are recorded in outline, so a refusal loop cannot copy the prompt into the record each time.
    assert r.records[0].request == {"keys": ["messages", "model"], "message_count": 2}
    assert r.proxy.calls_forwarded == 0


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b'{"model": "tool-model", "messages": [', "not valid JSON: unexpected end of data: line 1 column"),
        ([1, 2], "must be a JSON object, not list"),
        ({"messages": MESSAGES}, "model: Field required"),
        ({"model": "tool-model", "messages": "hello"}, "messages: Input should be a valid list"),
        ({"model": "tool-model", "messages": ["hello"]}, "messages.0: Input should be a valid dictionary"),
        (chat(max_tokens="10"), "max_tokens: Input should be a valid integer"),
        (chat(max_tokens=0), "max_tokens: Input should be greater than or equal to 1"),
        (chat(stream="yes"), "stream: Input should be a valid boolean"),
        (chat(n=0), "n: Input should be greater than or equal to 1"),
    ],
)
async def test_malformed_request_is_400_naming_the_reason(rig, body: Any, needle: str) -> None:
    r = rig()
    response = await r.proxy.chat_completions(body)
    assert response.status_code == 400
    error = error_of(response)
    assert error["type"] == "invalid_request_error" and needle in error["message"], error
    [record] = r.records
    assert record.status_code == 400 and needle in record.error and record.response is None
    assert RECEIVED == []


@pytest.mark.anyio
async def test_call_budget_refuses_with_429_after_n_calls(rig) -> None:
    r = rig(EpisodeLimits(llm_calls=2))
    statuses = [(await r.proxy.chat_completions(chat(max_tokens=5))).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert r.records[-1].status_code == 429 and "2 calls" in r.records[-1].error
    response = await r.proxy.chat_completions(chat(stream=True))
    assert response.status_code == 429 and error_of(response)["code"] == "llm_call_budget_exhausted"
    assert response.headers["x-should-retry"] == "false"
    assert len(RECEIVED) == 2 and len(r.records) == 4


@pytest.mark.anyio
async def test_prompt_token_budget_reserves_a_bound_and_settles_on_usage(rig) -> None:
    """Each call holds an upper bound of its prompt (its bytes and the template's tokens) while
    it is admitted, and is charged what the upstream reports (11) once answered."""
    bound = len(orjson.dumps({"messages": MESSAGES})) + TEMPLATE_TOKENS
    r = rig(EpisodeLimits(prompt_tokens=bound + 22))
    for _ in range(3):  # 0, 11, 22 used: the bound still fits
        assert (await r.proxy.chat_completions(chat())).status_code == 200
    response = await r.proxy.chat_completions(chat())
    assert response.status_code == 429 and error_of(response)["code"] == "prompt_token_budget_exhausted"
    assert (
        f"up to {bound} prompt tokens and {bound - 11} of {bound + 22} are left (33 used"
        in error_of(response)["message"]
    )
    assert len(RECEIVED) == 3 and r.proxy.tokens_used.prompt_tokens == 33


@pytest.mark.anyio
async def test_a_prompt_whose_bytes_do_not_fit_is_counted_by_the_upstreams_tokenizer(rig) -> None:
    bound = len(orjson.dumps({"messages": MESSAGES})) + TEMPLATE_TOKENS
    r = rig(EpisodeLimits(prompt_tokens=bound - 1), tokenize_url="http://upstream/tokenize")
    assert (await r.proxy.chat_completions(chat())).status_code == 200  # counted 11 (+16): it fits
    assert TOKENIZED == [{"model": "tool-model", "messages": MESSAGES, "add_generation_prompt": True}]
    assert r.proxy.tokens_used.prompt_tokens == 11 and len(RECEIVED) == 1
    down = [{"role": "user", "content": "tokenizer-down" + " x" * bound}]
    response = await r.proxy.chat_completions({"model": "tool-model", "messages": down})
    assert response.status_code == 429 and error_of(response)["code"] == "prompt_token_budget_exhausted"
    assert len(RECEIVED) == 1 and r.proxy.calls_forwarded == 1  # the byte bound stood: not sent, not counted
    r = rig(EpisodeLimits(), tokenize_url="http://upstream/tokenize")
    assert (await r.proxy.chat_completions(chat())).status_code == 200
    assert len(TOKENIZED) == 2  # a bound that fits is not worth a round trip


@pytest.mark.anyio
async def test_concurrent_prompts_cannot_outspend_the_budget(rig) -> None:
    """Calls in flight hold their prompt bound: however many arrive at once, the prompts
    forwarded fit the budget, and what settles frees room for later calls."""
    bound = len(orjson.dumps({"messages": MESSAGES, "max_tokens": 5})) + TEMPLATE_TOKENS
    r = rig(EpisodeLimits(prompt_tokens=2 * bound + 5, llm_calls_in_flight=64))
    statuses: list[int] = []

    async def send() -> None:
        statuses.append((await r.proxy.chat_completions(chat("pause", max_tokens=5))).status_code)

    async with anyio.create_task_group() as group:
        for _ in range(10):
            group.start_soon(send)
    assert sorted(statuses) == [200] * 2 + [429] * 8 and len(RECEIVED) == 2
    assert (await r.proxy.chat_completions(chat())).status_code == 200  # 22 used: one bound fits again


@pytest.mark.anyio
async def test_calls_in_flight_are_bounded_per_episode(rig) -> None:
    log = LimitLog(lambda: 1.5)
    r = rig(EpisodeLimits(llm_calls_in_flight=2), limit_log=log)
    statuses: list[int] = []

    async def send() -> None:
        statuses.append((await r.proxy.chat_completions(chat("pause", max_tokens=5))).status_code)

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(send)
    assert sorted(statuses) == [200, 200, 429, 429, 429] and len(RECEIVED) == 2
    refused = [record for record in r.records if record.status_code == 429]
    assert all("at most 2 LLM calls in flight" in record.error for record in refused)
    assert [(hit.limit, hit.count) for hit in log.hits()] == [("llm_calls_in_flight", 3)]
    assert (await r.proxy.chat_completions(chat())).status_code == 200  # the first two have settled


@pytest.mark.anyio
async def test_completion_budget_caps_max_tokens_then_refuses(rig) -> None:
    r = rig(EpisodeLimits(completion_tokens=30))  # every answer spends 7 completion tokens

    async def send(**extra: Any) -> int:
        return (await r.proxy.chat_completions(chat(**extra))).status_code

    assert await send(max_tokens=100) == 200
    assert RECEIVED[-1]["max_tokens"] == 30
    assert r.records[-1].request["max_tokens"] == 30
    assert r.records[-1].request["proxy"]["changed"] == {"max_tokens": {"agent": 100, "sent": 30}}
    assert await send() == 200  # no limit asked: the proxy sets the 23 left
    assert RECEIVED[-1]["max_tokens"] == 23
    assert await send(max_completion_tokens=4) == 200  # within budget: untouched, nothing injected
    assert RECEIVED[-1]["max_completion_tokens"] == 4 and "max_tokens" not in RECEIVED[-1]
    assert await send(max_tokens=50) == 200  # 9 left
    assert RECEIVED[-1]["max_tokens"] == 9
    assert await send(n=3) == 400  # one choice per request (steering.py), refused before the budget is asked
    assert await send() == 200 and RECEIVED[-1]["max_tokens"] == 2
    response = await r.proxy.chat_completions(chat())  # 35 of 30 spent
    assert response.status_code == 429 and error_of(response)["code"] == "completion_token_budget_exhausted"
    assert "35 of 30 used" in error_of(response)["message"]
    assert len(RECEIVED) == 5 and r.proxy.calls_forwarded == 5


@pytest.mark.anyio
async def test_calls_in_flight_hold_their_completion_tokens(rig) -> None:
    """Parallel calls cannot outspend the budget: each holds its cap until it is answered."""
    r = rig(EpisodeLimits(completion_tokens=100))
    statuses: dict[str, int] = {}

    async def send(name: str, **extra: Any) -> None:
        statuses[name] = (await r.proxy.chat_completions(chat("pause", **extra))).status_code

    async with anyio.create_task_group() as group:
        group.start_soon(send, "first")  # no max_tokens: holds all 100 while in flight
        await anyio.sleep(0.05)
        group.start_soon(send, "second")
    assert statuses == {"first": 200, "second": 429}
    assert "0 of 100 used, 100 reserved by calls in flight" in r.records[0].error
    await send("third")  # the first spent 7 and released the rest
    assert statuses["third"] == 200 and RECEIVED[-1]["max_tokens"] == 93


@pytest.mark.anyio
async def test_known_context_window_leaves_max_tokens_to_the_server(rig) -> None:
    r = rig(EpisodeLimits(completion_tokens=64_000), context_length=40_960)
    await r.proxy.chat_completions(chat())
    assert "max_tokens" not in RECEIVED[-1]
    r = rig(EpisodeLimits(completion_tokens=500), context_length=40_960)
    await r.proxy.chat_completions(chat())
    assert RECEIVED[-1]["max_tokens"] == 500


@pytest.mark.anyio
async def test_injected_cap_over_the_context_window_is_retried_to_fit(rig) -> None:
    r = rig(EpisodeLimits(completion_tokens=5000))
    response = await r.proxy.chat_completions(chat("context-window"))
    assert response.status_code == 200
    assert [body["max_tokens"] for body in RECEIVED] == [5000, CONTEXT - PROMPT_LEN]
    [record] = r.records
    assert record.request["max_tokens"] == 900
    assert record.request["proxy"]["changed"] == {"max_tokens": {"agent": None, "sent": 900}}
    # The agent's own max_tokens is its own business: vLLM's verdict goes back to it as is.
    response = await r.proxy.chat_completions(chat("context-window", max_tokens=4000))
    assert response.status_code == 400
    assert error_of(response)["code"] == "upstream_rejected_request"
    assert "maximum context length is 1000" in error_of(response)["message"]
    assert r.records[-1].status_code == 400 and len(RECEIVED) == 3
    # The window learned from the first rejection: no more doomed first attempts this episode.
    assert (await r.proxy.chat_completions(chat("context-window"))).status_code == 200
    assert len(RECEIVED) == 4 and "max_tokens" not in RECEIVED[-1]


# --- upstream failures ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_upstream_failures_are_502_with_the_reason(rig) -> None:
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()  # nothing listens there now: connection refused
    r = rig(extra=[Upstream(name="dead", base_url=f"http://127.0.0.1:{port}/v1", models=["dead-model"])])

    cases = {"broken": "answered HTTP 500: engine crashed", "garbage": "invalid JSON", "dead-model": "failed: Connect"}
    for model, reason in cases.items():
        response = await r.proxy.chat_completions(chat(model))
        assert response.status_code == 502, model
        assert reason in error_of(response)["message"], error_of(response)
        assert "x-should-retry" not in response.headers  # transient: the client may retry
    response = await r.proxy.chat_completions(chat("broken", stream=True))
    assert response.status_code == 502 and "engine crashed" in error_of(response)["message"]

    events = await events_of(await r.proxy.chat_completions(chat("stream-error", stream=True)))
    assert events[-1] == "[DONE]"
    assert "engine died" in json.loads(events[-2])["error"]["message"]
    assert [rec.status_code for rec in r.records] == [502] * 5
    assert r.records[-1].response["reasoning_content"] == "Let me "  # what arrived before the failure is kept


@pytest.mark.anyio
async def test_slow_upstream_times_out_with_504(rig) -> None:
    r = rig(EpisodeLimits(llm_call_timeout_s=0.3))
    started = time.perf_counter()
    response = await r.proxy.chat_completions(chat("slow"))
    assert response.status_code == 504 and error_of(response)["code"] == "upstream_timeout"
    assert time.perf_counter() - started < SLOW_S
    assert r.records[-1].status_code == 504 and "0.3s" in r.records[-1].error


@pytest.mark.anyio
async def test_on_call_failure_never_reaches_the_agent(rig) -> None:
    def broken_sink(record: LLMCallRecord) -> None:
        raise RuntimeError("store is down")

    r = rig()
    r.proxy._on_call = broken_sink
    assert (await r.proxy.chat_completions(chat())).status_code == 200


def test_environment_proxy_is_used_as_an_httpx_client_would(monkeypatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ALL_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://corp:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert _environment_proxy(httpx.URL("http://vllm.internal:8000/v1/chat/completions")) == "http://corp:3128"
    assert _environment_proxy(httpx.URL("http://127.0.0.1:8000/v1/chat/completions")) is None
    assert _environment_proxy(httpx.URL("https://api.example/v1/chat/completions")) is None  # no HTTPS_PROXY


# --- real servers: uvicorn on loopback, the openai client over a Unix socket -----------------------


class ServerThread:
    """A uvicorn server in a thread of its own (its own event loop), as in production."""

    def __init__(self, app: Any, *, uds: Path | None = None) -> None:
        self.sock = None
        if uds is None:
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", 0))
            self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(app, uds=str(uds) if uds else None, log_level="warning", timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        sockets = [self.sock] if self.sock else None
        self.thread = threading.Thread(target=lambda: asyncio.run(self.server.serve(sockets=sockets)), daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def loopback_upstream() -> Iterator[Upstream]:
    with ServerThread(upstream_app(RECEIVED)) as server:
        yield Upstream(name="loopback", base_url=f"http://127.0.0.1:{server.port}/v1", models=SERVED)


@pytest.mark.anyio
async def test_real_http_upstream_streams_and_answers(loopback_upstream: Upstream) -> None:
    registry = UpstreamRegistry([loopback_upstream])
    records: list[LLMCallRecord] = []
    proxy = InferenceProxy(registry, ALLOWED, EpisodeLimits(llm_call_timeout_s=0.5), records.append, lambda: 0.0)
    try:
        answer = json.loads((await proxy.chat_completions(chat(tools=TOOLS))).body)
        assert answer["choices"][0]["message"]["tool_calls"] == TOOL_CALLS
        events = await events_of(await proxy.chat_completions(chat(stream=True)))
        assert events[-1] == "[DONE]" and len(events) == len(STREAM_DELTAS) + 2
        # A stream that stalls past the deadline: what came is passed on, then an error event.
        events = await events_of(await proxy.chat_completions(chat("slow", stream=True)))
        assert json.loads(events[0])["choices"][0]["delta"] == STREAM_DELTAS[0]
        assert json.loads(events[-2])["error"]["code"] == "upstream_timeout" and events[-1] == "[DONE]"
    finally:
        await registry.aclose()
    assert [(rec.upstream, rec.status_code) for rec in records] == [("loopback", 200)] * 2 + [("loopback", 504)]
    assert records[1].response["tool_calls"] == TOOL_CALLS and records[1].usage.model_dump() == USAGE
    assert records[2].response["reasoning_content"] == "Let me " and records[2].usage.completion_tokens > 0


class ProxyServer:
    """The proxy behind the real episode server on a Unix socket, in a thread with its
    own event loop, as the runner serves it to a sandboxed agent."""

    def __init__(self, upstream: Upstream, socket_path: Path, catalog) -> None:
        self.registry = UpstreamRegistry([upstream])
        self.records: list[LLMCallRecord] = []
        self.socket_path = socket_path
        self.clients: list[openai.OpenAI] = []
        self.session = EpisodeSession(ShopEnvironment(catalog), {"id": "p-1"}, "tool-model", None, lambda: 0.0)
        self.reset(EpisodeLimits())
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> ProxyServer:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.socket_path))
        listener.listen(16)
        self.server = EpisodeWireServer(build_episode_handler(self.session))
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(listener), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_clients()

        async def stop() -> None:
            await self.server.close()
            await self.registry.aclose()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)

    def reset(self, limits: EpisodeLimits, pin: SamplingPin | None = None) -> None:
        self.close_clients()
        self.records.clear()
        self.session.proxy = InferenceProxy(self.registry, ALLOWED, limits, self.records.append, lambda: 0.0, pin=pin)

    def client(self, **kwargs: Any) -> openai.OpenAI:
        transport = httpx.HTTPTransport(uds=str(self.socket_path))
        client = openai.OpenAI(
            base_url="http://proxy/v1", api_key="x", http_client=httpx.Client(transport=transport), **kwargs
        )
        self.clients.append(client)
        return client

    def close_clients(self) -> None:
        while self.clients:
            self.clients.pop().close()


@pytest.fixture(scope="module")
def proxy_server(loopback_upstream: Upstream, tmp_path_factory, catalog) -> Iterator[ProxyServer]:
    with ProxyServer(loopback_upstream, tmp_path_factory.mktemp("sock") / "arena.sock", catalog) as served:
        yield served


def test_openai_client_non_streaming_with_tools(proxy_server: ProxyServer) -> None:
    proxy_server.reset(EpisodeLimits(), pin=SamplingPin(temperature=0.0, seed=1))
    client = proxy_server.client(max_retries=0)
    accepted = proxy_server.server.accepted
    assert [m.id for m in client.models.list()] == [m for m in ALLOWED if m in SERVED]
    completion = client.chat.completions.create(
        model="tool-model", messages=MESSAGES, tools=TOOLS, tool_choice="auto", temperature=0.8, max_tokens=64
    )
    message = completion.choices[0].message
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("call_1", "find_product", {"q": "red widget"}),
        ("call_2", "view_product_information", {"ids": ["1001"]}),
    ]
    assert completion.usage.completion_tokens == 7
    assert completion.model_extra["received"]["temperature"] == 0.0  # the pin, as the upstream saw it
    assert proxy_server.server.accepted - accepted == 1  # both requests over one kept-alive connection
    [record] = proxy_server.records
    assert record.status_code == 200 and record.response["tool_calls"] == TOOL_CALLS
    assert record.request["tools"] == TOOLS and record.request["max_tokens"] == 64


def test_openai_client_streaming_with_tools(proxy_server: ProxyServer) -> None:
    proxy_server.reset(EpisodeLimits())
    client = proxy_server.client(max_retries=0)
    stream = client.chat.completions.create(
        model="tool-model", messages=MESSAGES, tools=TOOLS, stream=True, stream_options={"include_usage": True}
    )
    content, calls, usage = [], {}, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            content.append(choice.delta.content or "")
            for part in choice.delta.tool_calls or []:
                call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                call["id"] += part.id or ""
                call["name"] += (part.function.name or "") if part.function else ""
                call["arguments"] += (part.function.arguments or "") if part.function else ""
    assert "".join(content) == "Looking now." and usage.total_tokens == 18
    [record] = proxy_server.records
    assert [
        {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in record.response["tool_calls"]
    ] == [calls[0], calls[1]]
    assert record.stream and record.response["content"] == "Looking now." and record.usage.total_tokens == 18


def test_agent_hanging_up_mid_stream_is_recorded_at_once(proxy_server: ProxyServer) -> None:
    proxy_server.reset(EpisodeLimits(llm_call_timeout_s=30))
    transport = httpx.HTTPTransport(uds=str(proxy_server.socket_path))
    with httpx.Client(transport=transport, base_url="http://proxy") as client:
        with client.stream("POST", "/v1/chat/completions", json=chat("slow", stream=True)) as response:
            first = next(response.iter_lines())
            assert json.loads(first[len("data: ") :])["choices"][0]["delta"] == STREAM_DELTAS[0]
    deadline = time.monotonic() + SLOW_S / 2  # well before the upstream's next chunk would have come
    while not proxy_server.records and time.monotonic() < deadline:
        time.sleep(0.01)
    [record] = proxy_server.records
    assert record.status_code == 499 and "closed the stream" in record.error
    assert record.response["reasoning_content"] == "Let me "


def test_openai_client_sees_refusals_and_failures_as_api_errors(proxy_server: ProxyServer) -> None:
    proxy_server.reset(EpisodeLimits(llm_calls=1, llm_call_timeout_s=0.3))
    client = proxy_server.client()  # default retries: the proxy's x-should-retry header must stop them
    with pytest.raises(openai.PermissionDeniedError, match="not allowed"):
        client.chat.completions.create(model="forbidden-model", messages=MESSAGES)
    with pytest.raises(openai.APIError, match="did not finish within"):
        for _ in client.chat.completions.create(model="slow", messages=MESSAGES, stream=True):
            pass
    with pytest.raises(openai.RateLimitError, match="LLM call budget exhausted"):
        client.chat.completions.create(model="tool-model", messages=MESSAGES)
    with pytest.raises(openai.BadRequestError, match="messages"):
        client.chat.completions.create(model="tool-model", messages="hi")  # type: ignore[arg-type]
    assert [rec.status_code for rec in proxy_server.records] == [403, 504, 429, 400]


def wait_for_records(proxy_server: ProxyServer, count: int) -> list[int]:
    deadline = time.monotonic() + 5
    while len(proxy_server.records) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return [rec.status_code for rec in proxy_server.records]


def test_sdk_openai_client_over_its_own_socket_transport(proxy_server: ProxyServer, monkeypatch) -> None:
    """``sdk.openai_client()`` as an agent gets it: the SDK's own HTTP over the socket under httpx."""
    proxy_server.reset(EpisodeLimits(llm_call_timeout_s=30))
    monkeypatch.setenv("ARENA_SOCKET", str(proxy_server.socket_path))
    client = sdk.openai_client()
    accepted = proxy_server.server.accepted
    try:
        completion = client.chat.completions.create(model="tool-model", messages=MESSAGES, tools=TOOLS)
        assert [c.function.name for c in completion.choices[0].message.tool_calls] == ["find_product",
                                                                                       "view_product_information"]  # fmt: skip
        chunks = list(
            client.chat.completions.create(
                model="tool-model", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
            )
        )
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Looking now."
        assert chunks[-1].usage.total_tokens == 18
        # A stream given up half way: its connection is dropped (never reused mid-message), the
        # proxy records the hang-up, and the next call goes out on a fresh connection.
        stream = client.chat.completions.create(model="slow", messages=MESSAGES, stream=True)
        assert next(iter(stream)).choices[0].delta.reasoning_content == "Let me "
        stream.close()
        assert wait_for_records(proxy_server, 3) == [200, 200, 499]
        assert client.chat.completions.create(model="tool-model", messages=MESSAGES).usage.total_tokens == 18
        with pytest.raises(openai.PermissionDeniedError, match="not allowed"):
            client.chat.completions.create(model="forbidden-model", messages=MESSAGES)
        assert proxy_server.server.accepted - accepted == 2
        with pytest.raises(openai.APITimeoutError):
            sdk.openai_client(timeout=0.3).chat.completions.create(model="slow", messages=MESSAGES)
        assert wait_for_records(proxy_server, 6) == [200, 200, 499, 200, 403, 200]  # the slow one, unheard
    finally:
        client.close()


@pytest.mark.anyio
async def test_refusals_past_the_bound_are_counted_not_recorded(rig) -> None:
    log = LimitLog(lambda: 1.5)
    r = rig(EpisodeLimits(llm_refusals=3), limit_log=log)
    for _ in range(10):
        response = await r.proxy.chat_completions(chat("not-allowed"))
        assert response.status_code == 403  # answered as always
    assert [record.index for record in r.records] == [0, 1, 2]
    assert (await r.proxy.chat_completions(chat())).status_code == 200
    assert [record.index for record in r.records] == [0, 1, 2, 3]  # no gap where refusals went unrecorded
    assert {hit.limit: hit.count for hit in log.hits()} == {"llm_refusals": 7}


# --- output steering (arena/runner/steering.py) -------------------------------------------------
# Requests that would make the model say what the agent wrote are refused at the proxy (issue 30, class 2).
#
# The judge credits reasoning the model chose to write. Four request fields let an agent choose it instead:
# ``n`` > 1 (the judge reads choice 0 while the usage counts every choice, so eight copies of a short answer
# read as a long one), ``logit_bias`` (token by token steering), a ``response_format`` JSON schema (guided
# decoding writes whatever its ``pattern``/``enum``/``const`` spell) and a tool call forced by
# ``tool_choice`` whose parameters carry such keywords. Each is refused with 400 before any upstream sees it,
# and the refusal is in the episode's record. What an honest agent sends still goes through.

PATTERN_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "schema": {
            "type": "object",
            "properties": {"answer": {"type": "string", "pattern": "^[Pp]roduct 1042 is cheaper than 2003$"}},
            "required": ["answer"],
        },
    },
}


def forced_tool(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "tools": [{"type": "function", "function": {"name": "say", "parameters": schema}}],
        "tool_choice": {"type": "function", "function": {"name": "say"}},
    }


DICTATING_TOOL = {"type": "object", "properties": {"text": {"type": "string", "const": "1042 beats 2003 on price"}}}
ENUM_TOOL = {"type": "object", "properties": {"text": {"type": "string", "enum": ["1042 is cheaper than 2003"]}}}
NESTED_PATTERN_TOOL = {
    "type": "object",
    "properties": {"a": {"type": "array", "items": {"anyOf": [{"type": "string", "pattern": "^1042$"}]}}},
}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"n": 8}, "one_choice_per_request"),
        ({"n": 2, "stream": True}, "one_choice_per_request"),
        ({"logit_bias": {"1042": 100}}, "output_steering_refused"),
        ({"response_format": PATTERN_SCHEMA}, "output_steering_refused"),
        (forced_tool(DICTATING_TOOL), "output_steering_refused"),
        (forced_tool(ENUM_TOOL) | {"tool_choice": "required"}, "output_steering_refused"),
        (forced_tool(NESTED_PATTERN_TOOL), "output_steering_refused"),
    ],
    ids=["n8", "n2-stream", "logit_bias", "json_schema", "forced-const", "required-enum", "forced-nested-pattern"],
)
async def test_a_request_that_steers_the_output_is_refused_and_recorded(rig, extra: dict, code: str) -> None:
    r = rig()
    response = await r.proxy.chat_completions(chat(**extra))
    assert response.status_code == 400 and error_of(response)["code"] == code
    assert RECEIVED == []  # no upstream saw it
    [record] = r.records
    assert record.status_code == 400 and record.response is None and record.error  # the refusal, in the record


@pytest.mark.anyio
@pytest.mark.parametrize(
    "extra",
    [
        {"n": 1},
        {"logit_bias": {}},
        {"response_format": {"type": "text"}},
        {"response_format": {"type": "json_object"}},
        {"tools": TOOLS, "tool_choice": "auto"},
        # the arena's own tools carry enums (sort order, terminate's status): offered, not forced, they pass
        forced_tool(ENUM_TOOL) | {"tool_choice": "auto"},
        {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "find_product"}}},
    ],
    ids=["n1", "empty-bias", "text", "json_object", "tools-auto", "enum-auto", "forced-free-text"],
)
async def test_what_an_honest_agent_sends_still_goes_through(rig, extra: dict) -> None:
    r = rig()
    response = await r.proxy.chat_completions(chat(**extra))
    assert response.status_code == 200, response.body
    assert len(RECEIVED) == 1


@pytest.mark.anyio
async def test_requests_refused_before_sending_are_read_up_to_a_bound_then_refused_unread(rig) -> None:
    """Parsing a body is the validator's cost, and a refused call may be sent again at once: the proxy reads
    at most REFUSED_BODIES_READ x llm_body_bytes of requests it refuses, per episode, whether admission refused
    them or the upstream's tokenizer did (the call withdrawn), then refuses unread (issue 30 variants)."""
    from arena.runner.budgets import REFUSED_BODIES_READ

    log = LimitLog(lambda: 2.0)
    limits = EpisodeLimits(llm_body_bytes=64 * 1024, prompt_tokens=16 * 1024)
    r = rig(limits, tokenize_url="http://upstream/tokenize", limit_log=log)
    shell = orjson.dumps({"model": "tool-model", "messages": [{"role": "user", "content": "tokenizer-down"}]})
    # Half the body bound exactly, over the prompt budget, uncountable: the allowance is spent to the byte.
    filler = "tokenizer-down" + "x" * (limits.llm_body_bytes // 2 - len(shell))
    counted = orjson.dumps({"model": "tool-model", "messages": [{"role": "user", "content": filler}]})
    assert len(counted) == limits.llm_body_bytes // 2
    codes = [error_of(await r.proxy.chat_completions(counted))["code"] for _ in range(2 * REFUSED_BODIES_READ)]
    assert codes == ["prompt_token_budget_exhausted"] * (2 * REFUSED_BODIES_READ)
    assert len(TOKENIZED) == 2 * REFUSED_BODIES_READ  # each was read, and withdrawn after the tokenizer
    unknown = orjson.dumps({"model": "not-allowed", "messages": [{"role": "user", "content": "x" * 100}]})
    for body in (counted, unknown, b"{not json"):
        refusal = await r.proxy.chat_completions(body)
        assert refusal.status_code == 429 and error_of(refusal)["code"] == "refused_requests_exhausted"
    assert len(TOKENIZED) == 2 * REFUSED_BODIES_READ and not RECEIVED  # nothing more was read or sent
    assert log.hits()[-1].limit == "llm_body_bytes" and log.hits()[-1].count == 3
