"""Reference agent: tool calling (agentic). The pattern the arena rewards and the corpus keeps.

The LLM drives the whole episode in ONE growing dialogue:

1. the dialogue starts with a system prompt and the user's query, and every
   request offers the problem's tools (``arena.sdk.tool_schemas()``);
2. each turn the LLM answers with reasoning text and tool calls; the agent
   executes exactly the calls the LLM emitted, nothing more, nothing less;
3. the assistant message (with its ``tool_calls``) is appended, then one
   ``tool`` message per call, carrying the call's ``tool_call_id`` and the
   JSON result (or the error text when the tool refused the call);
4. it stops when the LLM calls ``terminate``, stops calling tools, or hits
   the step cap.

Why this shape: a trajectory where the model itself chose every action, with
the results it saw in context, is what post-training learns from. Code that
searches on the model's behalf produces "sub-task" traces the corpus filter
drops (see search_loop.py). Improve this agent by improving the prompt, the
model, or what you do with errors, not by taking decisions away from the LLM.

Only ``arena.sdk`` and the standard library may be imported.
"""

import json

import arena.sdk as sdk

MAX_STEPS = 16  # LLM turns; the validator also enforces its own call and token budgets

SYSTEM_PROMPT = (
    "You are a careful shopping assistant for an online marketplace (prices in PHP). "
    "Find the product(s) the user asks for with the tools. Search with the item's key words and use the "
    "price and service filters for stated constraints; inspect promising candidates with "
    "view_product_information; compare them against every constraint and say why you prefer one. "
    "When the user wants several items from one shop, search inside a shop with shop_id. When there is a "
    "budget and a voucher, make sure the basket fits. For questions that need outside knowledge, use "
    "web_search first. Finish with recommend_product (ids in the order the user asked for them, comma "
    "separated), then terminate."
)


def _assistant_message(message) -> dict:
    """The assistant turn as it goes back into the dialogue, tool calls included."""
    entry = {"role": "assistant", "content": message.content or ""}
    calls = message.tool_calls or []
    if calls:
        entry["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in calls
        ]
    return entry


def _execute(name: str, raw_arguments: str) -> tuple[str, bool]:
    """Run one tool call; returns the tool message content and whether it succeeded."""
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"error: the arguments are not valid JSON ({exc})", False
    if not isinstance(arguments, dict):
        return "error: the arguments must be a JSON object", False
    try:
        result = sdk.tool(name, **arguments)
    except sdk.ToolError as exc:
        return f"error: {exc}", False
    return json.dumps(result, ensure_ascii=False), True


def agent_main(problem: dict) -> None:
    client = sdk.openai_client()
    model = sdk.model()
    tools = sdk.tool_schemas()
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": problem["query"]},
    ]
    for _ in range(MAX_STEPS):
        response = client.chat.completions.create(model=model, messages=messages, tools=tools)
        message = response.choices[0].message
        messages.append(_assistant_message(message))
        if not message.tool_calls:
            return  # the model answered in plain text: there is nothing to execute
        finished = False
        for call in message.tool_calls:
            content, ok = _execute(call.function.name, call.function.arguments)
            # One tool message per call, in order, even after terminate: the dialogue must stay well-formed.
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            finished = finished or (ok and call.function.name == "terminate")
        if finished:
            return
