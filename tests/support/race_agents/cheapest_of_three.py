"""Race test agent: looks at the first three hits and recommends the cheapest (no model calls)."""

import arena.sdk as sdk


def agent_main(problem):
    hits = sdk.tool("find_product", q=problem["query"], page=1)[:3]
    if not hits:
        sdk.tool("terminate", status="failure")
        return
    viewed = [sdk.tool("view_product_information", product_ids=str(h["product_id"]))[0] for h in hits]
    best = min(viewed, key=lambda p: float(p.get("price") or 0))
    sdk.tool("recommend_product", product_ids=str(best["product_id"]))
    sdk.tool("terminate", status="success")
