"""What an upstream answered, as the episode record keeps it.

The readers turn an upstream's answer (a ``chat.completion`` object, or the
``chat.completion.chunk`` stream of one) into the record's ``response``
shape, whatever dialect the server speaks: vLLM puts reasoning in
``reasoning_content`` (older) or ``reasoning`` (newer), some servers resend a
tool call's id or name on every delta. They never raise on odd input: an
upstream is trusted to be a server, not to be tidy. ``parse_usage`` and
``estimate_usage`` give the tokens a call is charged.
"""

from __future__ import annotations

import json
import math
from typing import Any

from arena.runner.record import TokenUsage

# Bytes, not tokens: a tokenizer per model would pull transformers into the validator
# for a figure that is only a fallback (used when an upstream reports no usage).
CHARS_PER_TOKEN = 4


def _reasoning(message: dict[str, Any]) -> Any:
    reasoning = message.get("reasoning_content")
    return message.get("reasoning") if reasoning is None else reasoning


def _choice_record(choice: Any) -> dict[str, Any]:
    choice = choice if isinstance(choice, dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    return {
        "content": message.get("content"),
        "reasoning_content": _reasoning(message),
        "tool_calls": message.get("tool_calls") or None,
        "finish_reason": choice.get("finish_reason"),
    }


def _response_record(answer_id: Any, choices: list[dict[str, Any]]) -> dict[str, Any]:
    """Choice 0 at the top level (the dialogue the agent continues); all choices
    under ``choices`` only when the agent asked for n > 1."""
    first = choices[0] if choices else _choice_record({})
    response = {"id": answer_id, **first}
    if len(choices) > 1:
        response["choices"] = choices
    return response


def completion_record(answer: dict[str, Any]) -> dict[str, Any]:
    """The record's ``response`` for a non-streaming ``chat.completion``."""
    choices = answer.get("choices")
    records = [_choice_record(choice) for choice in choices] if isinstance(choices, list) else []
    return _response_record(answer.get("id"), records)


class _ChoiceDraft:
    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None

    def add(self, delta: dict[str, Any]) -> None:
        if isinstance(delta.get("content"), str):
            self.content.append(delta["content"])
        reasoning = _reasoning(delta)
        if isinstance(reasoning, str):
            self.reasoning.append(reasoning)
        calls = delta.get("tool_calls")
        for position, part in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(part, dict):
                self._add_tool_call(position, part)

    def _add_tool_call(self, position: int, part: dict[str, Any]) -> None:
        index = part.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else position
        call = self.tool_calls.setdefault(
            index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if isinstance(part.get("type"), str):
            call["type"] = part["type"]
        call["id"] = _concat(call["id"], part.get("id"))
        function = part.get("function")
        function = function if isinstance(function, dict) else {}
        call["function"]["name"] = _concat(call["function"]["name"], function.get("name"))
        if isinstance(function.get("arguments"), str):
            call["function"]["arguments"] += function["arguments"]

    def record(self) -> dict[str, Any]:
        return {
            "content": "".join(self.content) if self.content else None,
            "reasoning_content": "".join(self.reasoning) if self.reasoning else None,
            "tool_calls": [self.tool_calls[i] for i in sorted(self.tool_calls)] or None,
            "finish_reason": self.finish_reason,
        }


def _concat(accumulated: str, part: Any) -> str:
    # Ids and names arrive once from OpenAI and vLLM, but some servers resend the whole
    # value on every delta; a part equal to what we already hold is such a resend.
    if not isinstance(part, str) or not part or part == accumulated:
        return accumulated
    return accumulated + part


class StreamAssembler:
    """Rebuilds from ``chat.completion.chunk`` deltas the answer a non-streaming call
    would have returned: content and reasoning concatenated, tool-call deltas merged
    by index, per choice."""

    def __init__(self) -> None:
        self.answer_id: Any = None
        self.usage: TokenUsage | None = None
        self.chunks = 0
        self._choices: dict[int, _ChoiceDraft] = {}

    def add(self, chunk: dict[str, Any]) -> None:
        self.chunks += 1
        if self.answer_id is None:
            self.answer_id = chunk.get("id")
        usage = parse_usage(chunk.get("usage"))
        if usage is not None:
            self.usage = usage  # the last report wins: vLLM's continuous stats are cumulative
        choices = chunk.get("choices")
        for position, choice in enumerate(choices if isinstance(choices, list) else []):
            if not isinstance(choice, dict):
                continue
            index = choice.get("index")
            index = index if isinstance(index, int) and not isinstance(index, bool) else position
            draft = self._choices.setdefault(index, _ChoiceDraft())
            if isinstance(choice.get("delta"), dict):
                draft.add(choice["delta"])
            if choice.get("finish_reason") is not None:
                draft.finish_reason = choice["finish_reason"]

    @property
    def finished(self) -> bool:
        return any(draft.finish_reason is not None for draft in self._choices.values())

    def record(self) -> dict[str, Any]:
        return _response_record(self.answer_id, [self._choices[i].record() for i in sorted(self._choices)])


# --- usage ----------------------------------------------------------------------------------------


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse_usage(raw: Any) -> TokenUsage | None:
    """An upstream's ``usage`` object, or None when it is absent or unreadable."""
    if not isinstance(raw, dict):
        return None
    prompt, completion = _count(raw.get("prompt_tokens")), _count(raw.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    total = _count(raw.get("total_tokens"))
    return TokenUsage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion if total is None else total
    )


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def estimate_usage(request: dict[str, Any], response: dict[str, Any] | None) -> TokenUsage:
    """~4 characters a token: the prompt is the JSON text of messages and tools (so
    it over-counts a little, which errs towards the budget), the completion is the
    generated text (content, reasoning, tool names and arguments) of every choice."""
    prompt_parts = [request.get("messages"), request.get("tools")]
    prompt = _tokens(sum(len(json.dumps(part, ensure_ascii=False)) for part in prompt_parts if part is not None))
    completion = 0
    if response is not None:
        for choice in response.get("choices") or [response]:
            texts = [choice.get("content"), choice.get("reasoning_content")]
            for call in choice.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    texts += [function.get("name"), function.get("arguments")]
            completion += _tokens(sum(len(text) for text in texts if isinstance(text, str)))
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
