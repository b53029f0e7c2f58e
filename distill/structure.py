"""The structural-quality filter: did the LLM itself drive the episode?

Five stages, each leaving a verdict and a reason on the trajectory (all five
are evaluated, so a rejected row says everything that is wrong with it):

1. ``inference``: the episode made inference calls the model answered;
2. ``tool_calls``: the model emitted tool calls;
3. ``attribution``: at least ``min_attribution`` of the environment's calls
   match, in order, calls the model emitted (same name, same arguments), and
   every tool result the agent showed the model is the one the environment
   returned; agent-reported traces cannot pass (nothing proves the calls);
4. ``continuity``: the requests extend one dialogue (each request starts with
   the previous request plus the model's answer to it), and every assistant
   turn inside a request is a response the model actually gave earlier;
5. ``final_recommendation``: the executed ``recommend_product`` is one the model emitted.

All five passed = agentic (train/eval material); otherwise sub-task.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from distill.export_model import FilterConfig
from distill.normalize import ExecutedCall, Trace, assistant_message, parse_arguments, tool_content
from distill.schema import Verdict

STAGES = ("inference", "tool_calls", "attribution", "continuity", "final_recommendation")


class _Emitted(BaseModel):
    turn: int
    id: str
    name: str
    arguments: dict[str, Any] | None


def _emitted(trace: Trace) -> list[_Emitted]:
    calls = []
    for number, turn in enumerate(trace.turns):
        if turn.response is None:
            continue
        for call in assistant_message(turn.response).get("tool_calls", []):
            function = call["function"]
            calls.append(
                _Emitted(
                    turn=number, id=call["id"], name=function["name"], arguments=parse_arguments(function["arguments"])
                )
            )
    return calls


def _match(executed: list[ExecutedCall], emitted: list[_Emitted]) -> dict[int, int]:
    """executed index -> emitted index, matched greedily in order (a skipped emission may stay unexecuted)."""
    matched: dict[int, int] = {}
    cursor = 0
    for i, call in enumerate(executed):
        for j in range(cursor, len(emitted)):
            if emitted[j].name == call.name and emitted[j].arguments == call.arguments:
                matched[i] = j
                cursor = j + 1
                break
    return matched


def _same_result(content: Any, call: ExecutedCall) -> bool:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if not call.ok:
        return "error" in text.lower() and (not call.error or call.error in text)
    if text == tool_content(call):
        return True
    try:
        return json.loads(text) == call.result
    except ValueError:
        return False


def _forged_results(trace: Trace, emitted: list[_Emitted], matched: dict[int, int]) -> list[str]:
    """Tool messages in the requests whose content is not what the environment returned for that call."""
    by_emission = {j: i for i, j in matched.items()}
    index_of = {e.id: j for j, e in enumerate(emitted)}
    problems = []
    for number, turn in enumerate(trace.turns):
        for message in turn.request:
            if message.get("role") != "tool":
                continue
            call_id = str(message.get("tool_call_id") or "")
            j = index_of.get(call_id)
            if j is None:
                problems.append(f"request {number}: tool message for call {call_id!r} the model never emitted")
            elif j not in by_emission:
                problems.append(f"request {number}: tool message for call {call_id!r} the environment never executed")
            elif not _same_result(message.get("content"), trace.executed[by_emission[j]]):
                problems.append(
                    f"request {number}: tool message for call {call_id!r} differs from the environment's result"
                )
    return problems


def _attribution(trace: Trace, emitted: list[_Emitted], matched: dict[int, int], config: FilterConfig) -> Verdict:
    if trace.provenance == "agent-reported":
        return Verdict(passed=False, reason="agent-reported trace: nothing proves the model emitted these calls")
    if not trace.executed:
        return Verdict(passed=False, reason="the environment executed no tool calls")
    share = len(matched) / len(trace.executed)
    stray = [f"#{i} {c.name}" for i, c in enumerate(trace.executed) if i not in matched]
    if share < config.min_attribution:
        return Verdict(
            passed=False,
            reason=f"{len(matched)}/{len(trace.executed)} executed calls ({share:.0%}) match emitted calls, "
            f"below {config.min_attribution:.0%}; not emitted by the model: {', '.join(stray[:4])}",
        )
    forged = _forged_results(trace, emitted, matched)
    if forged:
        return Verdict(passed=False, reason=f"{len(forged)} forged tool result(s): {forged[0]}")
    return Verdict(passed=True, reason=f"{len(matched)}/{len(trace.executed)} executed calls ({share:.0%}) emitted")


def _key(message: dict[str, Any]) -> tuple:
    """What two copies of one message must share (reasoning text is not sent back, so it is left out)."""
    role = message.get("role")
    content = message.get("content") or ""
    if role == "assistant":
        calls = tuple(
            (str(c.get("id")), c.get("function", {}).get("name"), json.dumps(
                parse_arguments(c.get("function", {}).get("arguments") or "{}"), sort_keys=True))
            for c in message.get("tool_calls") or []
        )  # fmt: skip
        return role, content, calls
    return role, content if isinstance(content, str) else json.dumps(content), str(message.get("tool_call_id") or "")


def _continuity(trace: Trace) -> Verdict:
    answered = [(n, t) for n, t in enumerate(trace.turns) if t.response is not None]
    if not answered:
        return Verdict(passed=False, reason="no answered inference call")
    if trace.dialogue == "text-history":
        return _text_continuity(trace)
    given: set[tuple] = set()
    previous: list[tuple] | None = None
    for number, turn in answered:
        request = [_key(m) for m in turn.request]
        for position, message in enumerate(turn.request):
            if message.get("role") == "assistant" and _key(message) not in given:
                return Verdict(
                    passed=False,
                    reason=f"request {number}: assistant message {position} is not a response the model gave "
                    "(forged history)",
                )
        if previous is not None and request[: len(previous)] != previous:
            return Verdict(
                passed=False, reason=f"request {number} does not extend request {number - 1} (one-shot prompts)"
            )
        assert turn.response is not None  # answered turns only
        answer = _key(assistant_message(turn.response))
        given.add(answer)
        previous = [*request, answer]
    if len(answered) == 1:
        return Verdict(passed=True, reason="one inference call: a single dialogue")
    return Verdict(passed=True, reason=f"{len(answered)} inference calls extend one dialogue")


def _text_continuity(trace: Trace) -> Verdict:
    """Prompts that re-serialise the dialogue as text: each must quote the model's previous turn."""
    answered = [t for t in trace.turns if t.response is not None]
    for number in range(1, len(answered)):
        prompt = " ".join(str(m.get("content") or "") for m in answered[number].request)
        before = answered[number - 1].response or {}
        think = (before.get("reasoning_content") or "").strip()
        names = [c["function"]["name"] for c in assistant_message(before).get("tool_calls", [])]
        if (think and think not in prompt) or any(name not in prompt for name in names):
            return Verdict(passed=False, reason=f"step {number}'s prompt does not carry step {number - 1}'s turn")
    return Verdict(passed=True, reason=f"{len(answered)} steps, each prompt carries the dialogue so far")


