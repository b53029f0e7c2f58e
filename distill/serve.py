"""An in-process OpenAI-compatible server around a transformers checkpoint (FastAPI).

It lets a checkpoint trained on CPU be evaluated through the real episode
runner without vLLM: the proxy reaches it as an upstream over
``httpx.ASGITransport(app=create_model_app(...))``, as it reaches the offline
policy. It renders prompts with the tokenizer's own chat template (the
training template, so serving matches training; see docs/training.md), and
parses Hermes-style ``<tool_call>{json}</tool_call>`` blocks into OpenAI
``tool_calls`` and ``<think>`` blocks into ``reasoning_content``, as vLLM's
``--tool-call-parser hermes --reasoning-parser qwen3`` does.

It is a test and small-scale tool: one request at a time, no batching, no
streaming (the reference agent does not stream; a streaming request gets a 400).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.S)


def parse_completion(text: str) -> tuple[str, str | None, list[dict[str, Any]]]:
    """(content, reasoning, tool_calls) from raw generated text, Hermes/Qwen3 style.

    A ``<tool_call>`` block that is not a JSON object with a string ``name`` stays
    in the content: a malformed call is the model's mistake and must be visible,
    not silently dropped.
    """
    reasoning = None
    match = _THINK.match(text)
    if match:
        reasoning = match.group(1).strip() or None
        text = text[match.end() :]
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    last = 0
    for block in _TOOL_CALL.finditer(text):
        kept.append(text[last : block.start()])
        last = block.end()
        try:
            payload = json.loads(block.group(1))
        except ValueError:
            payload = None
        if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
            kept.append(block.group(0))
            continue
        arguments = payload.get("arguments", {})
        calls.append(
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {
                    "name": payload["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    kept.append(text[last:])
    return "".join(kept).strip(), reasoning, calls


def _template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI messages as the Qwen3 template reads them: tool-call arguments as objects."""
    shaped = []
    for message in messages:
        message = dict(message)
        if isinstance(message.get("content"), list):
            message["content"] = "\n".join(p.get("text") or "" for p in message["content"] if p.get("type") == "text")
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = dict(call.get("function") or {})
                if isinstance(function.get("arguments"), str):
                    try:
                        function["arguments"] = json.loads(function["arguments"] or "{}")
                    except ValueError:
                        pass  # the template prints a string argument as it is
                calls.append({**call, "function": function})
            message["tool_calls"] = calls
        shaped.append(message)
    return shaped


def _error(status: int, message: str, code: str = "invalid_request") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": code, "code": code}}, status_code=status)


def create_model_app(model, tokenizer, model_name: str, *, max_new_tokens: int = 256) -> FastAPI:
    """Serve ``model`` under ``model_name`` at ``/v1/chat/completions`` and ``/v1/models``."""
    import torch

    app = FastAPI(title=f"{model_name} (transformers, in-process)")
    lock = threading.Lock()  # generate() is not re-entrant on one model
    created = int(time.time())

    def generate(body: dict[str, Any]) -> dict[str, Any]:
        prompt = tokenizer.apply_chat_template(
            _template_messages(body["messages"]),
            tools=body.get("tools") or None,
            add_generation_prompt=True,
            tokenize=False,
        )
        inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        limit = min(max_new_tokens, body.get("max_completion_tokens") or body.get("max_tokens") or max_new_tokens)
        temperature = float(body.get("temperature") if body.get("temperature") is not None else 1.0)
        sampling = {"do_sample": temperature > 0}
        if temperature > 0:
            sampling |= {"temperature": temperature, "top_p": float(body.get("top_p") or 1.0)}
        with lock, torch.no_grad():
            if body.get("seed") is not None:
                torch.manual_seed(int(body["seed"]))
            output = model.generate(**inputs, max_new_tokens=limit, pad_token_id=tokenizer.pad_token_id, **sampling)
        new_tokens = output[0, inputs["input_ids"].shape[1] :]
        text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        content, reasoning, calls = parse_completion(text)
        hit_limit = len(new_tokens) >= limit and (new_tokens[-1].item() != tokenizer.eos_token_id)
        finish = "length" if hit_limit else ("tool_calls" if calls else "stop")
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = calls
        prompt_tokens, completion_tokens = int(inputs["input_ids"].shape[1]), int(len(new_tokens))
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    @app.get("/v1/models")
    def models() -> dict:
        return {
            "object": "list",
            "data": [{"id": model_name, "object": "model", "created": created, "owned_by": "local"}],
        }

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return _error(400, "'messages' must be a non-empty list")
        if body.get("model") != model_name:
            return _error(404, f"The model {body.get('model')!r} does not exist", code="model_not_found")
        if body.get("stream"):
            return _error(400, "streaming is not supported by the in-process server")
        if (body.get("n") or 1) != 1:
            return _error(400, "n must be 1")
        try:
            return await asyncio.to_thread(generate, body)
        except (ValueError, TypeError, KeyError) as exc:  # a template that cannot render these messages
            return _error(400, f"cannot render the request: {exc}")

    return app
