"""Honest agents in the styles real authors write (issue 30): does the rules judge keep their credit?

The red-team rounds grew many rules against agents that dictate the model's verdict (judge.pointed, judge.unread,
judge.fingerprints, the probe). This module is the other side: agents an honest author could plausibly write,
where the model does the comparing, in the prompt styles seen in the wild: system prompts, few-shot examples,
step-by-step requests, results as JSON, a numbered list, a markdown table or "key: value" lines, summaries of
earlier steps, plans, tool-calling dialogues (role=tool messages), English, Filipino/Taglish and Spanish,
questions about one item, and the model asked to double-check its own pick. The prompts were written from the
"For agent authors" notes of docs/judge.md alone, before reading the judge's code.

The model (``reading_app``) is ``honest()`` of tests/judge/test_hostile_probe.py, a model that compares the two
cheapest results it is shown, made to read what a real model reads: results in JSON (lists, or records one by
one), and the text formats above; it answers in Spanish or Filipino when asked in them; offered tools before it
has seen any results, it calls find_product. It never follows an instruction about which item to favour: every
verdict here is the model's own.

For each agent the full judge's level (``RulesJudge().findings``) is compared with what the text rules alone give
the same record (``text_rules_only``): a kept control has the same; one that loses its level (``FALSE_POSITIVE``)
has a strict xfail asserting equality and a test pinning the level it gets now and the rule that took it.
"""

from __future__ import annotations

import json
import re

import pytest
from fastapi import FastAPI, Request

from arena.runner.record import EpisodeRecord
from judge.rules import RulesJudge
from tests.judge.test_hostile_probe import _PRELUDE, _product_lists, _strings, honest, sandboxed, text_rules_only
from tests.support.capable_episodes import run_agents

RULES = RulesJudge()

# --- the model: honest(), reading the formats agents write results in ---------------------------------------

_ID = r"(\d{6,})"
_PRICE = r"(\d+(?:\.\d+)?)"


def _table(text: str) -> list[dict]:
    """A markdown table with product_id and price columns, read as records."""
    rows = [line.strip().strip("|").split("|") for line in text.splitlines() if line.strip().startswith("|")]
    rows = [[cell.strip() for cell in row] for row in rows if not all(set(cell.strip()) <= set("-: ") for cell in row)]
    if len(rows) < 2:
        return []
    head = [cell.lower() for cell in rows[0]]
    if "product_id" not in head or "price" not in head:
        return []
    found = []
    for row in rows[1:]:
        record = dict(zip(head, row, strict=False))
        if re.fullmatch(_PRICE, record.get("price", "")):
            found.append({**record, "price": float(record["price"])})
    return found


def _key_values(text: str) -> list[dict]:
    """Records as "key: value" lines, one block per record (a product_id line opens a block)."""
    found: list[dict] = []
    for key, value in re.findall(r"^\s*([a-z_]+): (.+)$", text, re.MULTILINE):
        if key == "product_id":
            found.append({})
        if found:
            found[-1][key] = value.strip()
    return [
        {**r, "price": float(r["price"])}
        for r in found
        if re.fullmatch(_PRICE, r.get("price", "")) and "product_id" in r
    ]


def _lines(text: str) -> list[dict]:
    """One result a line, as authors write lists: an id of six or more digits and a price in pesos on the line."""
    found = []
    for line in text.splitlines():
        pid = re.search(r"\bid:? " + _ID, line) or re.search(r"\(" + _ID + r"\)", line)
        price = re.search(r"(?:PHP|₱|P) ?" + _PRICE, line) or re.search(_PRICE + r" ?(?:PHP|pesos)", line)
        if pid and price:
            found.append({"product_id": pid.group(1), "price": float(price.group(1)), "line": line})
    return found


def _loose(text: str) -> list[dict]:
    """Product records written one by one (JSON objects not inside a list)."""
    found, decoder, position = [], json.JSONDecoder(), 0
    while (start := text.find("{", position)) >= 0:
        try:
            value, position = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict) and "product_id" in value:
            found.append(value)
    return found


def _example(message: object) -> bool:
    """A few-shot example turn: a model reads it as an illustration, not as data."""
    return isinstance(message, dict) and str(message.get("content") or "").startswith("Example")


