"""The pruned route gives the exhaustive ranking's hits, hit for hit, on many random searches.

The pruned route (arena/shop/prune_kernel.py) skips products its stored bounds prove to
rank below the hits. Here it is compared with the plain numpy route (the reference) on
seeded random searches: one word to thirty, repeated words, every kind of filter, limits
from 1 to 300, and depths small enough that the depth cut bites. The catalogs are built
with small windows, so that searches cross many of them and the bounds really prune,
and one catalog is made of equal products, whose ties cross windows. A deliberately
wrong bound must be caught.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from arena.shop import ranking, score_bounds
from arena.shop.index import CatalogIndex, SearchFilters, build_index
from arena.shop.lucene_analysis import analyze
from arena.shop.product import SERVICES, Product
from arena.shop.ranking import Ranker
from arena.taskpack.build import build_catalog
from arena.taskpack.synthetic import generate_products

SIZE, SEED = 4000, 11


@pytest.fixture(scope="module")
def products():
    return list(generate_products(SIZE, SEED))


@pytest.fixture(scope="module", params=[5, 7])
def catalog(request, tmp_path_factory):
    """The synthetic catalog, in windows of 32 or 128 products."""
    patch = pytest.MonkeyPatch()
    patch.setattr(score_bounds, "WINDOW_SHIFT", request.param)
    try:
        out = tmp_path_factory.mktemp(f"pruned{request.param}") / "catalog"
        build_catalog(out, synthetic=SIZE, seed=SEED)
    finally:
        patch.undo()
    index = CatalogIndex(out)
    assert index.ranker.bounds.shift == request.param
    return index


@pytest.fixture(scope="module")
def vocabulary(products) -> list[str]:
    counted = Counter(w for p in products for w in analyze(p.title))
    return sorted(counted)


def random_query(rng: random.Random, vocabulary: list[str], products) -> str:
    kind = rng.random()
    if kind < 0.2:
        return rng.choice(vocabulary)  # a single term
    if kind < 0.5:
        return " ".join(rng.sample(vocabulary, rng.randint(2, 4)))
    if kind < 0.7:  # a title's words, shuffled: many products match most of them
        words = rng.choice(products).title.split()
        return " ".join(rng.sample(words, len(words)))
    words = [rng.choice(vocabulary) for _ in range(rng.randint(8, 30))]
    words += rng.sample(words, rng.randint(0, 4))  # repeated words weigh more
    return " ".join(words)


def random_filters(rng: random.Random, products) -> SearchFilters:
    kind = rng.random()
    if kind < 0.3:
        return SearchFilters()
    low = rng.choice([None, None, rng.uniform(0, 300)])
    high = rng.choice([None, rng.uniform(50, 2000)])
    services = tuple(rng.sample(SERVICES, rng.randint(0, 2)))
    shop = rng.choice(products).shop_id if rng.random() < 0.3 else None
    if kind > 0.97:
        services = ("teleport",)  # nothing passes
    return SearchFilters(shop_id=shop, price_low=low, price_high=high, services=services)


def hits(index: CatalogIndex, q: str, filters: SearchFilters, limit: int, depth: int, route: str) -> list[int]:
    ranker = index.ranker
    query = ranker.query(index.query_terms(q))
    passing = index._filter(filters) if filters.active else None
    kernel, pruning = {"pruned": (True, True), "exhaustive": (True, False), "numpy": (False, False)}[route]
    saved = ranking.USE_KERNEL, ranking.USE_PRUNING
    ranking.USE_KERNEL, ranking.USE_PRUNING = kernel, pruning
    try:
        return ranker.hits(query, limit, depth, passing)
    finally:
        ranking.USE_KERNEL, ranking.USE_PRUNING = saved


def test_random_searches_give_the_reference_hits(catalog, products, vocabulary):
    rng = random.Random(2024)
    compared = 0
    for _ in range(500):
        q = random_query(rng, vocabulary, products)
        filters = random_filters(rng, products)
        limit = rng.choice([1, 3, 10, 50, 50, 300])
        depth = rng.choice([100_000, 100_000, rng.randint(1, 400)])
        expected = hits(catalog, q, filters, limit, depth, "numpy")
        assert hits(catalog, q, filters, limit, depth, "pruned") == expected, (q, filters, limit, depth)
        compared += 1
    routes = catalog.ranker.routes
    assert compared == 500 and routes["pruned"] >= 490, routes  # (a query of unknown words only has no route)
    windows, skipped, candidates, _ = catalog.ranker.prune_stats.tolist()
    assert skipped > windows // 20, catalog.ranker.prune_stats  # the bounds really skipped windows
    assert routes["pruned_depth_cut"] > 10, routes  # and the depth really cut kept hits


def test_the_depth_cut_bites_as_in_the_reference(catalog, products, vocabulary):
    # Common words and selective filters: the passing hits lie deep, past small depths.
    rng = random.Random(5)
    common = Counter(w for p in products for w in set(analyze(p.contents()))).most_common(30)
    shops = Counter(p.shop_id for p in products)
    for _ in range(150):
        q = " ".join(w for w, _ in rng.sample(common, rng.randint(1, 3)))
        shop = rng.choice(list(shops))
        filters = rng.choice([SearchFilters(shop_id=shop), SearchFilters(price_low=900.0, services=("COD",))])
        for depth in (1, 17, 150, 1000):
            expected = hits(catalog, q, filters, 50, depth, "numpy")
            assert hits(catalog, q, filters, 50, depth, "pruned") == expected, (q, filters, depth)
            assert hits(catalog, q, filters, 50, depth, "exhaustive") == expected, (q, filters, depth)
    assert catalog.ranker.routes["pruned_depth_cut"] > 50


def test_a_shop_search_scores_the_shop_first_and_still_cuts_at_the_depth(catalog, products, vocabulary):
    # A shop's products are scored first (``subset_scores``); their limit-th best bounds the
    # scan from the first window. Long requests, shops large and small, with and without a
    # price bound, limits small and large, depths that bite and one that does not.
    rng = random.Random(77)
    shops = Counter(p.shop_id for p in products)
    ranked = [shop for shop, _ in shops.most_common()]
    catalog.ranker.routes.clear()
    for _ in range(120):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(1, 20))]
        if rng.random() < 0.5:
            words += rng.choice(products).title.split()
        shop = rng.choice(ranked[:5] if rng.random() < 0.5 else ranked)
        filters = rng.choice([SearchFilters(shop_id=shop), SearchFilters(shop_id=shop, price_high=400.0)])
        limit = rng.choice([1, 10, 50, 300])
        for depth in (3, 60, 500, 100_000):
            expected = hits(catalog, " ".join(words), filters, limit, depth, "numpy")
            assert hits(catalog, " ".join(words), filters, limit, depth, "pruned") == expected, (words, filters, depth)
    routes = catalog.ranker.routes
    assert routes["pruned_shop"] == 120 * 4, routes  # every word is known: every search took the shop route
    assert routes["pruned_depth_cut"] > 20, routes  # the seeded scan still cut hits past the depth


def test_the_products_ahead_of_given_hits_are_counted_exactly(catalog, products, vocabulary):
    # ``within_depth`` (the shop route's scan) against a count over every score: hits drawn
    # among products of equal scores as often as not (the buckets hits share), from the
    # best score to the weakest (the widest bucket tables), one hit to sixty, depths that
    # keep all, some or none of them.
    rng = random.Random(31)
    ranker = catalog.ranker
    checked = cut_some = 0
    for _ in range(300):
        query = ranker.query(catalog.query_terms(random_query(rng, vocabulary, products)))
        if not query or min(t.term_id for t in query) < 0:
            continue
        docs, scores = ranker.all_hits(query)
        ranks = ranker.id_rank[docs]
        order = np.lexsort((ranks, -scores))
        docs, scores, ranks = docs[order], scores[order], ranks[order]  # the whole ranking
        if rng.random() < 0.5:  # products of one score
            value = rng.choice(scores.tolist())
            pool = np.flatnonzero(scores == value)
            picked = np.unique(
                np.concatenate([pool[: rng.randint(1, 40)], rng.sample(range(len(docs)), min(3, len(docs)))])
            )
        else:
            picked = np.unique(rng.sample(range(len(docs)), min(len(docs), rng.randint(1, 60))))
        ahead = picked  # in the ranking, the products ahead of a product are those before it
        for depth in {
            1,
            int(ahead[0]) + 1,
            int(ahead[-1]),
            int(ahead[len(ahead) // 2]) + 1,
            rng.randint(1, len(docs) + 1),
        }:
            expected = int((ahead < depth).sum())
            assert ranker.within_depth(query, docs[picked], scores[picked], depth) == expected, (depth, picked)
            cut_some += 0 < expected < len(picked)
            checked += 1
    assert checked > 500 and cut_some > 100, (checked, cut_some)


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Equal products (one title, one length): every score ties, across many windows,
    so only product ids order them; a few stronger and weaker ones among them."""
    rng = random.Random(9)
    rows = []
    for i in range(700):
        title = rng.choice(["desk lamp", "desk lamp", "desk lamp", "desk lamp desk", "lamp shade"])
        pid = str(rng.randrange(10**8, 10**10))
        rows.append(Product(product_id=pid, title=title, price=float(i % 97), shop_id=f"s{i % 3}"))
    rows = list({p.product_id: p for p in rows}.values())
    patch = pytest.MonkeyPatch()
    patch.setattr(score_bounds, "WINDOW_SHIFT", 4)
    try:
        out = tmp_path_factory.mktemp("twins") / "catalog"
        build_index(rows, out)
    finally:
        patch.undo()
    return CatalogIndex(out)


