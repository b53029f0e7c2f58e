"""Race test agent: the tool-calling dialogue of arena/agents/tool_calling.py, over the standard library.

The model drives every tool call in one growing dialogue, as the reference agent does, but the
inference proxy is reached with the SDK's own socket client instead of the openai package, so an
episode costs about a second instead of the openai import (the race tests run dozens of them).
"""

import json

import arena.sdk as sdk

SYSTEM = (
    "You are a careful shopping assistant. Find the product the user asks for with the tools, compare the "
    "candidates against every constraint, recommend the best one with recommend_product, then terminate."
)


def agent_main(problem):
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": problem["query"]}]
    for _ in range(12):
        body = {"model": sdk.model(), "messages": messages, "tools": sdk.tool_schemas()}
        answer = sdk._request("POST", "/v1/chat/completions", body)
        message = answer["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        turn = {"role": "assistant", "content": message.get("content") or ""}
        if calls:
            turn["tool_calls"] = calls
        messages.append(turn)
        if not calls:
            return
        finished = False
        for call in calls:
            name, raw = call["function"]["name"], call["function"]["arguments"] or "{}"
            try:
                content, ok = json.dumps(sdk.tool(name, **json.loads(raw))), True
            except sdk.ToolError as exc:
                content, ok = f"error: {exc}", False
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            finished = finished or (ok and name == "terminate")
        if finished:
            return
