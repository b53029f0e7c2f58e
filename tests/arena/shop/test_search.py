"""find_product with the official server's semantics, on a real catalog index."""

from __future__ import annotations

import pytest

from arena.shop.index import SearchFilters
from arena.shop.tools import ShopEnvironment, parse_price, parse_services


def find(catalog, **args):
    result = ShopEnvironment(catalog).call("find_product", args)
    assert result.ok, result.error
    return result.result


def ids(hits):
    return [h["product_id"] for h in hits]


def test_hit_fields_are_the_official_ones(catalog):
    hit = find(catalog, q="widget", page=1)[0]
    assert set(hit) == {"product_id", "shop_id", "title", "price", "service", "sold_count"}


def test_bm25_order_puts_stronger_matches_first(catalog):
    hits = find(catalog, q="widget", page=1)
    assert all(h["title"] == "widget widget gadget" for h in hits)


def test_pages_of_ten_up_to_five_and_out_of_range_pages_are_empty(catalog):
    pages = [ids(find(catalog, q="widget", page=p)) for p in range(1, 6)]
    assert all(len(p) == 10 for p in pages)
    flat = [i for p in pages for i in p]
    assert len(set(flat)) == 50
    for bad in (0, 6, 100):
        result = ShopEnvironment(catalog).call("find_product", {"q": "widget", "page": bad})
        assert result.ok and result.result == [] and "outside" in result.notice


def test_sort_applies_only_to_the_first_fifty_survivors(catalog):
    # The ten cheapest widgets are weak BM25 matches ranked 51-60: sorting by
    # price must not pull them in, because the cap comes before the sort.
    cheapest = ids(find(catalog, q="widget", page=1, sort="priceasc"))
    assert not any(i.startswith("20") for i in cheapest)
    prices = [h["price"] for h in find(catalog, q="widget", page=1, sort="priceasc")]
    assert prices == sorted(prices) and prices[0] == 100.0


def test_sort_orders(catalog):
    desc = [h["price"] for p in range(1, 6) for h in find(catalog, q="widget", page=p, sort="pricedesc")]
    assert desc == sorted(desc, reverse=True)
    sold = [h["sold_count"] for h in find(catalog, q="widget", page=1, sort="order")]
    assert sold == sorted(sold, reverse=True) and sold[0] == 49


def test_filters_apply_before_the_cap(catalog):
    # Only the weak matches are in shop s3; filtering first makes them reachable.
    hits = find(catalog, q="widget", page=1, shop_id="s3")
    assert sorted(ids(hits)) == [f"20{i:02d}" for i in range(10)]


def test_price_filter_is_inclusive_and_open_ended(catalog):
    hits = [h for p in range(1, 6) for h in find(catalog, q="widget", page=p, price="110-120")]
    assert sorted(h["price"] for h in hits) == [float(p) for p in range(110, 121)]
    low = [h["price"] for h in find(catalog, q="widget", page=1, price="145-")]
    assert low and min(low) >= 145
    high = [h["price"] for h in find(catalog, q="widget", page=1, shop_id="s3", price="-3")]
    assert sorted(high) == [1.0, 2.0, 3.0]


def test_every_requested_service_is_required(catalog):
    hits = [h for p in range(1, 6) for h in find(catalog, q="widget", page=p, service="COD,official")]
    assert hits and all({"COD", "official"} <= set(h["service"]) for h in hits)
    assert len(hits) == len([i for i in range(50) if i % 3 == 0])


def test_unknown_services_and_default_are_ignored():
    assert parse_services("COD,default,bogus,COD,flashsale") == ("COD", "flashsale")
    assert parse_services(None) == ()
    # Split without trimming, as the official server: " COD" names no service and filters nothing.
    assert parse_services("official, COD") == ("official",)
    assert parse_services(" COD") == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0-100", (0.0, 100.0)), ("1000-", (1000.0, None)), ("-50", (None, 50.0)), ("abc", (None, None)),
     ("1-2-3", (None, None)), ("", (None, None)), ("x-10", (None, 10.0)),
     # A NaN bound compares false both ways in the official server: it bounds nothing.
     ("nan-100", (None, 100.0)), ("10-nan", (10.0, None)), ("NaN-", (None, None)), ("5-inf", (5.0, float("inf")))],
)  # fmt: skip
def test_price_strings_parse_as_the_official_server(text, expected):
    assert parse_price(text) == expected


def test_a_query_of_only_stopwords_finds_nothing(catalog):
    assert find(catalog, q="the and of", page=1) == []


def test_lookup_by_id(catalog):
    assert catalog.get("3000").title == "blue denim jeans"
    assert catalog.get("nope") is None


def test_hit_views_are_the_products_own_views_field_for_field(catalog):
    # find_product builds its hits from the stored records without a Product per hit; each must be
    # exactly the view of the Product that record decodes to (types too: a price stays a float).
    addresses = catalog.bm25_addresses("widget gadget jeans denim", SearchFilters(), limit=50)
    assert len(addresses) > 10
    views = catalog.search_views(addresses)
    expected = [catalog.record(a).search_view() for a in addresses]
    assert views == expected
    assert [[type(v) for v in view.values()] for view in views] == [[type(v) for v in e.values()] for e in expected]
    assert find(catalog, q="widget gadget jeans denim", page=2) == expected[10:20]


def test_a_hit_view_of_an_older_record_takes_the_product_defaults():
    from arena.shop.product import Product, search_view

    older = {"product_id": "42", "title": "a lamp", "price": 3.5}  # no shop, services or sales stored
    assert search_view(older) == Product.model_construct(**older).search_view()
    assert search_view(older) == {
        "product_id": "42", "shop_id": "", "title": "a lamp", "price": 3.5, "service": [], "sold_count": 0,
    }  # fmt: skip
