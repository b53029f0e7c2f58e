"""Reference agent: search loop (sub-task). Code drives; the LLM only answers yes/no.

The agent's own code runs a fixed loop: search the query, inspect the top
hits, and for each candidate ask the LLM one narrow question without tools
("Does this product match the request? Answer yes or no."). The first
"yes" is recommended (else the top hit).

Why it exists: it is the common first design, cheap and predictable, and it
shows what the arena does NOT reward. The LLM never chose an action, so its
trace is a "sub-task" trajectory: the corpus filter rejects it and the
reasoning judge sees little reasoning. It also cannot adapt: one item only,
no shop or budget reasoning, no web search. Compare with tool_calling.py.

Only ``arena.sdk`` and the standard library may be imported.
"""

import json
import re

import arena.sdk as sdk

CANDIDATES = 5
QUESTION = "Does this product match the request? Answer yes or no, then give one short reason."


def _request_text(query: str) -> str:
    # The voucher paragraph is arithmetic, not search words.
    return re.split(r"\bmy budget is\b", query, flags=re.IGNORECASE)[0].strip()


def _search(request: str) -> list:
    hits = sdk.tool("find_product", q=request, page=1)
    if not hits:  # a long request can match nothing useful: retry with its first words
        hits = sdk.tool("find_product", q=" ".join(request.split()[:6]), page=1)
    return hits or []


def _card(hit: dict, info: dict) -> str:
    record = {
        "product_id": hit.get("product_id"),
        "title": hit.get("title"),
        "price": hit.get("price"),
        "service": hit.get("service"),
        "attributes": info.get("attributes", {}),
        "sku_options": info.get("sku_options", {}),
        "short_description": (info.get("short_description") or "")[:300],
    }
    return json.dumps(record, ensure_ascii=False)


def agent_main(problem: dict) -> None:
    request = _request_text(problem["query"])
    hits = _search(request)[:CANDIDATES]
    if not hits:
        sdk.tool("terminate", status="failure")
        return
    ids = ",".join(str(h["product_id"]) for h in hits)
    details = {str(r["product_id"]): r for r in sdk.tool("view_product_information", product_ids=ids)}
    client = sdk.openai_client()
    model = sdk.model()
    chosen = hits[0]
    for hit in hits:
        prompt = f"Request: {request}\nProduct: {_card(hit, details.get(str(hit['product_id']), {}))}\n{QUESTION}"
        answer = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": prompt}], max_tokens=80, temperature=0
        )
        text = (answer.choices[0].message.content or "").strip().lower()
        if text.startswith("yes"):
            chosen = hit
            break
    sdk.tool("recommend_product", product_ids=str(chosen["product_id"]))
    sdk.tool("terminate", status="success")
