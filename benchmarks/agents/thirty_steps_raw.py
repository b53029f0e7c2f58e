"""Benchmark agent: 30 steps of (LLM call, the tool call it chose), speaking HTTP to the
proxy with the standard library, so the time measured is the runner's, not the openai SDK's."""

import json

import arena.sdk as sdk


def agent_main(problem):
    messages = [{"role": "user", "content": problem["query"]}]
    tools = sdk.tool_schemas()
    for _ in range(30):
        reply = sdk._request(
            "POST", "/v1/chat/completions", {"model": sdk.model(), "messages": messages[-4:], "tools": tools}
        )
        call = reply["choices"][0]["message"]["tool_calls"][0]
        sdk.tool(call["function"]["name"], **json.loads(call["function"]["arguments"]))
    sdk.tool("terminate", status="success")
