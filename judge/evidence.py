"""What a judge may look at, taken from the validator's record and nothing else.

The rule that matters: only what the proxy recorded as the model's response is
the model's reasoning. ``request.messages`` are written by the agent, and an
agent can put anything there, assistant turns the model never produced
included, so they are not evidence at all. They are kept only as the
dictation (``judge.dictation``): what the agent wrote into each request, so
that a response repeating it is not credited as the model's. The problem's reward is the answer
key and never enters the evidence either: a judge that saw it would grade
outcome, not reasoning. The rest (tool calls with their results, the final
recommendation, the query) is kept whole here; the LLM prompt truncates it
(``judge.prompt``) and the rules judge reads it in full.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from arena.runner.record import EpisodeRecord, LLMCallRecord, ProbeRecord
from judge.dictation import dictation_by_call
from judge.pointed import RequestItems, may_point, request_items
from judge.probe import plain_tokens

# Kinds of limits_hit that say the record's text was cut (arena.runner.storable): a cut request may have
# lost the id a response names, so on such a record provenance reads what the probe noted before the cut.
_CUT = frozenset({"record_bytes", "record_depth"})


class ModelStep(BaseModel):
    """One inference call the model answered, as the proxy recorded it."""

    call_index: int
    at_s: float  # when the request reached the proxy: tool results before it were visible to the agent
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None
    status_code: int = 200
    text: str  # reasoning_content and content, each once
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)  # [{"name", "arguments"}] the model emitted
    # Request text the agent wrote that this request added (judge.dictation): never evidence, only
    # what the model's words are checked against. Never shown to an LLM judge.
    dictation: list[str] = Field(default_factory=list)
    # What the request held in plain form (judge.probe's provenance check): ids and numbers a model can
    # have read. None: not known (the record's text was cut to store it), and the check is skipped.
    request_ids: set[str] | None = None
    request_numbers: set[float] | None = None
    unheld: set[str] | None = None  # on a cut record, for a probed call: what its request did not hold
    # The request's product records (lists in order, prices, titles), read only where the agent's new text may
    # state a verdict about them (judge.pointed). None: not read.
    items: RequestItems | None = None


class ToolStep(BaseModel):
    index: int
    at_s: float
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)  # agent-written (or model-written via the agent)
    ok: bool
    result: Any = None
    error: str | None = None


class Evidence(BaseModel):
    episode_id: str
    intent: str
    query: str  # the problem's request as the validator posed it (the reward is left out)
    steps: list[ModelStep] = Field(default_factory=list)
    tools: list[ToolStep] = Field(default_factory=list)
    unanswered_calls: int = 0  # refused or failed before any model output: they earn nothing
    final_recommendation: list[str] | None = None
    termination: str
    probes: list[ProbeRecord] = Field(default_factory=list)  # the validator's re-asks (arena.runner.probe)

    @property
    def model_answered(self) -> bool:
        return bool(self.steps)

    def timeline(self) -> list[ModelStep | ToolStep]:
        """Both kinds in recorded order; at a tie the tool call first (it finished before the request arrived)."""
        items: list[tuple[float, int, int, ModelStep | ToolStep]] = [(t.at_s, 0, t.index, t) for t in self.tools]
        items += [(s.at_s, 1, s.call_index, s) for s in self.steps]
        return [item for *_, item in sorted(items, key=lambda entry: entry[:3])]


def step_text(response: dict[str, Any]) -> str:
    """The model's words in one response. Servers put thinking in ``reasoning_content`` and the
    answer in ``content``; some (the heuristic policy) send the same text in both, kept once."""
    parts: list[str] = []
    for key in ("reasoning_content", "content"):
        value = response.get(key)
        if isinstance(value, str) and value.strip() and value not in parts:
            parts.append(value)
    return "\n".join(parts)


def _emitted_calls(response: dict[str, Any]) -> list[dict[str, Any]]:
    calls = response.get("tool_calls")
    emitted = []
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            emitted.append({"name": str(function.get("name") or ""), "arguments": function.get("arguments") or ""})
    return emitted


def _model_step(
    call: LLMCallRecord, dictation: dict[int, list[str]], cut: bool, unheld: dict[int, set[str]]
) -> ModelStep | None:
    # Only choice 0 is kept at the top of ``response``: it is the turn the agent continued with.
    if not isinstance(call.response, dict):
        return None
    text = step_text(call.response)
    # Only a response with a digit can name an id or a price: the others' requests are not read for provenance.
    readable = not cut and call.request and any(c.isdigit() for c in text)
    ids, numbers = plain_tokens(call.request) if readable else (None, None)
    pieces = dictation.get(call.index, [])
    items = request_items(call.request) if text and call.request and may_point(pieces) else None
    return ModelStep(
        call_index=call.index,
        at_s=call.at_s,
        model=call.model,
        prompt_tokens=call.usage.prompt_tokens,
        completion_tokens=call.usage.completion_tokens,
        finish_reason=call.response.get("finish_reason"),
        status_code=call.status_code,
        text=text,
        tool_calls=_emitted_calls(call.response),
        dictation=pieces,
        request_ids=ids,
        request_numbers=numbers,
        unheld=unheld.get(call.index) if cut else None,
        items=items,
    )


def build_evidence(record: EpisodeRecord) -> Evidence:
    dictation = dictation_by_call(record)
    cut = any(hit.limit in _CUT for hit in record.limits_hit)
    unheld = {probe.call_index: set(probe.unheld) for probe in record.probes}
    steps = [step for call in record.llm_calls if (step := _model_step(call, dictation, cut, unheld)) is not None]
    tools = [
        ToolStep(
            index=call.index,
            at_s=call.at_s,
            name=call.name,
            arguments=call.arguments,
            ok=call.ok,
            result=call.result,
            error=call.error,
        )
        for call in record.tool_calls
    ]
    return Evidence(
        episode_id=record.episode_id,
        intent=record.problem.intent,
        query=record.problem.query,
        steps=steps,
        tools=tools,
        unanswered_calls=len(record.llm_calls) - len(steps),
        final_recommendation=record.final_recommendation,
        termination=record.termination.value,
        probes=record.probes,
    )
