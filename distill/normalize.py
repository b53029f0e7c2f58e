"""Episode records -> the canonical trajectory.

The messages are rebuilt from what the validator recorded, never taken from
the agent's own bookkeeping: every assistant turn is a response the inference
proxy saw the model give, and the dialogue around it is what the model was
sent. The structural filter (``distill.structure``) then checks that the
agent's copy of the dialogue agrees with the record: the calls it executed
are calls the model emitted, and the tool results it showed the model are the
ones the environment returned.

``Trace`` is the neutral form both this module and the importers produce, so
one filter judges trajectories from every source.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from arena.runner.record import EpisodeRecord
from arena.shop.tools import TOOL_SCHEMAS, openai_tool_schemas
from distill.schema import AgentInfo, JudgeInfo, Provenance, Trajectory, TrajectoryMetadata, Usage


class ModelTurn(BaseModel):
    """One inference call: the messages the model was sent and what it answered (None: no answer)."""

    request: list[dict[str, Any]] = Field(default_factory=list)
    response: dict[str, Any] | None = None
    completion_tokens: int = 0


class ExecutedCall(BaseModel):
    """One tool call the environment executed, with what it returned."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    result: Any = None
    error: str | None = None
    observed: bool = True  # False: no environment result is known (agent-reported traces)


class Trace(BaseModel):
    provenance: Provenance = "validator-recorded"
    # "chat": each request carries the dialogue as messages (prefix-consistency applies);
    # "text-history": each request re-serialises the dialogue as text (ShoppingBench's prompt style).
    dialogue: Literal["chat", "text-history"] = "chat"
    turns: list[ModelTurn] = Field(default_factory=list)
    executed: list[ExecutedCall] = Field(default_factory=list)
    final_recommendation: list[str] | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)
    # The problem as it ran (official row shape, reward included): the export writes the train problems
    # from it for rft and grpo. Never part of a corpus row.
    problem_row: dict[str, Any] | None = None


def tool_content(call: ExecutedCall) -> str:
    """The tool message the environment's answer becomes (the reference agent's convention)."""
    if not call.ok:
        return f"error: {call.error}"
    return json.dumps(call.result, ensure_ascii=False)


def assistant_message(response: dict[str, Any]) -> dict[str, Any]:
    """A proxy-recorded response as a canonical assistant message."""
    message: dict[str, Any] = {"role": "assistant", "content": response.get("content") or ""}
    reasoning = response.get("reasoning_content")
    if reasoning and reasoning != message["content"]:
        message["reasoning_content"] = reasoning
    calls = response.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                "id": str(c.get("id") or f"call_{i}"),
                "type": "function",
                "function": {
                    "name": c.get("function", {}).get("name", ""),
                    "arguments": _arguments_text(c.get("function", {}).get("arguments")),
                },
            }
            for i, c in enumerate(calls)
        ]
    return message


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def parse_arguments(text: str) -> dict[str, Any] | None:
    """A tool call's arguments as a dict, or None when they are not a JSON object."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def trace_of(record: EpisodeRecord) -> Trace:
    turns = [
        ModelTurn(
            request=list(call.request.get("messages") or []),
            response=call.response if call.status_code == 200 and call.error is None else None,
            completion_tokens=call.usage.completion_tokens,
        )
        for call in record.llm_calls
    ]
    offered = next((list(c.request["tools"]) for c in record.llm_calls if c.request.get("tools")), [])
    tools = [_schema(tool) for tool in offered]
    executed = [
        ExecutedCall(name=t.name, arguments=t.arguments, ok=t.ok, result=t.result, error=t.error)
        for t in record.tool_calls
    ]
    return Trace(
        turns=turns,
        executed=executed,
        final_recommendation=record.final_recommendation,
        tools=tools,
        problem_row=record.problem.row or None,
    )


def _schema(tool: Any) -> dict[str, Any]:
    """An offered tool as an OpenAI function schema (a bare known name is expanded, anything else refused)."""
    if isinstance(tool, dict):
        return tool
    if isinstance(tool, str) and tool in TOOL_SCHEMAS:
        return openai_tool_schemas([tool])[0]
    raise ValueError(f"offered tool {tool!r} is neither a function schema nor a known tool name")


def _same_message(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("role") == b.get("role") and (a.get("content") or "") == (b.get("content") or "")


def rebuild_messages(trace: Trace) -> list[dict[str, Any]]:
    """The dialogue as the model lived it: requests' new messages, then the model's own response.

    A request that extends the dialogue so far contributes only its new
    (user/tool) messages; one that does not (a one-shot prompt) contributes its
    messages after the system prompt already in the dialogue. Assistant turns
    always come from responses. The tool results of the last response (never
    sent back to the model) are taken from the environment's record.
    """
    messages: list[dict[str, Any]] = []
    seen_assistant = 0  # responses appended so far
    for turn in trace.turns:
        if turn.response is None:
            continue
        request = turn.request
        if trace.dialogue == "chat":
            request = _new_part(messages, request)
        for message in request:
            if message.get("role") == "assistant":
                continue  # the model's turns come from its responses, never from the agent's copy
            if message.get("role") == "system" and any(m.get("role") == "system" for m in messages):
                continue
            messages.append(_plain(message))
        messages.append(assistant_message(turn.response))
        seen_assistant += 1
    _append_last_results(messages, trace)
    return messages


def _new_part(dialogue: list[dict[str, Any]], request: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of ``request`` after its longest prefix that matches ``dialogue`` (role and content)."""
    shared = 0
    for ours, theirs in zip(dialogue, request, strict=False):
        if not _same_message(ours, theirs):
            break
        shared += 1
    return request[shared:] if shared == len(dialogue) else request


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    keep = {"role": message.get("role"), "content": _text(message.get("content"))}
    if message.get("role") == "tool":
        keep["tool_call_id"] = str(message.get("tool_call_id") or "")
    return keep


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return json.dumps(content, ensure_ascii=False)


