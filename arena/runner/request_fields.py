"""Which fields of an agent's chat request reach the upstream, at every depth.

A top-level allowlist alone let ``chat_template_kwargs.chat_template`` through: vLLM
renders the prompt with whatever template that carries, so an agent could replace the
validator's template, or read server internals with it. So the allowlist is a shape:
every object in the request, however deep, keeps only the keys its shape names, and a
key whose value must be a plain value loses an object or a list put there. What is
dropped is named by its path (``chat_template_kwargs.chat_template``,
``messages[2].cache_control``) in the call's record and the reply's header.

``AGENT_DATA`` marks the values that are the agent's own data (a tool's JSON schema, a
message's text, stop strings): the upstream reads them as data, never as settings.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

AGENT_DATA = "agent data"  # any JSON value, passed as it is
PLAIN = "plain value"  # a string, number, boolean or null; an object or list here is dropped

_FUNCTION_CALL = {"name": PLAIN, "arguments": AGENT_DATA}
_TOOL_CALL = {"id": PLAIN, "type": PLAIN, "index": PLAIN, "function": _FUNCTION_CALL}
_CONTENT_PART = {"type": PLAIN, "text": AGENT_DATA, "image_url": AGENT_DATA}
_MESSAGE = {
    "role": PLAIN,
    "content": [_CONTENT_PART],  # or a plain string
    "name": PLAIN,
    "tool_calls": [_TOOL_CALL],
    "tool_call_id": PLAIN,
    "reasoning_content": AGENT_DATA,
    "reasoning": AGENT_DATA,
    "refusal": AGENT_DATA,
}
_TOOL = {
    "type": PLAIN,
    "function": {"name": PLAIN, "description": AGENT_DATA, "parameters": AGENT_DATA, "strict": PLAIN},
}

# OpenAI chat parameters, plus the vLLM sampling extras a reasoning agent reasonably tunes
# (chat_template_kwargs carries Qwen3's enable_thinking). Anything else is dropped, because
# it either leaks identity or state upstream (user, metadata, store, service_tier) or reaches
# server internals an agent has no business in (vLLM's chat_template, priority, lora/kv params).
REQUEST_SHAPE: dict[str, Any] = {
    "messages": [_MESSAGE],
    "tools": [_TOOL],
    "tool_choice": {"type": PLAIN, "function": {"name": PLAIN}},  # or "auto" / "none" / "required"
    "parallel_tool_calls": PLAIN,
    "response_format": {
        "type": PLAIN,
        "json_schema": {"name": PLAIN, "description": AGENT_DATA, "schema": AGENT_DATA, "strict": PLAIN},
    },
    "max_tokens": PLAIN,
    "max_completion_tokens": PLAIN,
    "temperature": PLAIN,
    "top_p": PLAIN,
    "seed": PLAIN,
    "stop": AGENT_DATA,
    "n": PLAIN,
    "presence_penalty": PLAIN,
    "frequency_penalty": PLAIN,
    "logit_bias": AGENT_DATA,
    "logprobs": PLAIN,
    "top_logprobs": PLAIN,
    "reasoning_effort": PLAIN,
    "top_k": PLAIN,
    "min_p": PLAIN,
    "repetition_penalty": PLAIN,
    "chat_template_kwargs": {"enable_thinking": PLAIN, "thinking": PLAIN},
}
STREAM_OPTIONS_SHAPE: dict[str, Any] = {"include_usage": PLAIN}


_DROPPED = object()
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}")
MAX_NAMED_DROPS = 32


def allowed_fields(value: Any, shape: Any, path: str, dropped: list[str]) -> Any:
    """``value`` with only what ``shape`` allows; appends the path of everything dropped
    (``_DROPPED`` for a value dropped whole: its key or list item is left out)."""
    if shape == AGENT_DATA:
        return value
    if shape == PLAIN:
        if isinstance(value, dict | list):
            dropped.append(path)
            return _DROPPED
        return value
    if isinstance(shape, list):
        if not isinstance(value, list):
            return allowed_fields(value, PLAIN, path, dropped)  # a string content, "auto", ...
        kept_items = (allowed_fields(item, shape[0], f"{path}[{i}]", dropped) for i, item in enumerate(value))
        return [item for item in kept_items if item is not _DROPPED]
    if not isinstance(value, dict):
        return allowed_fields(value, PLAIN, path, dropped)
    out = {}
    for key, item in value.items():
        name = key if _PLAIN_NAME.fullmatch(key) else orjson.dumps(key).decode()  # no newline reaches a header
        where = f"{path}.{name}" if path else name
        kept = allowed_fields(item, shape[key], where, dropped) if key in shape else _DROPPED
        if key not in shape:
            dropped.append(where)
        if kept is not _DROPPED:
            out[key] = kept
    return out


def forwarded_fields(body: dict[str, Any], set_by_proxy: frozenset[str]) -> tuple[dict[str, Any], list[str]]:
    """The part of a request the upstream may see, and the sorted paths of what was dropped
    (the keys the proxy sets itself are neither)."""
    dropped: list[str] = []
    payload = allowed_fields({k: v for k, v in body.items() if k not in set_by_proxy}, REQUEST_SHAPE, "", dropped)
    dropped.sort()
    if len(dropped) > MAX_NAMED_DROPS:  # a request of a million junk keys must not make a record that size
        dropped[MAX_NAMED_DROPS:] = [f"... and {len(dropped) - MAX_NAMED_DROPS} more"]
    return payload, dropped
