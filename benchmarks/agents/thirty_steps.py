"""Benchmark agent: 30 steps of (LLM call, the tool call it chose)."""

import json

import arena.sdk as sdk


def agent_main(problem):
    client = sdk.openai_client()
    messages = [{"role": "user", "content": problem["query"]}]
    for _ in range(30):
        reply = client.chat.completions.create(model=sdk.model(), messages=messages[-4:], tools=sdk.tool_schemas())
        call = reply.choices[0].message.tool_calls[0]
        sdk.tool(call.function.name, **json.loads(call.function.arguments))
    sdk.tool("terminate", status="success")
