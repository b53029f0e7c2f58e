"""Race test agent: recommends the first search hit without asking the model (judge level 0)."""

import arena.sdk as sdk


def agent_main(problem):
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    if hits:
        sdk.tool("recommend_product", product_ids=str(hits[0]["product_id"]))
    sdk.tool("terminate", status="success" if hits else "failure")
