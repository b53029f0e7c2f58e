"""Equal BM25 scores are ranked by product id in string order, whatever order the catalog came in.

The official search server (pyserini over Anserini) sorts equal scores by the id field
as a string, so "10..." comes before "9..."; product ids have 9 or 10 digits, where
numeric and string order differ.
"""

from __future__ import annotations

import json
import random

import pytest

from arena.shop.index import INDEX_FORMAT, CatalogIndex, CatalogIndexError, SearchFilters, build_index
from arena.shop.product import Product

# 9- and 10-digit ids interleave differently in string and numeric order.
TIED = ["591486855", "5113553158", "999999999", "1000000000", "700000001", "5113553159", "10", "2"]


def products(order: list[str]) -> list[Product]:
    tied = [Product(product_id=i, title="twin lamp", price=100.0, shop_id="s") for i in order]
    stronger = Product(product_id="888", title="twin twin lamp lamp", price=50.0, shop_id="s")
    return [*tied, stronger]


@pytest.fixture(scope="module")
def orders(tmp_path_factory) -> list[CatalogIndex]:
    """The same catalog indexed in three insertion orders."""
    out = []
    for seed in (0, 1, 2):
        order = TIED[:]
        random.Random(seed).shuffle(order)
        path = tmp_path_factory.mktemp(f"ties{seed}") / "catalog"
        build_index(products(order), path)
        out.append(CatalogIndex(path))
    return out


def ranked_ids(index: CatalogIndex, limit: int, filters: SearchFilters | None = None) -> list[str]:
    return [p.product_id for p in index.bm25("twin lamp", filters or SearchFilters(), limit)]


def test_equal_scores_go_in_product_id_string_order(orders):
    expected = ["888", *sorted(TIED)]
    assert sorted(TIED) != sorted(TIED, key=int)  # the case where numeric order would differ
    for index in orders:
        assert ranked_ids(index, 20) == expected


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_a_cut_inside_a_tie_keeps_the_smallest_ids(orders, limit):
    expected = ["888", *sorted(TIED)][:limit]
    for index in orders:
        assert ranked_ids(index, limit) == expected
        assert ranked_ids(index, limit, SearchFilters(price_low=60.0)) == sorted(TIED)[:limit]
        assert ranked_ids(index, limit, SearchFilters(shop_id="s")) == expected


def test_the_same_products_in_any_order_build_the_same_ranking_files(orders):
    # Only the record and column order follow the input; every ranking is a function of the products.
    for index in orders[1:]:
        for q in ("twin", "lamp", "twin lamp lamp", "twin-lamp"):
            a = [p.product_id for p in orders[0].bm25(q, SearchFilters(), 9)]
            assert [p.product_id for p in index.bm25(q, SearchFilters(), 9)] == a


def test_an_older_format_fails_with_the_command_that_rebuilds_it(orders, tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    manifest = {"format": 3, "products": 9, "source": {"kind": "synthetic", "products": 9, "seed": 4}}
    (folder / "catalog.json").write_text(json.dumps(manifest))
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(CatalogIndexError) as caught:
        CatalogIndex(folder)
    message = str(caught.value)
    assert f"index format 3 is not {INDEX_FORMAT}" in message
    assert f"arena catalog build --synthetic 9 --seed 4 --out {folder}-v{INDEX_FORMAT}" in message
    assert sorted(p.name for p in folder.iterdir()) == before  # never rebuilt in place


def test_rows_are_indexed_as_anserini_indexes_a_documents_file(tmp_path):
    # A repeated id is indexed again (it counts in the statistics and can match), but the id
    # shows, and is filtered by, its first row; a blank row is not indexed at all.
    rows = [
        Product(product_id="1", title="red lamp", price=10.0, shop_id="s"),
        Product(product_id="2", title="blue lamp", price=20.0, shop_id="s"),
        Product(product_id="1", title="red red lamp best", price=99.0, shop_id="s"),
        Product(product_id="3", title="", price=5.0, shop_id="s"),
        Product(product_id="3", title="green lamp", price=30.0, shop_id="s"),
    ]
    build_index(rows, tmp_path / "catalog")
    index = CatalogIndex(tmp_path / "catalog")
    assert len(index) == 3
    assert index.manifest["rows"] == 4 and index.manifest["duplicate_rows"] == 1
    assert index.manifest["blank_rows_skipped"] == 1
    assert index.get("1").title == "red lamp" and index.get("3").title == "green lamp"
    # Only the repeated row has "best": the id is found through it, once, showing its first row.
    hits = index.bm25("best lamp", SearchFilters(), 10)
    assert [p.product_id for p in hits] == ["1", "2", "3"] and hits[0].price == 10.0
    # Every row scores "lamp" with the statistics of all four indexed rows.
    docs, scores = index.scored(index.query_terms("lamp"))
    assert len(docs) == 4
    # The filter reads the first row's price (10), not the matching row's (99).
    assert index.bm25("best", SearchFilters(price_low=50.0), 10) == []
    assert [p.product_id for p in index.bm25("best", SearchFilters(price_high=50.0), 10)] == ["1"]


def test_a_documents_row_is_searched_by_its_own_contents(tmp_path):
    # The official index analyzes the row's "contents", whatever built it.
    import orjson

    from arena.taskpack.build import build_catalog

    row = {"id": "7", "contents": "zebra crossing", "product": {"product_id": "7", "title": "Desk lamp", "price": 5}}
    documents = tmp_path / "documents.jsonl"
    documents.write_bytes(orjson.dumps(row) + b"\n")
    build_catalog(tmp_path / "catalog", documents=documents)
    index = CatalogIndex(tmp_path / "catalog")
    assert [p.title for p in index.bm25("zebra", SearchFilters(), 5)] == ["Desk lamp"]
    assert index.bm25("desk lamp", SearchFilters(), 5) == []