def _final(trace: Trace, matched: dict[int, int]) -> Verdict:
    last = max((i for i, c in enumerate(trace.executed) if c.name == "recommend_product" and c.ok), default=None)
    if last is None:
        return Verdict(passed=False, reason="no recommend_product was executed")
    if trace.provenance == "agent-reported":
        return Verdict(passed=False, reason="agent-reported trace: the recommendation cannot be attributed")
    if last not in matched:
        return Verdict(passed=False, reason=f"the executed recommend_product (#{last}) was not emitted by the model")
    return Verdict(passed=True, reason=f"recommend_product #{last} was emitted by the model")


def structural_verdicts(trace: Trace, config: FilterConfig | None = None) -> dict[str, Verdict]:
    config = config or FilterConfig()
    answered = sum(1 for t in trace.turns if t.response is not None)
    emitted = _emitted(trace)
    matched = _match(trace.executed, emitted)
    return {
        "inference": Verdict(passed=answered > 0, reason=f"{answered} answered of {len(trace.turns)} inference calls"),
        "tool_calls": Verdict(passed=bool(emitted), reason=f"the model emitted {len(emitted)} tool call(s)"),
        "attribution": _attribution(trace, emitted, matched, config),
        "continuity": _continuity(trace),
        "final_recommendation": _final(trace, matched),
    }
