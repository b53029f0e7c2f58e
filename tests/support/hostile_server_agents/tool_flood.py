"""Hostile: tool calls past every bound: too many ids, a huge body, a huge answer, too
many calls, and calls after terminate."""

import json

import arena.sdk as sdk


def call(name, **arguments):
    try:
        sdk.tool(name, **arguments)
        return "ok"
    except sdk.ToolError as exc:
        return str(exc)[:60]


def agent_main(problem):
    spec = json.loads(problem["query"])
    print("IDS", call("view_product_information", product_ids=",".join(["1001"] * spec["ids"])))
    print("BODY", call("view_product_information", product_ids=",".join(["1001"] * 100_000)))
    print("ANSWER", call("view_product_information", product_ids=["1001", "1002", "3000"] * 6))
    hits = sdk.tool("find_product", q=spec.get("q", "widget gadget"), page=1)
    view = [str(h["product_id"]) for h in hits] * 10
    for _ in range(spec["calls"]):
        if "view_ids" in spec:  # the heaviest call the bounds allow, over and over
            call("view_product_information", product_ids=view[: spec["view_ids"]])
        else:
            call("find_product", q="widget gadget", page=1)
    print("TERMINATE", call("terminate", status="success"))
    after = [call("find_product", q="x" * size, page=1) for size in (1_000, 40_000) * 20]
    print("AFTER", sorted(set(after)))
