"""Catalog index build and find_product latency, against a brute-force scan.

    .venv/bin/python benchmarks/search.py                  # 100k and 2.5M
    .venv/bin/python benchmarks/search.py --sizes 100000   # quick
    .venv/bin/python benchmarks/search.py --sizes 2500000 --workdir /tmp/b --keep  # reuse the index next run

For each size: build the index from the synthetic generator in a child
process (wall time, the child's peak RSS, size on disk), then time
find_product p50/p99 over queries drawn from the catalog's own titles, with
and without filters. At 100k the same queries also run through a
brute-force BM25 scan over the in-memory catalog (the baseline a query must
never fall back to). Targets on a 2-core machine: 2.5M build < 15 min and
< 8 GiB peak; find_product p50 <= 2 ms and p99 <= 10 ms at 1M, p50 <= 5 ms at 2.5M.

Then the routes table: three query families (the keyword queries above; 2-4 words of
titles, short words included, as benchmarks/search_fidelity.py draws them; the 900
official task requests, when the ShoppingBench tasks are present), each unfiltered,
filtered (price 100-2000, COD, sorted by price) and in the drawn product's shop, through
the pruned route and the exhaustive one (``ranking.USE_PRUNING``) in turn, in this
process; with how often the pruned route handed a search to the exhaustive one
(``Ranker.routes``), and whether both routes gave the same pages.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.shop.index import CatalogIndex, SearchFilters  # noqa: E402
from arena.shop.lucene_analysis import analyze  # noqa: E402
from arena.shop.tools import ShopEnvironment  # noqa: E402
from arena.taskpack.synthetic import generate_products  # noqa: E402

BYTES_PER_PRODUCT_ESTIMATE = 1500  # measured ~1 KB/product on disk; keep headroom


def build_in_child(size: int, seed: int, out: Path) -> dict:
    code = (
        f"import sys, json; sys.path.insert(0, {str(REPO)!r})\n"
        "from arena.taskpack.build import build_catalog\n"
        f"r = build_catalog({str(out)!r}, synthetic={size}, seed={seed})\n"
        "print(json.dumps(r.model_dump()))\n"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    disk = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "products": report["products"],
        "build_s": round(wall, 1),
        "peak_rss_mib": round(max(peak_kib, before) / 1024, 1),
        "disk_mib": round(disk / 2**20, 1),
    }


def sample_queries(size: int, seed: int, n: int) -> tuple[list[str], list[str], list[str]]:
    """Queries made of 2-4 words of sampled products' titles, and those products' ids and shops."""
    rng = random.Random(1234)
    picks = sorted(rng.sample(range(size), min(n, size)))
    queries, ids, shops, wanted = [], [], [], iter(picks)
    target = next(wanted, None)
    for i, product in enumerate(generate_products(size, seed)):
        if i == target:
            words = [w for w in product.title.split() if len(w) > 2]
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
            ids.append(product.product_id)
            shops.append(product.shop_id)
            target = next(wanted, None)
            if target is None:
                break
    return queries, ids, shops


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(math.ceil(q * len(ordered))) - 1)]


def time_queries(fn, queries: list[str]) -> dict:
    fn(queries[0])  # warm the searcher
    times = []
    for q in queries:
        started = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": round(percentile(times, 0.5), 2), "p99_ms": round(percentile(times, 0.99), 2),
            "mean_ms": round(statistics.fmean(times), 2)}  # fmt: skip


class ScanBaseline:
    """BM25 by scanning every product (same analyzer and k1/b, double precision)."""

    def __init__(self, size: int, seed: int) -> None:
        self.docs = []
        df: Counter[str] = Counter()
        for product in generate_products(size, seed):
            tf = Counter(analyze(product.contents()))
            df.update(tf.keys())
            self.docs.append((product, tf, sum(tf.values())))
        self.avgdl = statistics.fmean(d[2] for d in self.docs)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def search(self, q: str, filters: SearchFilters, limit: int = 50) -> list:
        terms = set(analyze(q))
        k1, b = 0.9, 0.4
        scored = []
        for product, tf, length in self.docs:
            if filters.price_low is not None and product.price < filters.price_low:
                continue
            if filters.price_high is not None and product.price > filters.price_high:
                continue
            if any(s not in product.service for s in filters.services):
                continue
            score = 0.0
            for t in terms:
                f = tf.get(t)
                if f:
                    score += self.idf[t] * f * (k1 + 1) / (f + k1 * (1 - b + b * length / self.avgdl))
            if score > 0:
                scored.append((score, product))
        scored.sort(key=lambda x: -x[0])
        return [p for _, p in scored[:limit]]


def title_word_queries(size: int, seed: int, n: int) -> tuple[list[str], list[str]]:
    """2-4 words of sampled titles, any length (as search_fidelity.py's keyword queries), and the shops."""
    rng = random.Random(4321)
    wanted = set(rng.sample(range(size), min(n, size)))
    queries, shops = [], []
    for i, product in enumerate(generate_products(size, seed)):
        if i in wanted:
            words = product.title.split()
            if len(words) >= 2:
                queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
                shops.append(product.shop_id)
            wanted.discard(i)
            if not wanted:
                break
    return queries, shops


def official_requests() -> list[str]:
    try:
        from benchmarks.lucene_texts import task_queries

        return task_queries()
    except OSError:
        return []


def compare_routes(env: ShopEnvironment, families: dict[str, tuple[list[str], list[str]]], repeat: int) -> dict:
    """find_product through the pruned and the exhaustive route, same queries, same process."""
    from arena.shop import ranking

    ranker = env.catalog.ranker
    shapes = {
        "unfiltered": lambda q, shop: {"q": q, "page": 1},
        "filtered": lambda q, shop: {"q": q, "page": 2, "price": "100-2000", "service": "COD", "sort": "priceasc"},
        "in_shop": lambda q, shop: {"q": q, "page": 1, "shop_id": shop, "sort": "order"},
    }
    out: dict = {}
    for family, (queries, shops) in families.items():
        for shape, request in shapes.items():
            calls = [request(q, s) for q, s in zip(queries, shops, strict=True)]
            row: dict = {"n": len(calls)}
            routes = (("pruned", True), ("exhaustive", False))
            times: dict[str, list[float]] = {route: [] for route, _ in routes}
            pages: dict[str, list] = {route: [] for route, _ in routes}
            counted: dict[str, Counter] = {route: Counter() for route, _ in routes}
            for i in range(repeat * len(calls)):
                call = calls[i % len(calls)]
                # both routes on each call in turn, the first alternating: a load spike hits both
                for route, pruning in routes if i % 2 == 0 else routes[::-1]:
                    ranking.USE_PRUNING = pruning
                    if i == 0:
                        env.call("find_product", call)  # warm
                    ranker.routes.clear()
                    started = time.perf_counter()
                    result = env.call("find_product", call)
                    times[route].append((time.perf_counter() - started) * 1000)
                    counted[route] += ranker.routes
                    if i < len(calls):
                        pages[route].append(result.result)
            for route, _ in routes:
                t = times[route]
                row[route] = {"p50_ms": round(percentile(t, 0.5), 2), "p99_ms": round(percentile(t, 0.99), 2),
                              "mean_ms": round(statistics.fmean(t), 2), "routes": dict(counted[route])}  # fmt: skip
            ranking.USE_PRUNING = True
            row["same_pages"] = pages["pruned"] == pages["exhaustive"]
            out[f"{family}/{shape}"] = row
    return out


def print_routes(figures: dict) -> None:
    print(f"\n{figures['products']:,} products: find_product by route (same queries, this process)")
    print(
        "family/request                 n   pruned p50/p99 ms   exhaustive p50/p99 ms  same  pruned run: other routes"
    )
    for name, row in figures["routes"].items():
        p, e = row["pruned"], row["exhaustive"]
        handed = {k: v for k, v in p["routes"].items() if k != "pruned"}
        print(f"{name:<28} {row['n']:>4}  {p['p50_ms']:>7}/{p['p99_ms']:<10}  {e['p50_ms']:>9}/{e['p99_ms']:<12}  "
              f"{'yes' if row['same_pages'] else 'NO':>4}  {handed or '-'}")  # fmt: skip


def run_size(size: int, seed: int, workdir: Path, n_queries: int, scan: bool, keep: bool, repeat: int = 1) -> dict:
    need = size * BYTES_PER_PRODUCT_ESTIMATE
    free = shutil.disk_usage(workdir).free
    if free < need * 2:
        return {"products": size, "skipped": f"needs ~{need / 2**30:.1f} GiB free, {free / 2**30:.1f} GiB available"}
    out = workdir / f"catalog-{size}"
    if keep and (out / "catalog.json").is_file():
        figures = {"products": size, "build_s": "reused", "peak_rss_mib": "-", "disk_mib": "-"}
    else:
        figures = build_in_child(size, seed, out)
    catalog = CatalogIndex(out)
    env = ShopEnvironment(catalog)
    queries, ids, shops = sample_queries(size, seed, n_queries)
    figures["find_product"] = time_queries(lambda q: env.call("find_product", {"q": q, "page": 1}), queries)
    figures["find_product_filtered"] = time_queries(
        lambda q: env.call(
            "find_product", {"q": q, "page": 2, "price": "100-2000", "service": "COD", "sort": "priceasc"}
        ),
        queries,
    )
    in_shop = dict(zip(queries, shops, strict=True))
    figures["find_product_in_shop"] = time_queries(
        lambda q: env.call("find_product", {"q": q, "page": 1, "shop_id": in_shop[q], "sort": "order"}), queries
    )
    figures["get_by_id"] = time_queries(catalog.get, ids)
    families = {"keyword": (queries, shops), "title_words": title_word_queries(size, seed, n_queries)}
    requests = official_requests()
    if requests:
        families["official_requests"] = (requests, [shops[i % len(shops)] for i in range(len(requests))])
    figures["routes"] = compare_routes(env, families, repeat)
    if scan:
        baseline = ScanBaseline(size, seed)
        figures["scan_baseline"] = time_queries(lambda q: baseline.search(q, SearchFilters()), queries[:30])
        figures["scan_baseline_filtered"] = time_queries(
            lambda q: baseline.search(q, SearchFilters(price_low=100, price_high=2000, services=("COD",))), queries[:30]
        )
    if not keep:
        shutil.rmtree(out)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,2500000")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the built index in --workdir and reuse it next time")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the queries in the routes table")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="arena-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        figures = run_size(
            size, args.seed, workdir, args.queries, scan=size <= 100_000, keep=args.keep, repeat=args.repeat
        )
        results.append(figures)
        print(json.dumps(figures), flush=True)
        print_routes(figures)
    print(
        "\nsize        build_s  peak_MiB  disk_MiB  find p50/p99 ms  filtered p50/p99 ms  in-shop p50/p99 ms  scan p50 ms"
    )
    for r in results:
        if "skipped" in r:
            print(f"{r['products']:>10,}  skipped: {r['skipped']}")
            continue
        scan = r.get("scan_baseline", {}).get("p50_ms", "-")
        print(f"{r['products']:>10,}  {r['build_s']:>7}  {r['peak_rss_mib']:>8}  {r['disk_mib']:>8}  "
              f"{r['find_product']['p50_ms']:>6}/{r['find_product']['p99_ms']:<8}  "
              f"{r['find_product_filtered']['p50_ms']:>6}/{r['find_product_filtered']['p99_ms']:<12}  "
              f"{r['find_product_in_shop']['p50_ms']:>6}/{r['find_product_in_shop']['p99_ms']:<11}  {scan}")  # fmt: skip


if __name__ == "__main__":
    main()
