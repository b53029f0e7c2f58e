"""Price/service filters checked on top unfiltered hits give exactly the filtered query's ranking.

The fast route (``CatalogIndex._post_filtered``) must be indistinguishable from the
filtered boolean query it replaces, including when it has to search deeper and when it
gives up; these tests shrink its depths so a small catalog exercises every route.
"""

from __future__ import annotations

import json
import random
import shutil

import pytest

import arena.shop.index as index_module
from arena.shop.building import build_catalog
from arena.shop.index import CatalogIndex, SearchFilters, service_mask
from arena.shop.product import SERVICES
from arena.shop.synthetic import generate_products
from arena.shop.tools import ShopEnvironment


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("postfilter") / "catalog"
    build_catalog(out, synthetic=3000, seed=5)
    return out


@pytest.fixture(scope="module")
def queries() -> list[str]:
    """1-3 words from the catalog's own titles: common words match hundreds of products."""
    rng = random.Random(3)
    words = sorted({w for p in generate_products(3000, 5) for w in p.title.lower().split() if len(w) > 2})
    return [" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(60)]


FILTERS = [
    SearchFilters(price_low=10, price_high=200),
    SearchFilters(price_low=150),
    SearchFilters(price_high=40),
    SearchFilters(services=("COD",)),
    SearchFilters(services=("official", "freeShipping")),
    SearchFilters(price_low=20, price_high=500, services=("COD",)),
    SearchFilters(price_low=999, price_high=1001, services=("flashsale", "official")),  # almost nothing passes
]


def test_post_filter_matches_the_filtered_query_on_every_route(synthetic_dir, queries, monkeypatch):
    monkeypatch.setattr(index_module, "FIRST_DEPTH", 20)
    monkeypatch.setattr(index_module, "MAX_DEPTH", 160)
    fast = CatalogIndex(synthetic_dir)
    reference = CatalogIndex(synthetic_dir, post_filter=False)
    compared = 0
    for q in queries:
        for filters in FILTERS:
            for limit in (10, 50):
                expected = [(a.segment_ord, a.doc) for a in reference.bm25_addresses(q, filters, limit)]
                got = [(a.segment_ord, a.doc) for a in fast.bm25_addresses(q, filters, limit)]
                assert got == expected, (q, filters, limit)
                compared += bool(expected)
    assert compared > 300
    # The shrunken depths send searches down each route; otherwise this test proves little.
    assert {"post_filter", "post_filter_deeper", "post_filter_gave_up"} <= set(fast.routes), fast.routes
    assert set(reference.routes) == {"filtered_query"}


def test_the_hits_really_pass_the_filters(synthetic_dir, queries):
    catalog = CatalogIndex(synthetic_dir)
    filters = SearchFilters(price_low=20, price_high=500, services=("COD", "freeShipping"))
    found = 0
    for q in queries:
        for product in catalog.bm25(q, filters, 50):
            assert 20 <= product.price <= 500 and {"COD", "freeShipping"} <= set(product.service)
            found += 1
    assert found > 100


def test_shop_filters_and_unknown_services_take_the_filtered_query(synthetic_dir):
    catalog = CatalogIndex(synthetic_dir)
    shop = catalog.records(catalog.bm25_addresses("black", SearchFilters(), 1))[0].shop_id
    hits = catalog.bm25("black", SearchFilters(shop_id=shop, price_low=1), 50)
    assert hits and all(p.shop_id == shop for p in hits)
    assert catalog.bm25("black", SearchFilters(services=("teleport",)), 50) == []
    assert catalog.routes == {"unfiltered": 1, "filtered_query": 2}


def test_a_format_1_index_still_answers_filtered_searches(synthetic_dir, tmp_path, queries):
    # Format 1 had no services column: such an index opens and filters through the query.
    old = tmp_path / "old"
    shutil.copytree(synthetic_dir, old)
    manifest = json.loads((old / "catalog.json").read_text())
    (old / "catalog.json").write_text(json.dumps({**manifest, "format": 1}))
    legacy, current = CatalogIndex(old), CatalogIndex(synthetic_dir)
    filters = SearchFilters(price_high=100, services=("COD",))
    for q in queries[:10]:
        assert [p.product_id for p in legacy.bm25(q, filters, 50)] == [
            p.product_id for p in current.bm25(q, filters, 50)
        ]
    assert set(legacy.routes) == {"filtered_query"}


def test_find_product_sorts_the_fifty_survivors_from_the_columns(synthetic_dir, queries):
    # Sorting reads prices and sold counts from fast fields; the pages must equal
    # sorting the decoded records (stable, so ties keep BM25 order).
    catalog = CatalogIndex(synthetic_dir)
    env = ShopEnvironment(catalog)
    for q in queries[:15]:
        survivors = catalog.bm25(q, SearchFilters(price_low=5), 50)
        for sort, key, reverse in (("priceasc", "price", False), ("pricedesc", "price", True),
                                   ("order", "sold_count", True)):  # fmt: skip
            expected = sorted(survivors, key=lambda p: getattr(p, key), reverse=reverse)
            pages = [env.call("find_product", {"q": q, "page": n, "price": "5-", "sort": sort}) for n in range(1, 6)]
            assert all(r.ok for r in pages)
            assert [h["product_id"] for r in pages for h in r.result] == [p.product_id for p in expected]


def test_service_mask_bits():
    assert service_mask([]) == 0
    assert service_mask(SERVICES) == 0b1111
    assert service_mask(["COD", "COD", "bogus"]) == 1 << SERVICES.index("COD")