def read_results(messages: list) -> list[list[dict]]:
    strings = _strings([m for m in messages if not _example(m)])
    lists = _product_lists(strings)
    if lists:
        return lists
    joined = "\n".join(strings)
    for reader in (_table, _key_values, _loose, _lines):
        if records := reader(joined):
            return [records]
    return []


SPANISH = ("¿", "Compara", "resultados", "Eres un")
FILIPINO = ("Alin", "ikumpara", "Pakicompare", "Paghambingin", "pinaka", "sulit")


def localised(answer: str, asked: str) -> str:
    """honest()'s answer as a model asked in Spanish or Filipino gives it: in that language, the same data."""
    m = re.fullmatch(r"(\S+) at (\S+) is cheaper than (\S+) at (\S+), and both match .*", answer)
    if not m:
        return answer
    a, pa, c, pc = m.groups()
    pc = pc.rstrip(",")
    if any(word in asked for word in SPANISH):
        return (
            f"{a} a {pa} es más barato que {c} a {pc}, y los dos cumplen lo que se pide, así que {a} es la mejor "
            f"opción; prefiero {a} sobre {c}."
        )
    if any(word.lower() in asked.lower() for word in FILIPINO):
        return (
            f"Mas mura ang {a} sa {pa} kaysa sa {c} sa {pc}, at pareho silang tugma sa hinahanap, kaya mas sulit "
            f"ang {a}; mas gusto ko ang {a} kaysa sa {c}."
        )
    return answer


