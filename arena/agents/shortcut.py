"""Reference agent: shortcut. The first search hit, with one line of reasoning.

It searches the raw query once, recommends the first hit and terminates; the
LLM is asked only for a one-sentence justification, so the trace shows
minimal reasoning. It is the floor every submission should beat: it ignores
prices, services, shops, budgets and multi-item requests, and the reasoning
judge scores it low.

Only ``arena.sdk`` and the standard library may be imported.
"""

import arena.sdk as sdk


def agent_main(problem: dict) -> None:
    hits = sdk.tool("find_product", q=problem["query"], page=1)
    if not hits:
        sdk.tool("terminate", status="failure")
        return
    first = hits[0]
    client = sdk.openai_client()
    client.chat.completions.create(
        model=sdk.model(),
        messages=[
            {
                "role": "user",
                "content": f"Request: {problem['query']}\nProduct: {first.get('title')} (id {first.get('product_id')},"
                f" price {first.get('price')})\nIn one sentence: why recommend this product?",
            }
        ],
        max_tokens=60,
    )
    sdk.tool("recommend_product", product_ids=str(first["product_id"]))
    sdk.tool("terminate", status="success")