def _append_last_results(messages: list[dict[str, Any]], trace: Trace) -> None:
    """Tool messages for the trailing assistant turn's calls, from the environment's record, in order."""
    if not messages or messages[-1].get("role") != "assistant" or not messages[-1].get("tool_calls"):
        return
    calls = messages[-1]["tool_calls"]
    executed = [c for c in trace.executed if c.observed]
    tail = executed[-len(calls) :] if len(executed) >= len(calls) else []
    for call, done in zip(calls, tail, strict=False):
        if done.name != call["function"]["name"] or parse_arguments(call["function"]["arguments"]) != done.arguments:
            return  # not the executed calls of this turn: leave the dialogue ending on the assistant turn
    for call, done in zip(calls, tail, strict=False):
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": tool_content(done)})


def judge_info(judgment: Any) -> JudgeInfo | None:
    """A judgment (ReasoningJudgment, store JudgmentInfo, or a judge-run JSON line) as metadata; None if not judged."""
    if judgment is None:
        return None
    data = judgment if isinstance(judgment, dict) else judgment.model_dump()
    if data.get("status", "done") not in ("done", "judged") or data.get("coefficient") is None:
        return None
    return JudgeInfo(
        level=float(data["level"]),
        coefficient=float(data["coefficient"]),
        judge=str(data.get("judge", "")),
        rubric_version=str(data.get("rubric_version", "")),
    )


def normalize_record(
    record: EpisodeRecord,
    *,
    source: str,
    outcome: Mapping[str, Any] | None = None,
    judgment: JudgeInfo | None = None,
    cluster_id: str | None = None,
    partition: str | None = None,
    cycle: int | None = None,
    submission_id: int | None = None,
    suite_id: str | None = None,
) -> tuple[Trajectory, Trace]:
    """The canonical trajectory of one recorded episode and the trace the filter checks it against.

    ``outcome``: the episode's OutcomeScore (JSON) where it is kept apart from the record (the store's
    column); None: the record's own, as an episode-record file carries it.
    """
    trace = trace_of(record)
    tokens = record.inference_tokens()
    outcome = (record.outcome if outcome is None else outcome) or {}
    metadata = TrajectoryMetadata(
        episode_id=record.episode_id,
        problem_id=record.problem.id,
        intent=record.problem.intent,
        cluster_id=cluster_id or record.problem.cluster_id,
        partition=partition,
        agent=AgentInfo(name=record.agent.name, sha256=record.agent.sha256),
        submission_id=submission_id,
        cycle=cycle,
        started_at=record.started_at,
        suite_id=suite_id,
        success=outcome.get("success"),
        rule=outcome.get("rule"),
        judge=judgment,
        usage=Usage(prompt_tokens=tokens.prompt_tokens, completion_tokens=tokens.completion_tokens),
        provenance="validator-recorded",
        source=source,
    )
    return Trajectory(messages=rebuild_messages(trace), tools=trace.tools, metadata=metadata), trace
