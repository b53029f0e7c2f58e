"""Talks to the model through the proxy with the real openai client, plain and streaming."""

import json

import arena.sdk as sdk


def agent_main(problem):
    client = sdk.openai_client()
    messages = [{"role": "user", "content": problem["query"]}]
    first = client.chat.completions.create(model=sdk.model(), messages=messages, tools=sdk.tool_schemas())
    call = first.choices[0].message.tool_calls[0]
    print("FIRST", call.function.name, first.usage.completion_tokens)
    result = sdk.tool(call.function.name, **json.loads(call.function.arguments))
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}]  # fmt: skip
    stream = client.chat.completions.create(model=sdk.model(), messages=messages, tools=sdk.tool_schemas(), stream=True)
    names = set()
    for chunk in stream:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                if delta.function and delta.function.name:
                    names.add(delta.function.name)
    print("STREAMED", sorted(names))
    hits = sdk.tool("find_product", q="widget", page=1)
    sdk.tool("recommend_product", product_ids=hits[0]["product_id"])
    sdk.tool("terminate", status="success")
