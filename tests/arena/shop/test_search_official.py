"""The index ranks exactly as a plain, product-by-product Lucene BM25 over the whole catalog.

The oracle here scores every product on its own with Python loops (its terms from the
analyzer, its one-byte norm, Lucene's float32 term scores summed in double), sorts the
whole catalog by (score, product id), keeps the official server's search depth, applies
the filters and takes the first hits. The index must give the same list, hit for hit:
its postings, its accumulation, its partial sorts, its tie cuts and its depth cut are
all checked against that. (Whether the formula is Lucene's own is measured against
pyserini in benchmarks/search_fidelity.py.)
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

import arena.shop.index as index_module
from arena.shop import lucene_bm25, ranking
from arena.shop.index import CatalogIndex, SearchFilters, service_mask
from arena.shop.lucene_analysis import analyze
from arena.shop.product import SERVICES
from arena.shop.tools import ShopEnvironment
from arena.taskpack.build import build_catalog
from arena.taskpack.synthetic import generate_products

SIZE, SEED = 3000, 5


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("official") / "catalog"
    build_catalog(out, synthetic=SIZE, seed=SEED)
    return out


@pytest.fixture(scope="module")
def products():
    return list(generate_products(SIZE, SEED))


@pytest.fixture(scope="module")
def queries(products) -> list[str]:
    """1-4 words from the catalog's own titles (common words match hundreds of products), and
    a few long requests with repeated words."""
    rng = random.Random(3)
    words = sorted({w for p in products for w in p.title.lower().split() if len(w) > 2})
    short = [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(60)]
    long = [
        f"I'm looking for {p.title.lower()}, a {p.title.split()[0]} {p.title.split()[0]} please" for p in products[:8]
    ]
    return short + long


class Oracle:
    """Lucene's BM25, one product at a time."""

    def __init__(self, products) -> None:
        self.products = products
        self.terms = [Counter(analyze(p.contents())) for p in products]
        lengths = [sum(t.values()) for t in self.terms]
        self.doc_count = sum(1 for n in lengths if n)
        avgdl = lucene_bm25.average_length(sum(lengths), self.doc_count)
        cache = lucene_bm25.norm_inverse_cache(avgdl)
        self.norm_inverse = [cache[lucene_bm25.length_to_norm(n)] for n in lengths]
        self.df = Counter(t for counted in self.terms for t in counted)
        self._rankings: dict[str, list] = {}

    def ranking(self, q: str) -> list[tuple[np.float32, str, int]]:
        if q not in self._rankings:
            self._rankings[q] = self._ranking(q)
        return self._rankings[q]

    def _ranking(self, q: str) -> list[tuple[np.float32, str, int]]:
        query = Counter(analyze(q))
        weights = {
            t: np.float32(n) * lucene_bm25.idf(self.df[t], self.doc_count) for t, n in query.items() if t in self.df
        }
        hits = []
        for i, counted in enumerate(self.terms):
            total = 0.0
            for term, weight in weights.items():
                if term in counted:
                    denominator = np.float32(1) + np.float32(counted[term]) * self.norm_inverse[i]
                    total += float(weight - weight / denominator)
            if total:
                hits.append((np.float32(total), self.products[i].product_id, i))
        hits.sort(key=lambda h: (-h[0], h[1].encode()))
        return hits

    def first(self, q: str, filters: SearchFilters, limit: int, depth: int) -> list[str]:
        out = []
        for _, pid, i in self.ranking(q)[:depth]:
            p = self.products[i]
            if filters.shop_id and p.shop_id != filters.shop_id:
                continue
            if filters.price_low is not None and p.price < filters.price_low:
                continue
            if filters.price_high is not None and p.price > filters.price_high:
                continue
            if not set(filters.services) <= set(p.service):
                continue
            out.append(pid)
        return out[:limit]


@pytest.fixture(scope="module")
def oracle(products):
    return Oracle(products)


