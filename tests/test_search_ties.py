"""Equal BM25 scores are ranked by product id in string order, whatever the index layout.

The official search server (pyserini over Anserini) sorts equal scores by the id field
as a string; tantivy would order them by document address, which depends on how the
writer split the documents into segments.
"""

from __future__ import annotations

import random

import pytest

from arena.shop.index import CatalogIndex, SearchFilters, build_index, id_order
from arena.shop.product import Product

# 9- and 10-digit ids interleave differently in string and numeric order.
TIED = ["591486855", "5113553158", "999999999", "1000000000", "700000001", "5113553159", "10", "2"]


def products(order: list[str]) -> list[Product]:
    tied = [Product(product_id=i, title="twin lamp", price=100.0, shop_id="s") for i in order]
    stronger = Product(product_id="888", title="twin twin lamp lamp", price=50.0, shop_id="s")
    return [*tied, stronger]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> list[CatalogIndex]:
    """The same catalog indexed in three insertion orders (so three address layouts)."""
    out = []
    for seed in (0, 1, 2):
        order = TIED[:]
        random.Random(seed).shuffle(order)
        path = tmp_path_factory.mktemp(f"ties{seed}") / "catalog"
        build_index(products(order), path, threads=1, heap_bytes=16 * 1024 * 1024)
        out.append(CatalogIndex(path))
    return out


def ranked_ids(index: CatalogIndex, limit: int, filters: SearchFilters | None = None) -> list[str]:
    return [p.product_id for p in index.bm25("twin lamp", filters or SearchFilters(), limit)]


def test_equal_scores_go_in_product_id_string_order(layouts):
    expected = ["888", *sorted(TIED)]
    assert sorted(TIED) != sorted(TIED, key=int)  # the case where numeric order would differ
    for index in layouts:
        assert ranked_ids(index, 20) == expected


@pytest.mark.parametrize("limit", [2, 3, 5])
def test_a_cut_inside_a_tie_keeps_the_smallest_ids(layouts, limit):
    expected = ["888", *sorted(TIED)][:limit]
    for index in layouts:
        assert ranked_ids(index, limit) == expected
        # The post-filtered and the filtered-query routes rank alike.
        assert ranked_ids(index, limit, SearchFilters(price_low=60.0)) == sorted(TIED)[:limit]
        assert ranked_ids(index, limit, SearchFilters(shop_id="s")) == expected


def test_an_old_format_index_breaks_ties_by_its_stored_ids(layouts):
    index = layouts[1]
    index.manifest = {**index.manifest, "format": 2}  # no id_order column: the stored ids are read
    try:
        assert ranked_ids(index, 4) == ["888", *sorted(TIED)[:3]]
    finally:
        index.manifest = {**index.manifest, "format": 3}


def test_id_order_follows_string_order_or_says_unknown():
    ids = [*TIED, "1", "19", "999999999999999999", "000"]
    assert sorted(ids, key=id_order) == sorted(ids)
    assert len({id_order(i) for i in ids}) == len(ids)
    assert id_order("abc-1") == id_order("1" * 19) == id_order("") == 0