@pytest.mark.parametrize("q", ["desk", "lamp", "desk lamp", "lamp lamp desk", "shade desk"])
def test_ties_across_windows_go_by_product_id(twins, q):
    for limit in (1, 7, 50, 64, 200):
        for filters in (SearchFilters(), SearchFilters(price_low=10.0), SearchFilters(shop_id="s1")):
            for depth in (100_000, 30, 100):
                expected = hits(twins, q, filters, limit, depth, "numpy")
                assert hits(twins, q, filters, limit, depth, "pruned") == expected, (q, limit, filters, depth)


def test_a_bound_below_the_true_best_score_is_caught(catalog, products, vocabulary):
    # The bounds are what makes skipping safe: shrink every term's best den, per window
    # and overall (so its bound falls below its true best score), and the same
    # comparison must fail.
    ranker = catalog.ranker
    bounds = ranker.bounds
    window_max, max_den = np.asarray(bounds.window_max), np.asarray(bounds.max_den)
    wrong = replace(bounds, window_max=1 + (window_max - 1) * 0.25, max_den=1 + (max_den - 1) * 0.25)
    broken = Ranker(replace(ranker.p, bounds=wrong), ranker.terms, ranker.doc_count, ranker.id_rank, len(ranker._sums))
    rng = random.Random(1)
    differ = 0
    for _ in range(100):
        q = random_query(rng, vocabulary, products)
        query = broken.query(catalog.query_terms(q))
        if query:
            differ += broken.hits(query, 50, 100_000) != ranker._hits_numpy(query, 50, 100_000, None)
    assert differ > 10, differ


