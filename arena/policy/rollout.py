"""Run the heuristic policy on one problem in-process: the agentic loop without HTTP or a sandbox.

Benchmarks and tests use it to measure the policy itself at thousands of
episodes a minute; the episode runner drives the same policy through the
server and a real agent instead. The dialogue it builds is the one the
``tool_calling`` reference agent builds, so both measure the same thing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from arena.policy.chat_format import MODEL_ID, ChatCompletionRequest
from arena.policy.policy import HeuristicPolicy
from arena.shop.tools import ShopEnvironment

SYSTEM_PROMPT = (
    "You are a shopping assistant. Use the tools to find the products the user asks for, check them, "
    "recommend them with recommend_product (ids in the order the user asked), then call terminate."
)


@dataclass
class Rollout:
    messages: list[dict] = field(default_factory=list)
    recommended: list[str] | None = None
    turns: int = 0
    tool_calls: int = 0


def rollout(
    policy: HeuristicPolicy,
    env: ShopEnvironment,
    query: str,
    *,
    temperature: float = 0.0,
    seed: int | None = None,
    max_turns: int = 20,
) -> Rollout:
    messages: list[dict] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": query}]
    out = Rollout(messages=messages)
    tools = env.schemas()
    for turn in range(max_turns):
        request = ChatCompletionRequest.model_validate(
            {"model": MODEL_ID, "messages": messages, "tools": tools, "temperature": temperature, "seed": seed}
        )
        decision = policy.respond(request)
        out.turns += 1
        calls = [
            {"id": f"call_{turn}_{i}", "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for i, c in enumerate(decision.tool_calls)
        ]  # fmt: skip
        messages.append({"role": "assistant", "content": decision.content, **({"tool_calls": calls} if calls else {})})
        if not calls:
            break
        for call, planned in zip(calls, decision.tool_calls, strict=True):
            result = env.call(planned.name, planned.arguments)
            out.tool_calls += 1
            content = json.dumps(result.result) if result.ok else f"error: {result.error}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        if env.state.terminated:
            break
    out.recommended = env.state.recommended
    return out
