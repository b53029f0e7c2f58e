"""Bad calls come back as structured errors; the environment never raises."""

from __future__ import annotations

import pytest

from arena.shop.knowledge import (
    KnowledgeDocument,
    LocalKnowledgeBase,
    build_knowledge_index,
)
from arena.shop.tools import SHOP_TOOLS, ShopEnvironment, openai_tool_schemas


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("fly_away", {}, "unknown tool"),
        ("find_product", {"page": 1}, "missing required argument 'q'"),
        ("find_product", {"q": "x"}, "missing required argument 'page'"),
        ("find_product", {"q": 3, "page": 1}, "'q' must be a string"),
        ("find_product", {"q": "x", "page": "two"}, "'page' must be a integer"),
        ("find_product", {"q": "x", "page": True}, "'page' must be a integer"),
        ("find_product", {"q": "x", "page": 1, "colour": "red"}, "unexpected argument"),
        ("view_product_information", {"product_ids": {"a": 1}}, "must be a string"),
        ("terminate", {"status": "maybe"}, "must be one of"),
        ("web_search", {"q": "x"}, "unknown tool"),
    ],
)
def test_bad_calls_are_structured_errors(catalog, name, arguments, message):
    result = ShopEnvironment(catalog).call(name, arguments)
    assert not result.ok
    assert message in result.error
    assert result.name == name


def test_an_unknown_sort_is_relevance_order_as_the_official_server_reads_it(catalog):
    env = ShopEnvironment(catalog)
    plain = env.call("find_product", {"q": "widget", "page": 1})
    odd = env.call("find_product", {"q": "widget", "page": 1, "sort": "random"})
    assert odd.ok and odd.result == plain.result and plain.result
    assert "relevance order" in odd.notice and plain.notice is None


def test_arguments_that_are_not_an_object(catalog):
    result = ShopEnvironment(catalog).call("find_product", ["widget", 1])
    assert not result.ok and "JSON object" in result.error


def test_view_product_information_hides_title_price_and_shop(catalog):
    env = ShopEnvironment(catalog)
    result = env.call("view_product_information", {"product_ids": "1001, 3000,unknown"})
    assert result.ok
    assert [r["product_id"] for r in result.result] == ["1001", "3000"]
    assert set(result.result[0]) == {"product_id", "short_description", "description", "sku_options", "attributes"}
    assert result.notice == "1 unknown product id(s)"
    as_list = env.call("view_product_information", {"product_ids": ["1001", 3000]})
    assert [r["product_id"] for r in as_list.result] == ["1001", "3000"]


def test_last_recommendation_counts_and_terminate_ends_the_episode(catalog):
    env = ShopEnvironment(catalog)
    env.call("recommend_product", {"product_ids": "1001,1002"})
    env.call("recommend_product", {"product_ids": "3000, 1001"})
    assert env.state.recommended == ["3000", "1001"] and env.state.recommendations == 2
    assert env.call("terminate", {"status": "success"}).ok
    after = env.call("find_product", {"q": "widget", "page": 1})
    assert not after.ok and "terminated" in after.error
    assert env.state.status == "success"


def test_page_as_digit_string_is_accepted_like_the_official_query_string(catalog):
    result = ShopEnvironment(catalog).call("find_product", {"q": "widget", "page": "2"})
    assert result.ok and len(result.result) == 10


def test_schemas_come_from_one_source():
    schemas = openai_tool_schemas(SHOP_TOOLS)
    assert [s["function"]["name"] for s in schemas] == list(SHOP_TOOLS)
    find = schemas[0]["function"]
    assert find["parameters"]["required"] == ["q", "page"]
    assert set(find["parameters"]["properties"]) == {"q", "page", "shop_id", "price", "sort", "service"}


def test_web_search_over_a_local_knowledge_corpus(catalog, tmp_path):
    docs = [
        KnowledgeDocument(doc_id="1", url="https://kb.invalid/aitken", title="Alec Aitken",
                          content="Alec Aitken was an accomplished amateur violin player."),
        KnowledgeDocument(doc_id="2", url="https://kb.invalid/tea", title="Green tea", content="Tea grows in hills."),
    ]  # fmt: skip
    assert build_knowledge_index(docs, tmp_path / "kb") == 2
    env = ShopEnvironment(catalog, knowledge=LocalKnowledgeBase(tmp_path / "kb"))
    result = env.call("web_search", {"q": "Which instrument did Alec Aitken play?", "max_results": 1})
    assert result.ok
    assert result.result == [{"url": "https://kb.invalid/aitken", "title": "Alec Aitken",
                              "content": "Alec Aitken was an accomplished amateur violin player."}]  # fmt: skip
    too_many = env.call("web_search", {"q": "tea", "max_results": 50})
    assert not too_many.ok and "max_results" in too_many.error


def test_ids_per_call_are_capped_before_any_lookup(catalog):
    env = ShopEnvironment(catalog, max_ids=5)
    flood = env.call("view_product_information", {"product_ids": ",".join(["1001"] * 100_000)})
    assert not flood.ok and flood.refused == "tool_ids" and "at most 5 product ids per call, got 100000" in flood.error
    assert not env.call("recommend_product", {"product_ids": ["1001"] * 6}).ok and env.state.recommended is None
    assert env.call("view_product_information", {"product_ids": ["1001"] * 5}).ok


def test_calls_after_terminate_are_refused_as_such(catalog):
    env = ShopEnvironment(catalog)
    assert env.call("terminate", {"status": "success"}).ok
    after = env.call("recommend_product", {"product_ids": "1001"})
    assert not after.ok and after.refused == "terminated" and env.state.recommended is None