FILTERS = [
    SearchFilters(),
    SearchFilters(price_low=10, price_high=200),
    SearchFilters(price_low=150),
    SearchFilters(price_high=40),
    SearchFilters(services=("COD",)),
    SearchFilters(services=("official", "freeShipping")),
    SearchFilters(price_low=20, price_high=500, services=("COD",)),
    SearchFilters(price_low=999, price_high=1001, services=("flashsale", "official")),  # almost nothing passes
]


def ids(catalog: CatalogIndex, q: str, filters: SearchFilters, limit: int) -> list[str]:
    return [p.product_id for p in catalog.bm25(q, filters, limit)]


# The pruned route, the exhaustive compiled one and the plain numpy one (see
# arena/shop/ranking.py) give the same lists: (USE_KERNEL, USE_PRUNING) per route.
ROUTES = {"pruned": (True, True), "kernel": (True, False), "numpy": (False, False)}


def use_route(monkeypatch, route: str) -> None:
    kernel, pruning = ROUTES[route]
    monkeypatch.setattr(ranking, "USE_KERNEL", kernel)
    monkeypatch.setattr(ranking, "USE_PRUNING", pruning)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_hit_list_equals_the_oracle(synthetic_dir, oracle, queries, monkeypatch, route):
    use_route(monkeypatch, route)
    catalog = CatalogIndex(synthetic_dir)
    compared = 0
    for q in queries:
        for filters in FILTERS:
            for limit in (1, 10, 50):
                assert ids(catalog, q, filters, limit) == oracle.first(q, filters, limit, 100_000), (q, filters, limit)
                compared += 1
    assert compared == len(queries) * len(FILTERS) * 3
    assert catalog.ranker.routes[route] > len(queries), catalog.ranker.routes


def test_scores_are_the_oracles_to_the_bit(synthetic_dir, oracle, queries):
    catalog = CatalogIndex(synthetic_dir)
    for q in queries[:20]:
        docs, scores = catalog.scored(catalog.query_terms(q))
        got = {catalog.record(int(d)).product_id: s for d, s in zip(docs, scores, strict=True)}
        expected = {pid: s for s, pid, _ in oracle.ranking(q)}
        assert got == expected and all(isinstance(s, np.float32) for s in got.values())


@pytest.mark.parametrize("route", ["pruned", "kernel"])
def test_filters_see_only_the_official_search_depth(synthetic_dir, oracle, queries, monkeypatch, route):
    # The official server filters the first 100,000 hits only: shrunk here so that a
    # 3k catalog's common words reach past it, which must cut filtered hits the same way.
    use_route(monkeypatch, route)
    monkeypatch.setattr(index_module, "SEARCH_DEPTH", 40)
    catalog = CatalogIndex(synthetic_dir)
    cut = 0
    for q in queries:
        for filters in FILTERS[1:]:
            expected = oracle.first(q, filters, 50, 40)
            assert ids(catalog, q, filters, 50) == expected, (q, filters)
            cut += len(expected) < len(oracle.first(q, filters, 50, 100_000))
    assert cut > 20  # the depth really removed passing hits
    routes = catalog.ranker.routes
    assert routes[route] > 0
    if route == "kernel":
        assert routes["depth_cut"] >= cut, routes
    else:  # the depth dropped kept hits (or its floor kept them out of the heap in the first place)
        assert routes["pruned_depth_cut"] > cut // 2 and routes["kernel"] == 0, routes


def test_shop_filters_and_unknown_services(synthetic_dir, oracle):
    catalog = CatalogIndex(synthetic_dir)
    shop = catalog.bm25("black", SearchFilters(), 1)[0].shop_id
    filters = SearchFilters(shop_id=shop, price_low=1)
    hits = ids(catalog, "black", filters, 50)
    assert hits and hits == oracle.first("black", filters, 50, 100_000)
    assert catalog.bm25("black", SearchFilters(shop_id="no-such-shop"), 50) == []
    assert catalog.bm25("black", SearchFilters(services=("teleport",)), 50) == []


def test_find_product_sorts_the_fifty_survivors_from_the_columns(synthetic_dir, queries):
    # Sorting reads prices and sold counts from columns; the pages must equal sorting the
    # decoded records (stable, so ties keep BM25 order).
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