def test_windows_whose_every_product_matches_list_each_product_once(tmp_path):
    # Candidates are listed without a branch: each posting writes its product one past the
    # last listed. In a window where every product matches, and a second essential term
    # follows the first, that write lands one past the window: the scratch list has the
    # slot, and the kernel refuses a list without it.
    rng = random.Random(5)
    extras = ["", "", " shade", " brass", " brass shade", " led"]
    rows = [
        Product(product_id=str(10**9 + i * 7919), title="desk lamp" + rng.choice(extras), price=float(i % 53),
                shop_id=f"s{i % 4}")
        for i in range(300)
    ]  # fmt: skip
    patch = pytest.MonkeyPatch()
    patch.setattr(score_bounds, "WINDOW_SHIFT", 4)
    try:
        build_index(rows, tmp_path / "catalog")
    finally:
        patch.undo()
    index = CatalogIndex(tmp_path / "catalog")
    for q in ["desk lamp", "desk lamp shade", "lamp desk brass shade led", "brass brass desk"]:
        for limit in (1, 10, 50):
            for filters in (SearchFilters(), SearchFilters(shop_id="s2"), SearchFilters(price_high=20.0)):
                expected = hits(index, q, filters, limit, 100_000, "numpy")
                assert hits(index, q, filters, limit, 100_000, "pruned") == expected, (q, limit, filters)
    assert index.ranker.prune_stats[2] > 0  # the pruned route ran
    index.ranker._seen = np.empty(1 << 4, dtype=np.int32)
    with pytest.raises(ValueError, match="2\\*\\*shift \\+ 1"):
        hits(index, "desk lamp", SearchFilters(), 10, 100_000, "pruned")
