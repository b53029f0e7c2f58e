"""The offline heuristic policy: its OpenAI-compatible server (through the real openai client) and its shopping
on a real synthetic catalog."""

from __future__ import annotations

import json
import math
import random
import re
import socket
import threading
import time

import httpx
import openai
import pytest

from arena.policy.chat_format import count_tokens
from arena.policy.client import SyncASGITransport, local_client
from arena.policy.parsing import parse_request
from arena.policy.policy import HeuristicPolicy
from arena.policy.rollout import rollout
from arena.policy.server import create_policy_app
from arena.problems.official import parse_row
from arena.scoring import ScoreMode, score_problem
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeDocument, LocalKnowledgeBase, build_knowledge_index
from arena.shop.tools import KNOWLEDGE_TOOLS, SHOP_TOOLS, ShopEnvironment, openai_tool_schemas
from arena.taskpack.build import build_catalog
from arena.taskpack.synthetic import generate_products

MODEL = "heuristic-policy"
TOOLS = openai_tool_schemas(SHOP_TOOLS)
QUERY = "Looking for a red cotton t-shirt between 100 and 500 pesos with free shipping and cash on delivery."


@pytest.fixture(scope="module")
def app():
    return create_policy_app(seed=0)


@pytest.fixture(scope="module")
def client(app):
    return local_client(app)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A real 2,000-product synthetic catalog and its products (same seed, so the same records)."""
    out = tmp_path_factory.mktemp("policy") / "catalog"
    build_catalog(out, synthetic=2000, seed=1)
    return CatalogIndex(out), list(generate_products(2000, 1))


def ask(client, messages, **kwargs):
    return client.chat.completions.create(model=MODEL, messages=messages, **kwargs)


def easy_problem(product, rng: random.Random, index: int):
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]*", product.title)
    kept = [w for w in words if rng.random() < 0.75] or words[:3]
    lo, hi = math.floor(product.price * 0.8), math.ceil(product.price * 1.2)
    query = f"Looking for {' '.join(kept).lower()} priced between {lo} and {hi} pesos."
    reward = {"product_id": product.product_id, "title": [product.title], "price": [{"between": [lo, hi]}]}
    return parse_row({"query": query, "reward": reward, "id": f"easy-{index}"})


def check_dialogue(messages: list[dict]) -> None:
    """Every assistant tool call is answered, in order, by a tool message with its id."""
    i = 0
    while i < len(messages):
        message = messages[i]
        calls = message.get("tool_calls") or []
        if message["role"] == "assistant" and calls:
            answers = messages[i + 1 : i + 1 + len(calls)]
            assert [a["role"] for a in answers] == ["tool"] * len(calls)
            assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
            i += len(calls)
        i += 1


# -- the server ----------------------------------------------------------------------------------


def test_models_lists_the_heuristic(client):
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL]
    assert "heuristic" in models.data[0].owned_by


def test_first_turn_searches_with_the_request_constraints(client):
    response = ask(client, [{"role": "user", "content": QUERY}], tools=TOOLS)
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert response.system_fingerprint.startswith("heuristic")
    (call,) = choice.message.tool_calls
    assert re.fullmatch(r"call_[0-9a-f]{24}", call.id)
    assert call.function.name == "find_product"
    arguments = json.loads(call.function.arguments)
    assert {"red", "cotton", "t-shirt"} <= set(arguments["q"].split())
    assert arguments["price"] == "100-500" and arguments["service"] == "freeShipping,COD"
    assert "100-500" in choice.message.content  # the reasoning cites the constraint it applies
    assert choice.message.model_extra["reasoning_content"] == choice.message.content
    expected = (
        count_tokens(choice.message.content) + count_tokens("find_product") + count_tokens(call.function.arguments)
    )
    assert response.usage.completion_tokens == expected
    assert response.usage.prompt_tokens > count_tokens(QUERY)  # the tool schemas count too
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens


def accumulate(stream) -> dict:
    content, reasoning, calls, finish, usage, objects = "", "", {}, None, None, set()
    for chunk in stream:
        objects.add(chunk.object)
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
            for tc in delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                slot["id"] = tc.id or slot["id"]
                slot["name"] += (tc.function.name or "") if tc.function else ""
                slot["arguments"] += (tc.function.arguments or "") if tc.function else ""
            finish = choice.finish_reason or finish
    return {"content": content, "reasoning": reasoning, "calls": [calls[i] for i in sorted(calls)], "finish": finish,
            "usage": usage, "objects": objects}  # fmt: skip


def test_streaming_matches_the_plain_response(client):
    messages = [{"role": "user", "content": QUERY}]
    plain = ask(client, messages, tools=TOOLS)
    streamed = accumulate(ask(client, messages, tools=TOOLS, stream=True, stream_options={"include_usage": True}))
    assert streamed["objects"] == {"chat.completion.chunk"}
    assert streamed["content"] == streamed["reasoning"] == plain.choices[0].message.content
    expected = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                for c in plain.choices[0].message.tool_calls]  # fmt: skip
    assert streamed["calls"] == expected
    assert streamed["finish"] == "tool_calls"
    assert streamed["usage"].model_dump() == plain.usage.model_dump()


def test_streaming_without_usage_option_sends_no_usage_chunk(client):
    streamed = accumulate(ask(client, [{"role": "user", "content": QUERY}], tools=TOOLS, stream=True))
    assert streamed["usage"] is None and streamed["finish"] == "tool_calls"


def test_yes_no_classification_without_tools(client):
    def classify(product: dict) -> str:
        prompt = (f"Request: red cotton t-shirt under 500 pesos\nProduct: {json.dumps(product)}\n"
                  "Does this product match the request? Answer yes or no.")  # fmt: skip
        response = ask(client, [{"role": "user", "content": prompt}])
        assert response.choices[0].finish_reason == "stop" and response.choices[0].message.tool_calls is None
        return response.choices[0].message.content

    good = classify({"product_id": "1", "title": "Red Cotton T-Shirt Oversized", "price": 300})
    too_dear = classify({"product_id": "2", "title": "Red Cotton T-Shirt Oversized", "price": 900})
    unrelated = classify({"product_id": "3", "title": "Stainless Kitchen Knife", "price": 200})
    assert good.startswith("Yes") and "1 at 300" in good
    assert too_dear.startswith("No") and "price 900 outside <= 500" in too_dear
    assert unrelated.startswith("No") and "lacks" in unrelated


def test_plain_text_streams_like_it_answers(client):
    messages = [{"role": "user", "content": "Summarise: I want a blue denim jacket under 800 pesos."}]
    plain = ask(client, messages).choices[0].message.content
    streamed = accumulate(ask(client, messages, stream=True))
    assert streamed["content"] == plain and streamed["finish"] == "stop" and streamed["calls"] == []
    assert "<= 800" in plain


def test_max_tokens_cuts_the_turn(client):
    response = ask(client, [{"role": "user", "content": QUERY}], tools=TOOLS, max_tokens=3)
    choice = response.choices[0]
    assert choice.finish_reason == "length" and choice.message.tool_calls is None
    assert count_tokens(choice.message.content) == 3 and response.usage.completion_tokens == 3
    streamed = accumulate(ask(client, [{"role": "user", "content": QUERY}], tools=TOOLS, max_tokens=3, stream=True))
    assert streamed["finish"] == "length" and streamed["content"] == choice.message.content and not streamed["calls"]


def test_stop_sequence_ends_the_text(client):
    response = ask(client, [{"role": "user", "content": QUERY}], tools=TOOLS, stop=["(price"])
    choice = response.choices[0]
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert "(price" not in choice.message.content and choice.message.content.startswith("Searching for")


def test_tool_choice_parallel_calls_and_n(client):
    shop_query = "Find a shop that offers these items: (1) a blue ceramic mug; (2) a bamboo cutting board."
    messages = [{"role": "user", "content": shop_query}]
    both = ask(client, messages, tools=TOOLS).choices[0].message.tool_calls
    assert [c.function.name for c in both] == ["find_product", "find_product"]  # one search per item, in parallel
    single = ask(client, messages, tools=TOOLS, parallel_tool_calls=False).choices[0].message.tool_calls
    assert len(single) == 1 and single[0].function.arguments == both[0].function.arguments
    none = ask(client, messages, tools=TOOLS, tool_choice="none").choices[0]
    assert none.message.tool_calls is None and none.finish_reason == "stop"
    forced = ask(client, messages, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "terminate"}})
    (call,) = forced.choices[0].message.tool_calls
    assert call.function.name == "terminate" and json.loads(call.function.arguments) == {"status": "failure"}
    two = ask(client, messages, tools=TOOLS, n=2)
    assert [c.index for c in two.choices] == [0, 1]
    assert two.usage.completion_tokens == 2 * ask(client, messages, tools=TOOLS).usage.completion_tokens


def test_malformed_requests_get_400(app, client):
    raw = httpx.Client(transport=SyncASGITransport(app), base_url="http://policy")
    broken = raw.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert broken.status_code == 400 and "parse the JSON" in broken.json()["error"]["message"]
    assert raw.post("/v1/chat/completions", json=[1, 2]).status_code == 400
    with pytest.raises(openai.BadRequestError, match="messages"):
        client.chat.completions.create(model=MODEL, messages=[])
    with pytest.raises(openai.BadRequestError, match="temperature"):
        ask(client, [{"role": "user", "content": "hi"}], temperature=5)
    with pytest.raises(openai.BadRequestError, match="tool_call_id 'call_x'"):
        ask(client, [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_x", "content": "[]"}])
    unanswered = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "find_product", "arguments": "{}"}}]}  # fmt: skip
    with pytest.raises(openai.BadRequestError, match="call_a"):
        ask(client, [{"role": "user", "content": "hi"}, unanswered, {"role": "user", "content": "and?"}], tools=TOOLS)
    with pytest.raises(openai.BadRequestError, match="not in 'tools'"):
        ask(client, [{"role": "user", "content": "hi"}], tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "web_search"}})  # fmt: skip
    with pytest.raises(openai.NotFoundError, match="gpt-4o"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])


def test_real_http_server_streams_over_loopback():
    import uvicorn

    config = uvicorn.Config(create_policy_app(seed=3), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        remote = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        streamed = accumulate(ask(remote, [{"role": "user", "content": QUERY}], tools=TOOLS, stream=True))
        assert streamed["calls"][0]["name"] == "find_product" and streamed["finish"] == "tool_calls"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# -- determinism and temperature -------------------------------------------------------------------


def tied_dialogue() -> list[dict]:
    """A dialogue where four equally good mugs came back and were inspected: the next turn recommends."""
    hits = [{"product_id": f"90{i}", "shop_id": f"s{i}", "title": "Blue Ceramic Mug 350ml", "price": 120.0,
             "service": [], "sold_count": 0} for i in range(4)]  # fmt: skip
    info = [{"product_id": h["product_id"], "short_description": "", "description": "", "sku_options": {},
             "attributes": {"color_family": ["blue"]}} for h in hits]  # fmt: skip

    def call(cid, name, args):
        function = {"name": name, "arguments": json.dumps(args)}
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": cid, "type": "function", "function": function}],
        }

    return [
        {"role": "user", "content": "Looking for a blue ceramic mug."},
        call("call_1", "find_product", {"q": "blue ceramic mug", "page": 1}),
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(hits)},
        call("call_2", "view_product_information", {"product_ids": ",".join(h["product_id"] for h in hits)}),
        {"role": "tool", "tool_call_id": "call_2", "content": json.dumps(info)},
    ]


def recommended(response) -> str:
    (call,) = response.choices[0].message.tool_calls
    assert call.function.name == "recommend_product"
    return json.loads(call.function.arguments)["product_ids"]


def test_same_seed_same_answer_and_greedy_at_temperature_zero(app, client):
    messages = tied_dialogue()
    first = ask(client, messages, tools=TOOLS, temperature=0.8, seed=7).choices[0].message
    again = ask(local_client(create_policy_app(seed=0)), messages, tools=TOOLS, temperature=0.8, seed=7)
    assert again.choices[0].message.model_dump() == first.model_dump()  # another server, same seed: same turn
    greedy = {recommended(ask(local_client(create_policy_app(seed=s)), messages, tools=TOOLS)) for s in range(4)}
    assert greedy == {"900"}  # temperature 0: the best-ranked of the tie, whatever the seed


def test_temperature_varies_choices(client):
    messages = tied_dialogue()
    picks = {recommended(ask(client, messages, tools=TOOLS, temperature=1.5, seed=s)) for s in range(16)}
    assert len(picks) >= 2 and picks <= {"900", "901", "902", "903"}
    query = [{"role": "user", "content": "Looking for a stainless steel insulated water bottle with a straw lid"}]
    wordings = {
        json.loads(ask(client, query, tools=TOOLS, temperature=1.5, seed=s).choices[0].message.tool_calls[0]
                   .function.arguments)["q"]
        for s in range(8)
    }  # fmt: skip
    assert len(wordings) >= 2


# -- parsing -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("a kettle under 500 pesos", None, 500),
        ("a kettle priced between 100 and 200", 100, 200),
        ("a kettle above PHP 1,200", 1200, None),
        ("a kettle from 55 to 66 pesos", 55, 66),
        ("a kettle that costs over 98 pesos", 98, None),
    ],
)
def test_price_phrases(text, low, high):
    (item,) = parse_request(text).items
    assert (item.price.low, item.price.high) == (low, high)
    assert not {"under", "500", "1,200", "pesos"} & set(item.keywords)


def test_quantities_are_not_prices():
    (item,) = parse_request("baby socks weighing up to 5kg for 3 to 6 months").items
    assert item.price is None and "5kg" in item.keywords


def test_services_and_multi_item_requests():
    request = parse_request(
        "Find a shop that offers these items: (1) A battery spring plate in color 04; (2) A set of rubber plugs, "
        "priced between 75 and 95 pesos, with free shipping; (3) A pipe tap with cash on delivery, LazMall and "
        "LazFlash deals. The shop should sell all these products."
    )
    assert request.intent == "shop" and len(request.items) == 3
    assert request.items[1].price.as_filter() == "75-95" and request.items[1].services == ["freeShipping"]
    assert request.items[2].services == ["COD", "official", "flashsale"]
    ordinal = parse_request("Looking for a shop offering these: First, a dog treat. Second, a cat toy, above 88 PHP.")
    assert [i.keywords for i in ordinal.items] == [["dog", "treat"], ["cat", "toy"]]
    commas = parse_request("Find shops offering a water balloon, a notebook with 80 pages, and a set of baby socks.")
    assert len(commas.items) == 3 and commas.items[1].keywords == ["notebook", "80", "pages"]


def test_voucher_terms():
    request = parse_request(
        "I'm looking for a phone strap and an ink bottle.\n\nMy budget is only `398`, but I have a voucher with the "
        "following rules:\n1. The voucher only applies to the products from the same shop.\n2. It is valid only when "
        "the total price of the products exceeds `473`.\n3. It provides a percentage discount of `14%` with a cap of "
        "`50`."
    )
    voucher = request.voucher
    assert request.intent == "voucher" and len(request.items) == 2
    assert (voucher.budget, voucher.threshold, voucher.scope, voucher.discount_type) == (398, 473, "shop", "percentage")
    assert voucher.value == pytest.approx(0.14) and voucher.cap == 50
    assert voucher.total_after(500, same_shop=True) == 450  # 14% = 70, capped at 50
    assert voucher.total_after(500, same_shop=False) == 500 and not voucher.fits(500, same_shop=False)


# -- shopping on a real catalog ---------------------------------------------------------------------------


def test_easy_product_problems_are_solved(shop):
    catalog, products = shop
    rng = random.Random(5)
    policy = HeuristicPolicy(0)
    solved = 0
    for i, product in enumerate(rng.sample(products, 12)):
        problem = easy_problem(product, rng, i)
        done = rollout(policy, ShopEnvironment(catalog), problem.query)
        check_dialogue(done.messages)
        calls = [c["function"]["name"] for m in done.messages for c in m.get("tool_calls", [])]
        assert calls[0] == "find_product" and calls[-2:] == ["recommend_product", "terminate"]
        assert "view_product_information" in calls
        solved += score_problem(problem, done.recommended, catalog, mode=ScoreMode.strict).success
    assert solved >= 8, f"only {solved}/12 easy problems solved"


def test_shop_task_searches_inside_one_shop(shop):
    catalog, products = shop
    by_shop: dict[str, list] = {}
    for p in products:
        by_shop.setdefault(p.shop_id, []).append(p)
    shop_id, members = max(by_shop.items(), key=lambda kv: (len(kv[1]), kv[0]))
    first, second = members[0], members[1]
    query = (f"Find a shop that offers these items: (1) {first.title.lower()}; (2) {second.title.lower()}. "
             "The shop should sell all these products.")  # fmt: skip
    env = ShopEnvironment(catalog)
    done = rollout(HeuristicPolicy(0), env, query)
    arguments = [json.loads(c["function"]["arguments"]) for m in done.messages for c in m.get("tool_calls", [])]
    assert any(a.get("shop_id") for a in arguments), "no search inside a chosen shop"
    assert len(done.recommended) == 2
    assert len({catalog.get(pid).shop_id for pid in done.recommended}) == 1


def test_voucher_basket_respects_the_budget(shop):
    catalog, products = shop
    a, b = products[10], products[20]
    total = a.price + b.price
    budget = math.ceil(total * 0.95)
    query = (f"I'm looking for a {a.title.lower()} and a {b.title.lower()}.\n\nMy budget is only `{budget}`, but I "
             "have a voucher with the following rules:\n1. The voucher applies to all products.\n2. It is valid only "
             f"when the total price of the products exceeds `{math.floor(total * 0.5)}`.\n3. It provides a fixed "
             f"discount of `{math.ceil(total * 0.1)}`.")  # fmt: skip
    done = rollout(HeuristicPolicy(0), ShopEnvironment(catalog), query)
    picked = [catalog.get(pid) for pid in done.recommended]
    assert len(picked) == 2
    assert sum(p.price for p in picked) - math.ceil(total * 0.1) <= budget
    reason = next(m["content"] for m in done.messages if m["role"] == "assistant" and "recommend_product" in
                  json.dumps(m.get("tool_calls", [])))  # fmt: skip
    assert f"budget {budget}" in reason and "after the voucher" in reason  # the turn shows its arithmetic


def test_knowledge_task_searches_the_web_first(shop, tmp_path):
    catalog, products = shop
    gold = next(p for p in products if p.brand and p.brand.split()[0].lower() in p.title.lower())
    fact = f"In 1987, Ada Quill founded the label {gold.brand}."
    documents = [KnowledgeDocument(doc_id="d1", title="Ada Quill", content=fact),
                 KnowledgeDocument(doc_id="d2", title="Weather", content="Rain is expected tomorrow.")]  # fmt: skip
    build_knowledge_index(documents, tmp_path / "kb")
    env = ShopEnvironment(catalog, LocalKnowledgeBase(tmp_path / "kb"), allowed=KNOWLEDGE_TOOLS)
    noun = " ".join(w for w in gold.title.lower().split() if w not in gold.brand.lower().split())
    done = rollout(HeuristicPolicy(0), env, f"Which label did Ada Quill found in 1987? I would like to buy {noun}.")
    calls = [c["function"] for m in done.messages for c in m.get("tool_calls", [])]
    assert calls[0]["name"] == "web_search"
    search = json.loads(calls[1]["arguments"])
    assert calls[1]["name"] == "find_product" and gold.brand in search["q"]
    assert gold.brand.lower() in catalog.get(done.recommended[0]).title.lower()


def test_cli_serve_fails_clearly_on_a_taken_port():
    import typer
    from typer.testing import CliRunner

    from arena.commands.policy import app as policy_app

    root = typer.Typer()  # as arena/cli.py mounts it: `arena policy serve`
    root.add_typer(policy_app, name="policy")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(root, ["policy", "serve", "--port", str(port)])
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output
