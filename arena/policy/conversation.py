"""Reading a chat transcript back into an episode: the task, and each tool call with its result.

The policy keeps no state between requests; like a real model it sees only
the dialogue, so everything it knows (what it searched, what came back,
what it inspected) is recovered here from assistant ``tool_calls`` and the
``tool`` messages that answer them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from arena.policy.chat_format import ChatMessage


@dataclass
class ExecutedCall:
    """One tool call the assistant made and what the environment answered."""

    id: str
    name: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Transcript:
    task: str  # the first user message: the shopper's request
    last_user: str
    calls: list[ExecutedCall] = field(default_factory=list)
    assistant_turns: int = 0

    def named(self, name: str) -> list[ExecutedCall]:
        return [c for c in self.calls if c.name == name]

    @property
    def terminated(self) -> bool:
        return any(c.ok for c in self.named("terminate"))

    @property
    def last(self) -> ExecutedCall | None:
        return self.calls[-1] if self.calls else None


def read_transcript(messages: list[ChatMessage]) -> Transcript:
    users = [m.text() for m in messages if m.role == "user"]
    transcript = Transcript(task=users[0] if users else "", last_user=users[-1] if users else "")
    by_id: dict[str, ExecutedCall] = {}
    for message in messages:
        if message.role == "assistant":
            transcript.assistant_turns += 1
            for call in message.tool_calls or []:
                executed = ExecutedCall(call.id, call.function.name, _arguments(call.function.arguments))
                by_id[call.id] = executed
                transcript.calls.append(executed)
        elif message.role == "tool" and message.tool_call_id in by_id:
            _record_result(by_id[message.tool_call_id], message.text())
    return transcript


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _record_result(call: ExecutedCall, content: str) -> None:
    """Tool messages carry JSON results, or the error text of a failed call. Agents wrap results
    differently (the bare result, or ``{"ok", "result", "error"}``); both are understood."""
    try:
        parsed = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        call.error = content.strip() or "empty tool result"
        return
    if isinstance(parsed, dict) and ("error" in parsed or parsed.get("ok") is False) and "result" not in parsed:
        call.error = str(parsed.get("error") or "tool call failed")
        return
    if isinstance(parsed, dict) and "result" in parsed and set(parsed) <= {"ok", "result", "error", "notice", "name",
                                                                          "arguments"}:  # fmt: skip
        if parsed.get("ok") is False:
            call.error = str(parsed.get("error") or "tool call failed")
            return
        parsed = parsed["result"]
    call.result = parsed


def result_list(call: ExecutedCall) -> list[dict]:
    """The list of records a search or lookup returned (empty when it failed)."""
    if not call.ok or not isinstance(call.result, list):
        return []
    return [r for r in call.result if isinstance(r, dict)]