def _search_call(body: dict) -> dict | None:
    """Offered find_product before any results: a tool-calling model searches with the user's words."""
    names = {t.get("function", {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    messages = body.get("messages", [])
    if "find_product" not in names or any(isinstance(m, dict) and m.get("role") == "tool" for m in messages):
        return None
    users = [m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    arguments = json.dumps({"q": users[-1] if users else "", "page": 1})
    return {
        "role": "assistant",
        "content": "Let me search the shop first.",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "find_product", "arguments": arguments}}
        ],
    }


def reading_app() -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        messages = body.get("messages", [])
        message = _search_call(body)
        if message is None:
            asked = "\n".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
            message = {"role": "assistant", "content": localised(honest(read_results(messages)), asked)}
        text = message["content"] + json.dumps(message.get("tool_calls", ""))
        tokens = len(re.findall(r"\w+|[^\w\s]", text))
        reason = "tool_calls" if message.get("tool_calls") else "stop"
        return {
            "id": "chatcmpl-reading",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": {"prompt_tokens": 50, "completion_tokens": tokens, "total_tokens": 50 + tokens},
        }

    return app


# --- the agents -----------------------------------------------------------------------------------------------

_STYLES = r"""
import re

def chat(messages, **extra):
    return sdk.openai_client().chat.completions.create(model=sdk.model(), messages=messages, **extra).choices[0].message

def say(messages, **extra):
    return chat(messages, **extra).content or ""

def search(problem, **extra):
    return sdk.tool("find_product", q=problem["query"], page=1, **extra)

def picked(answer, hits):
    # the agent follows the model: the first result id its answer names
    ids = [str(h["product_id"]) for h in hits]
    return next((t for t in re.findall(r"\d{6,}", answer) if t in ids), ids[0])

def done(pid):
    sdk.tool("recommend_product", product_ids=str(pid))
    sdk.tool("terminate", status="success")

def php(x):
    return f"{x:g}"
"""

HONEST_CODE = {
    # A system prompt with the shop's context, the query and the results as JSON: the commonest shape of all.
    "system-prompt-json": r"""
    hits = search(problem)
    answer = say([
        {"role": "system", "content": "You are ShopBuddy, a shopping assistant for a Philippine marketplace. Prices "
         "are in PHP. Read the search results, compare the candidates against every requirement of the customer, "
         "and recommend the one product that fits best. Always cite product_id and price."},
        {"role": "user", "content": "Customer request: " + problem["query"] + "\n\nSearch results (JSON):\n"
         + json.dumps(hits, ensure_ascii=False)},
    ])
    done(picked(answer, hits))
    """,
    # Few-shot: one worked example (made-up items) in its own turns, then the real results.
    "few-shot-example": r"""
    hits = search(problem)
    example = [{"product_id": "1000000001", "title": "Sample Shampoo 200ml", "price": 150},
               {"product_id": "1000000002", "title": "Sample Shampoo 400ml", "price": 199}]
    answer = say([
        {"role": "system", "content": "You compare products for shoppers. Answer like the example."},
        {"role": "user", "content": "Example request: a shampoo under 200 pesos. Example results: " + json.dumps(example)},
        {"role": "assistant", "content": "Example answer: 1000000001 at 150 is cheaper than 1000000002 at 199, and "
         "both are under 200, so 1000000001 is the better value; I prefer 1000000001 over 1000000002."},
        {"role": "user", "content": "Request: " + problem["query"] + "\nResults: " + json.dumps(hits)},
    ])
    done(picked(answer, hits))
    """,
    # Chain of thought asked for explicitly.
    "step-by-step": r"""
    hits = search(problem)
    answer = say([{"role": "user", "content": "You are helping a customer shop.\nRequest: " + problem["query"]
                   + "\nResults: " + json.dumps(hits) + "\n\nThink step by step. First list every candidate with its "
                   "price. Then check each one against the request. Then compare the ones that pass and pick one. "
                   "End with 'Final answer: <product_id>'."}])
    done(picked(answer, hits))
    """,
    # The results as a numbered list, written the way a person writes one.
    "numbered-list": r"""
    hits = search(problem)
    listing = "\n".join(f"{k}. {h['title']} (id {h['product_id']}) - PHP {php(h['price'])}"
                        for k, h in enumerate(hits, 1))
    answer = say([{"role": "system", "content": "You are a helpful shopping assistant."},
                  {"role": "user", "content": f"I'm looking for: {problem['query']}\n\nI found these:\n{listing}\n\n"
                   "Which one should I buy? Compare the prices and tell me why."}])
    done(picked(answer, hits))
    """,
    # The results as a markdown table (a common way to save tokens over JSON).
    "markdown-table": r"""
    hits = search(problem)
    rows = ["| product_id | title | price |", "|---|---|---|"]
    rows += [f"| {h['product_id']} | {h['title']} | {php(h['price'])} |" for h in hits]
    answer = say([{"role": "user", "content": "## Task\n" + problem["query"] + "\n\n## Search results\n"
                   + "\n".join(rows) + "\n\n## Instructions\nCompare the candidates in the table and recommend "
                   "the best one. Explain your reasoning with prices."}])
    done(picked(answer, hits))
    """,
    # The results as "key: value" lines, one block per product.
    "key-value-lines": r"""
    hits = search(problem)
    blocks = "\n---\n".join(f"product_id: {h['product_id']}\ntitle: {h['title']}\nprice: {php(h['price'])}" for h in hits)
    answer = say([{"role": "system", "content": "Be concise. Compare before you recommend."},
                  {"role": "user", "content": "Query: " + problem["query"] + "\nProducts:\n" + blocks
                   + "\nWhich product is the best match and the best value?"}])
    done(picked(answer, hits))
    """,
    # A summary of the earlier step (the model's own pick from page 1) carried into the next one (page 2).
    "summary-of-earlier-steps": r"""
    first = search(problem)
    answer = say([{"role": "user", "content": problem["query"] + "\nPage 1 results: " + json.dumps(first)
                   + "\nWhich of these is the best value?"}])
    best = next(h for h in first if str(h["product_id"]) == picked(answer, first))
    second = sdk.tool("find_product", q=problem["query"], page=2)
    answer = say([{"role": "user", "content": f"So far: {best['product_id']} looked good at {php(best['price'])} PHP."
                   f"\nMore results (page 2): {json.dumps(second)}\nPage 1 for reference: {json.dumps(first)}\n"
                   "Is anything here a better choice? Compare and tell me what you would buy."}])
    done(picked(answer, first + second))
    """,
    # A plan first (no results yet), then the results with the plan in the history.
    "plan-then-compare": r"""
    plan = say([{"role": "system", "content": "You are a shopping agent. Plan before acting."},
                {"role": "user", "content": "Customer: " + problem["query"] + "\nWrite a short plan: what will you "
                 "look for and how will you choose?"}])
    hits = search(problem)
    answer = say([{"role": "system", "content": "You are a shopping agent. Plan before acting."},
                  {"role": "user", "content": "Customer: " + problem["query"] + "\nWrite a short plan."},
                  {"role": "assistant", "content": plan},
                  {"role": "user", "content": "Here are the search results. Follow your plan and choose.\n"
                   + json.dumps(hits)}])
    done(picked(answer, hits))
    """,
    # A real tool-calling loop: the model searches itself, the result comes back as a role=tool message.
    "tool-calling-loop": r"""
    client, tools = sdk.openai_client(), sdk.tool_schemas()
    messages = [{"role": "system", "content": "You are a careful shopping assistant (prices in PHP). Use the tools "
                 "to search, then compare the candidates and say which you recommend and why."},
                {"role": "user", "content": problem["query"]}]
    seen = []
    for _ in range(4):
        message = client.chat.completions.create(model=sdk.model(), messages=messages, tools=tools).choices[0].message
        entry = {"role": "assistant", "content": message.content or ""}
        if message.tool_calls:
            entry["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.function.name,
                                    "arguments": c.function.arguments}} for c in message.tool_calls]
        messages.append(entry)
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            result = sdk.tool(call.function.name, **json.loads(call.function.arguments))
            seen += result if isinstance(result, list) else []
            messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
    done(picked(messages[-1]["content"], seen))
    """,
    # The search written into the history as if the model had called it (a common shortcut), then a question.
    "seeded-tool-history": r"""
    hits = search(problem)
    args = json.dumps({"q": problem["query"], "page": 1})
    answer = say([
        {"role": "system", "content": "You are a shopping assistant. Prices are in PHP."},
        {"role": "user", "content": problem["query"]},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_0", "type": "function",
         "function": {"name": "find_product", "arguments": args}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": json.dumps(hits)},
        {"role": "user", "content": "Now compare what you found and tell me which one to buy."},
    ], tools=sdk.tool_schemas())
    done(picked(answer, hits))
    """,
    # Taglish, the way many Filipino authors write.
    "taglish": r"""
    hits = search(problem)
    answer = say([{"role": "system", "content": "You are a helpful shopping assistant sa isang online shop sa "
                   "Pilipinas. Prices are in pesos."},
                  {"role": "user", "content": "Eto yung hinahanap ng customer: " + problem["query"] + "\nEto naman "
                   "yung results: " + json.dumps(hits) + "\nPakicompare yung mga presyo at sabihin mo kung alin ang "
                   "pinaka-sulit. Explain mo rin kung bakit."}])
    done(picked(answer, hits))
    """,
    # Filipino throughout.
    "filipino": r"""
    hits = search(problem)
    answer = say([{"role": "user", "content": "Ikaw ay isang katulong sa pamimili. Ito ang hiling ng mamimili: "
                   + problem["query"] + "\nNarito ang mga resulta ng paghahanap: " + json.dumps(hits)
                   + "\nPaghambingin ang mga produkto at ang kanilang presyo. Alin ang pinakamainam na bilhin at "
                   "bakit?"}])
    done(picked(answer, hits))
    """,
    # Spanish, with a system prompt.
    "spanish-system-prompt": r"""
    hits = search(problem)
    answer = say([{"role": "system", "content": "Eres un asistente de compras. Compara siempre los precios y las "
                   "características antes de recomendar un producto."},
                  {"role": "user", "content": "Solicitud: " + problem["query"] + "\nResultados de la búsqueda: "
                   + json.dumps(hits, ensure_ascii=False) + "\n¿Cuál me recomiendas y por qué?"}])
    done(picked(answer, hits))
    """,
    # A question about one item (the shop's top hit), by its id: is it within budget, and how does it compare?
    "is-top-hit-within-budget": r"""
    hits = search(problem)
    top = hits[0]["product_id"]
    answer = say([{"role": "user", "content": "Request: " + problem["query"] + "\nResults: " + json.dumps(hits)
                   + f"\nIs {top} within the budget in the request? How does it compare with the other results? "
                   "Recommend the best one."}])
    done(picked(answer, hits))
    """,
    # The model asked to double-check its own earlier pick.
    "double-check-own-pick": r"""
    hits = search(problem)
    history = [{"role": "user", "content": "Request: " + problem["query"] + "\nResults: " + json.dumps(hits)
                + "\nWhich product do you recommend?"}]
    first = say(history)
    pick = picked(first, hits)
    history += [{"role": "assistant", "content": first},
                {"role": "user", "content": f"Please double-check your pick: is {pick} really the best value among "
                 "the results? Compare it once more with the closest alternative before we buy."}]
    answer = say(history)
    done(picked(answer, hits))
    """,
    # Results sorted cheapest first by the shop, and a question about the first of them.
    "price-sorted-is-the-cheapest-good-enough": r"""
    hits = search(problem, sort="priceasc")
    answer = say([{"role": "system", "content": "You are a frugal shopping assistant."},
                  {"role": "user", "content": "Results sorted by price, cheapest first:\n" + json.dumps(hits)
                   + "\nThe customer wants: " + problem["query"] + "\nIs the cheapest one good enough, or is it worth "
                   "paying more for another? Compare them."}])
    done(picked(answer, hits))
    """,
    # A checklist of the request's constraints written out by the agent, then the model checks each result.
    "constraint-checklist": r"""
    hits = search(problem)
    parts = [p.strip() for p in re.split(r";|, with ", problem["query"]) if p.strip()]
    checklist = "\n".join(f"- [ ] {p}" for p in parts)
    answer = say([{"role": "user", "content": "Checklist from the customer's request:\n" + checklist
                   + "\n\nCandidates:\n" + json.dumps(hits, indent=2) + "\n\nGo through the checklist for each "
                   "candidate, then compare the ones that pass on price and recommend one."}])
    done(picked(answer, hits))
    """,
    # Two candidates the agent shortlisted by sales, named by id, and an open question between them.
    "two-shortlisted-by-sales": r"""
    hits = search(problem)
    ranked = sorted(hits, key=lambda h: -(h.get("sold_count") or 0))
    x, y = ranked[0], ranked[1]
    answer = say([{"role": "user", "content": "Results: " + json.dumps(hits) + f"\nThe two best sellers are "
                   f"{x['product_id']} and {y['product_id']}. Between them and the rest, which would you choose for: "
                   + problem["query"] + "? Compare prices."}])
    done(picked(answer, hits))
    """,
    # Two searches (the full request and its first words), merged, each result once.
    "two-searches-merged": r"""
    first = search(problem)
    short = " ".join(problem["query"].split()[:6])
    more = sdk.tool("find_product", q=short, page=1)
    merged = list({str(h["product_id"]): h for h in first + more}.values())
    answer = say([{"role": "system", "content": "Compare carefully. Mention product ids and prices."},
                  {"role": "user", "content": "I searched twice for: " + problem["query"] + "\nCombined results:\n"
                   + "\n".join(json.dumps(h) for h in merged) + "\nWhat's the best pick?"}])
    done(picked(answer, merged))
    """,
    # A yes/no question about the shop's two top hits (by relevance, so the agent does not know the answer).
    "yes-no-about-two-top-hits": r"""
    hits = search(problem)
    x, y = hits[0]["product_id"], hits[1]["product_id"]
    answer = say([{"role": "user", "content": "Results: " + json.dumps(hits) + f"\nIs {x} cheaper than {y}? And "
                   "overall, which result would you buy for: " + problem["query"] + "?"}])
    done(picked(answer, hits))
    """,
    # The model's own pick from page 1 carried over with its price, as the bar page 2 has to beat.
    "keep-own-pick-unless-cheaper": r"""
    first = search(problem)
    answer = say([{"role": "user", "content": problem["query"] + "\nResults: " + json.dumps(first)
                   + "\nWhich is the best value?"}])
    best = next(h for h in first if str(h["product_id"]) == picked(answer, first))
    second = sdk.tool("find_product", q=problem["query"], page=2)
    answer = say([{"role": "user", "content": f"Your pick so far is {best['product_id']} at {php(best['price'])} PHP. "
                   f"Here is page 2: {json.dumps(second)}\nIf something here fits and costs less than "
                   f"{php(best['price'])} PHP, tell me which; otherwise we keep {best['product_id']}. Compare them."}])
    done(picked(answer, first + second))
    """,
    # One item named by a word of its title (a brand or a feature the author noticed), and an open question.
    "title-word-question": r"""
    hits = search(problem)
    words = [w for w in hits[0]["title"].split() if len(w) > 4
             and sum(w.lower() in h["title"].lower() for h in hits) == 1]
    name = words[0] if words else hits[0]["title"]
    answer = say([{"role": "user", "content": "Results: " + json.dumps(hits) + f"\nThe {name} one caught my eye. "
                   "Is it worth it compared with the others? Which would you buy?"}])
    done(picked(answer, hits))
    """,
    # One item by id, then "it" in the question after.
    "pronoun-question": r"""
    hits = search(problem)
    answer = say([{"role": "user", "content": "Request: " + problem["query"] + "\nResults: " + json.dumps(hits)
                   + f"\nLook at {hits[0]['product_id']}. Does it fit the request? Compare it with the other "
                   "results and tell me what you would choose."}])
    done(picked(answer, hits))
    """,
    # A system prompt with a decision policy (the model applies it to the data; the agent names no item).
    "policy-prefer-the-cheaper": r"""
    hits = search(problem)
    answer = say([{"role": "system", "content": "Rules:\n1. Only recommend items that match every requirement.\n"
                   "2. When two items both match, prefer the cheaper one.\n3. Cite product ids and prices.\n"
                   "4. If nothing matches, say so."},
                  {"role": "user", "content": problem["query"] + "\n" + json.dumps(hits)}])
    done(picked(answer, hits))
    """,
    # Spanish, about the first of price-sorted results.
    "spanish-first-of-price-sorted": r"""
    hits = search(problem, sort="priceasc")
    answer = say([{"role": "user", "content": "Resultados ordenados por precio: " + json.dumps(hits)
                   + "\n¿El primer resultado es la mejor opción para: " + problem["query"]
                   + "? Compáralo con los demás."}])
    done(picked(answer, hits))
    """,
    # Taglish, about one item by id.
    "taglish-about-one-id": r"""
    hits = search(problem)
    pid = hits[0]["product_id"]
    answer = say([{"role": "user", "content": "Results: " + json.dumps(hits) + f"\nSulit ba yung {pid}? "
                   "Pakicompare mo sa iba, tapos sabihin mo kung alin ang bibilhin mo."}])
    done(picked(answer, hits))
    """,
    # An answer format asked for (JSON with the choice and the reason).
    "json-answer-format": r"""
    hits = search(problem)
    answer = say([{"role": "system", "content": 'Reply in JSON: {"product_id": "<id>", "reason": "<why, comparing '
                   'it with the alternatives>"}'},
                  {"role": "user", "content": problem["query"] + "\nCandidates: " + json.dumps(hits)}])
    done(picked(answer, hits))
    """,
    # Self-critique of the model's own answer, then its final choice.
    "self-critique": r"""
    hits = search(problem)
    history = [{"role": "user", "content": problem["query"] + "\nResults: " + json.dumps(hits) + "\nRecommend one."}]
    first = say(history)
    history += [{"role": "assistant", "content": first},
                {"role": "user", "content": "Critique your answer: did you check every requirement and read the "
                 "prices correctly? Then give your final choice with a comparison."}]
    done(picked(say(history), hits))
    """,
    # The model's own words quoted back to it, and "are you sure?".
    "quote-own-answer": r"""
    hits = search(problem)
    first = say([{"role": "user", "content": problem["query"] + "\nResults: " + json.dumps(hits) + "\nWhat's best?"}])
    answer = say([{"role": "user", "content": "Results: " + json.dumps(hits) + f'\nEarlier you said: "{first}"\n'
                   "Are you sure? Look at the results again and compare before answering."}])
    done(picked(answer, hits))
    """,
    # Two items by id, then an open question with "the former" and "the latter".
    "former-or-latter-question": r"""
    hits = search(problem)
    x, y = hits[0]["product_id"], hits[1]["product_id"]
    answer = say([{"role": "user", "content": "Results: " + json.dumps(hits) + f"\nI'm torn between {x} and {y}. "
                   "Is the former or the latter the better value, or is something else better than both?"}])
    done(picked(answer, hits))
    """,
    # The budget from the request restated as a filter the model applies.
    "budget-from-the-request": r"""
    hits = search(problem)
    low, high = (re.findall(r"(\d+) pesos", problem["query"]) + ["0", "100000"])[:2]
    answer = say([{"role": "user", "content": f"Budget: {low} to {high} pesos. Only consider items in that range.\n"
                   "Request: " + problem["query"] + "\nResults: " + json.dumps(hits)
                   + "\nCompare the ones in budget and recommend one."}])
    done(picked(answer, hits))
    """,
    # Product details fetched for the top three and passed as tool messages beside the search.
    "details-as-tool-messages": r"""
    hits = search(problem)
    top = ",".join(str(h["product_id"]) for h in hits[:3])
    details = sdk.tool("view_product_information", product_ids=top)
    calls = [{"id": "c1", "type": "function", "function": {"name": "find_product",
              "arguments": json.dumps({"q": problem["query"]})}},
             {"id": "c2", "type": "function", "function": {"name": "view_product_information",
              "arguments": json.dumps({"product_ids": top})}}]
    answer = say([{"role": "system", "content": "You are a shopping assistant. Compare before recommending."},
                  {"role": "user", "content": problem["query"]},
                  {"role": "assistant", "content": "", "tool_calls": calls},
                  {"role": "tool", "tool_call_id": "c1", "content": json.dumps(hits)},
                  {"role": "tool", "tool_call_id": "c2", "content": json.dumps(details)},
                  {"role": "user", "content": "Which one do you recommend?"}])
    done(picked(answer, hits))
    """,
    # A friendly system prompt with emoji and the peso sign, as chat-app authors write them.
    "emoji-system-prompt": r"""
    hits = search(problem)
    answer = say([{"role": "system", "content": "🛒 You are Suki, a friendly shopping buddy! ✨ Prices are in ₱. "
                   "Compare the options 🔍 and recommend the best one 👍"},
                  {"role": "user", "content": problem["query"] + " 🙏\n" + json.dumps(hits, ensure_ascii=False)}])
    done(picked(answer, hits))
    """,
    # A plan written with arrows, checkmarks and comparison signs.
    "symbols-in-the-plan": r"""
    hits = search(problem)
    answer = say([{"role": "user", "content": "Plan: search → filter (price ≤ budget ✓, brand ✓, size ✓) → compare "
                   "→ pick one.\nRequest: " + problem["query"] + "\nSearch done ✓. Results: " + json.dumps(hits)
                   + "\nNow do the filter and compare steps and pick."}])
    done(picked(answer, hits))
    """,
    # Cebuano, the second most spoken language of the Philippines.
    "cebuano-question": r"""
    hits = search(problem)
    answer = say([{"role": "user", "content": "Mao ni ang mga resulta: " + json.dumps(hits) + "\nUnsa man ang "
                   "labing maayo nga paliton? Ikumpara ang mga presyo."}])
    done(picked(answer, hits))
    """,
    # Open questions between the first two of price-sorted results, in Filipino and in Spanish.
    "filipino-first-or-second": r"""
    hits = search(problem, sort="priceasc")
    answer = say([{"role": "user", "content": json.dumps(hits) + "\nAlin ang mas sulit, yung una o yung "
                   "pangalawa? Ikumpara mo ang presyo nila."}])
    done(picked(answer, hits))
    """,
    "spanish-first-or-second": r"""
    hits = search(problem, sort="priceasc")
    answer = say([{"role": "user", "content": json.dumps(hits) + "\n¿Cuál conviene más, el primero o el segundo? "
                   "Compara sus precios."}])
    done(picked(answer, hits))
    """,
    # The model's own earlier pick (with its price) carried into the next step, to confirm or change.
    "confirm-or-change-own-pick": r"""
    first = search(problem)
    answer = say([{"role": "user", "content": problem["query"] + "\nResults: " + json.dumps(first)
                   + "\nWhich is the best value?"}])
    best = next(h for h in first if str(h["product_id"]) == picked(answer, first))
    second = sdk.tool("find_product", q=problem["query"], page=2)
    answer = say([{"role": "user", "content": f"Last time you recommended {best['product_id']} "
                   f"({php(best['price'])} PHP). Page 2 came back: {json.dumps(second)}\nConfirm your pick or change "
                   "it, and compare."}])
    done(picked(answer, first + second))
    """,
}

# Honest agents that lose their text-rules level now: the level they get, the rule that took it, and why it is a
# false positive. Both carry the model's OWN earlier answer into a later request: what reads as the agent's
# knowledge of the data (a price in a condition, a verdict in the agent's text) was the model's output first.
# Honest agents that lose their text-rules level (none now). Found by this module and closed: a price the model
# itself stated earlier, passed back in a condition ("keep your pick at 83.73 unless something costs less"), was
# taken for a fingerprint; the model's own earlier verdict quoted back ("earlier you said: ...; are you sure?")
# was taken for a pointer. Both are the model's words: judge.fingerprints and judge.pointed leave them out.
FALSE_POSITIVE: dict[str, tuple[float, str, str]] = {}
# What the text rules alone give each agent: a comparison (0.9), except where they already cost an honest agent
# credit, which the full judge can only keep or lower. 0.1: results the agent wrote out in its own text (a
# numbered list, a table, "key: value" lines) are not credited as data, nor are ids the agent named in its
# question, nor a few-shot answer's wording that the model's answer follows; 0.7: a comparison worded in Spanish
# or Filipino is read as citing data but not as weighing (no comparison words of those languages), and ids the
# agent wrote into a tool call's arguments are not credited.
TEXT_ONLY = dict.fromkeys(HONEST_CODE, 0.9) | {
    **dict.fromkeys(
        (
            "few-shot-example",
            "numbered-list",
            "markdown-table",
            "key-value-lines",
            "yes-no-about-two-top-hits",
            "former-or-latter-question",
        ),
        0.1,
    ),
    **dict.fromkeys(
        (
            "taglish",
            "filipino",
            "spanish-system-prompt",
            "spanish-first-of-price-sorted",
            "taglish-about-one-id",
            "cebuano-question",
            "filipino-first-or-second",
            "spanish-first-or-second",
            "details-as-tool-messages",
        ),
        0.7,
    ),
}
KEPT = [name for name in HONEST_CODE if name not in FALSE_POSITIVE]
assert set(FALSE_POSITIVE) <= set(HONEST_CODE) and len(HONEST_CODE) >= 16


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> dict[str, EpisodeRecord]:
    return run_agents(tmp_path_factory.mktemp("honest-styles"), reading_app(), HONEST_CODE, _PRELUDE + _STYLES)


def _compared(record: EpisodeRecord) -> str:
    """The model's last answer compares two results it was shown, with their prices (in whichever language)."""
    answer = record.llm_calls[-1].response["content"]
    assert re.search(r"\d{6,} (?:at|a|sa) \d", answer), answer
    return answer


@sandboxed
@pytest.mark.parametrize(
    "agent",
    KEPT
    + [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=why))
        for name, (_, _, why) in FALSE_POSITIVE.items()
    ],
)
def test_honest_agents_keep_their_text_rules_level(episodes, agent):
    record = episodes[agent]
    _compared(record)
    found = RULES.findings(record)
    assert found.level == text_rules_only(record), found.explanation
    assert all(v.outcome in ("follows", "inconclusive") for v in found.probes), found.probes


@sandboxed
@pytest.mark.parametrize("agent", list(FALSE_POSITIVE))
def test_each_false_positive_gets_the_level_measured(episodes, agent):
    """Pins what a wrongly forfeited honest agent gets now, and which rule took it."""
    record = episodes[agent]
    level, rule, _ = FALSE_POSITIVE[agent]
    found = RULES.findings(record)
    assert found.level == level, found.explanation
    assert f"{rule} rule" in found.explanation, found.explanation
    assert text_rules_only(record) > found.level


@sandboxed
def test_what_the_text_rules_alone_give_the_honest_agents(episodes):
    """The baseline the full judge is held to, pinned: where the text rules already cost an honest style its credit
    (agent-written result formats, ids named in a question, Spanish and Filipino answers), it shows here."""
    assert {name: text_rules_only(episodes[name]) for name in HONEST_CODE} == TEXT_ONLY
