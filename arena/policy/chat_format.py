"""The OpenAI chat-completions wire format the policy server speaks, typed at the boundary.

Only what a chat client sends and reads is modelled; unknown request fields
are accepted and ignored (clients add vendor extras), while a request a real
OpenAI-compatible server would refuse (bad roles, a tool message answering
no call, a tool choice naming an absent tool) fails validation, which the
server turns into a 400.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MODEL_ID = "heuristic-policy"
# Says in every response that no neural model produced it.
SYSTEM_FINGERPRINT = "heuristic-policy-v1"

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str | None) -> int:
    """A deterministic stand-in tokenizer: words and single punctuation marks.
    Close enough to BPE counts for budgets, and identical on every machine."""
    return len(_TOKEN.findall(text or ""))


def truncate_tokens(text: str, limit: int) -> str:
    """The longest prefix of ``text`` holding at most ``limit`` tokens."""
    if limit <= 0:
        return ""
    for i, match in enumerate(_TOKEN.finditer(text)):
        if i + 1 == limit:
            return text[: match.end()]
    return text


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class FunctionCall(BaseModel):
    name: str
    arguments: str = "{}"


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    reasoning_content: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> ChatMessage:
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a 'tool' message needs 'tool_call_id'")
        if self.role in ("system", "developer", "user") and self.content is None:
            raise ValueError(f"a '{self.role}' message needs 'content'")
        if self.role != "assistant" and self.tool_calls:
            raise ValueError(f"only assistant messages may carry 'tool_calls', not '{self.role}'")
        return self

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(part.text or "" for part in self.content if part.type == "text")
        return self.content or ""


class FunctionSpec(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ToolSpec(BaseModel):
    type: Literal["function"]
    function: FunctionSpec


class NamedFunction(BaseModel):
    name: str


class NamedToolChoice(BaseModel):
    type: Literal["function"]
    function: NamedFunction


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=1)
    tools: list[ToolSpec] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, ge=0.0, le=1.0)
    seed: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    n: int = Field(1, ge=1, le=8)
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: str | list[str] | None = None
    parallel_tool_calls: bool | None = None

    @field_validator("stop")
    @classmethod
    def _stops(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and len(value) > 4:
            raise ValueError("at most 4 stop sequences")
        return value

    @model_validator(mode="after")
    def _dialogue(self) -> ChatCompletionRequest:
        names = [t.function.name for t in self.tools or []]
        if len(set(names)) != len(names):
            raise ValueError("tools: function names must be unique")
        if isinstance(self.tool_choice, NamedToolChoice) and self.tool_choice.function.name not in names:
            raise ValueError(f"tool_choice names {self.tool_choice.function.name!r}, which is not in 'tools'")
        if self.tool_choice in ("required",) and not names:
            raise ValueError("tool_choice 'required' needs 'tools'")
        _check_tool_turns(self.messages)
        return self

    @property
    def completion_limit(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens

    @property
    def stops(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else [s for s in self.stop if s]

    def tool_names(self) -> list[str]:
        return [t.function.name for t in self.tools or []]


def _check_tool_turns(messages: list[ChatMessage]) -> None:
    """OpenAI's rule: every tool message answers a call of the assistant turn just before it,
    and every call of an assistant turn is answered before the dialogue moves on."""
    open_calls: dict[str, str] = {}
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if message.role == "tool":
            if message.tool_call_id not in open_calls:
                raise ValueError(
                    f"{where}: tool message answers tool_call_id {message.tool_call_id!r}, "
                    "which no preceding assistant message left unanswered"
                )
            del open_calls[message.tool_call_id]
            continue
        if open_calls:
            raise ValueError(
                f"{where}: the assistant's tool call(s) {', '.join(sorted(open_calls))} "
                "must be answered by tool messages first"
            )
        if message.role == "assistant" and message.tool_calls:
            ids = [call.id for call in message.tool_calls]
            if len(set(ids)) != len(ids):
                raise ValueError(f"{where}: duplicate tool_call ids")
            open_calls = {call_id: message.tool_calls[i].function.name for i, call_id in enumerate(ids)}
    if open_calls:
        raise ValueError(f"the last assistant tool call(s) {', '.join(sorted(open_calls))} have no tool messages")


# -- responses ------------------------------------------------------------------------------


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None


class Choice(BaseModel):
    index: int
    message: AssistantMessage
    finish_reason: Literal["stop", "length", "tool_calls"]
    logprobs: None = None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    system_fingerprint: str = SYSTEM_FINGERPRINT
    choices: list[Choice]
    usage: Usage


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "trajectory-arena (heuristic, not a neural model)"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


def error_body(message: str, *, kind: str = "invalid_request_error", param: str | None = None, code: str | None = None):
    """The OpenAI error envelope, which the openai client turns into its typed exceptions."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
