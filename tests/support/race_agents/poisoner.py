"""Race test agent: poisons its own record (a U+0000 in one tool argument, another argument nested
251 levels deep, a third 300 deep), then works like first_hit. PostgreSQL's JSONB refuses the NUL
(22P05); 251 levels pass the tool server's own JSON reply (its limit is 255) but not the store's
encoder once the record's own levels are added ("recursion limit"), on both backends. The same in a
model request the proxy records, and a NUL in its stdout."""

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
    # The same poison where the proxy records it (the agent's own request) and in its output tails.
    request = {"model": sdk.model(), "messages": [{"role": "user", "content": problem["query"] + "\u0000"}]}
    for extra in ({"metadata": nested(251)}, {"stop": ["\u0000"]}):
        try:
            sdk._request("POST", "/v1/chat/completions", {**request, **extra})
        except Exception:
            pass
    print("out\u0000put", flush=True)
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    if hits:
        sdk.tool("recommend_product", product_ids=str(hits[0]["product_id"]))
    sdk.tool("terminate", status="success" if hits else "failure")
