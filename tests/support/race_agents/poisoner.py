"""Race test agent: poisons its own record (a U+0000 in one tool argument, another argument nested
251 levels deep, a third 300 deep), then works like first_hit. PostgreSQL's JSONB refuses the NUL
(22P05); 251 levels pass the tool server's own JSON reply (its limit is 255) but not the store's
encoder once the record's own levels are added ("recursion limit"), on both backends."""

import arena.sdk as sdk


def agent_main(problem):
    def nested(levels):
        deep = "bottom"
        for _ in range(levels):
            deep = {"d": deep}
        return deep

    try:
        sdk.tool("find_product", q=problem["query"] + "\u0000", page=1)
    except Exception:
        pass
    for levels in (251, 300):
        try:
            sdk.tool("find_product", q=problem["query"], page=1, filters=nested(levels))
        except Exception:
            pass
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    if hits:
        sdk.tool("recommend_product", product_ids=str(hits[0]["product_id"]))
    sdk.tool("terminate", status="success" if hits else "failure")
