"""find_product against the official search stack (pyserini 1.0.0 / Anserini 1.0.0), on one documents file.

    .venv/bin/python benchmarks/search_fidelity.py --install             # the peer env, once (~5 min)
    .venv/bin/python benchmarks/search_fidelity.py                       # 100k and 1M
    .venv/bin/python benchmarks/search_fidelity.py --sizes 20000 --workdir /tmp/f --keep   # quick, reusable
    .venv/bin/python benchmarks/search_fidelity.py --fixtures            # regenerate the Lucene token fixture
    .venv/bin/python benchmarks/search_fidelity.py --dev-tokens out.jsonl   # Lucene tokens of tasks + catalog

pyserini runs in its own virtual environment (default ~/.cache/arena/pyserini-env, made by
--install), in a child process (benchmarks/lucene_peer.py): the project venv never imports it.
The project side uses only its public surface: build_catalog, CatalogIndex, ShopEnvironment.

For each size: write the synthetic catalog (seeded) as one official documents file, build the
project index and the Lucene index (build_index.sh's options) from it, then print
(a) fidelity per query family (the 900 official task requests, >= 2,000 keyword queries of
    2-4 title words): same page-1 set, same page-1 order, Jaccard@10, same top-50, against
    pyserini's search(q, k=100000, remove_dups=True) as the official server calls it;
(b) filtered and sorted requests: the project's page vs the official server's logic run on
    pyserini (price bounds incl. "nan", services incl. an untrimmed " COD", sorts, pages 1-5);
(c) latency p50/p99: project find_product for requests and keyword queries, each unfiltered,
    filtered and in one shop; pyserini k=50; the official logic;
and both builds' wall time and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.lucene_client import DEFAULT_ENV, Peer, install  # noqa: E402
from benchmarks.lucene_texts import fixture_texts, task_queries, task_titles  # noqa: E402

FIXTURE = REPO / "tests" / "support" / "fixtures" / "lucene_english_tokens.json"
OFFICIAL_DEPTH = 100_000  # server.py's CAPACITY
TOP = 50  # server.py keeps 50 survivors (5 pages of 10)


# --- Lucene tokens: the committed fixture and the dev file -------------------------------------


def write_fixtures(env: Path) -> None:
    texts = fixture_texts()
    with Peer(env) as peer:
        tokens = peer.request({"op": "analyze", "texts": texts})["tokens"]
    rows = [{"text": t, "tokens": k} for t, k in zip(texts, tokens, strict=True)]
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(rows, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{FIXTURE.relative_to(REPO)}: {len(rows)} texts, {FIXTURE.stat().st_size / 1024:.0f} KiB")


def write_dev_tokens(env: Path, out: Path, products: int, seed: int) -> None:
    """Lucene's tokens for every official request and title, the fixture's texts, and the
    contents of ``products`` synthetic products: a larger check than the fixture."""
    from arena.taskpack.synthetic import generate_products

    texts = list(dict.fromkeys([*fixture_texts(), *task_queries(), *task_titles()]))
    texts += [p.contents() for p in generate_products(products, seed)]
    with Peer(env) as peer, out.open("w", encoding="utf-8") as handle:
        for start in range(0, len(texts), 2000):
            batch = texts[start : start + 2000]
            for text, tokens in zip(batch, peer.request({"op": "analyze", "texts": batch})["tokens"], strict=True):
                handle.write(json.dumps({"text": text, "tokens": tokens}, ensure_ascii=False) + "\n")
    print(f"{out}: {len(texts)} texts")


# --- one size: documents, both indexes, queries ------------------------------------------------


def write_documents(path: Path, size: int, seed: int) -> None:
    from arena.shop.documents import document_row
    from arena.taskpack.synthetic import generate_products

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with partial.open("wb") as handle:
        for product in generate_products(size, seed):
            handle.write(document_row(product) + b"\n")
    partial.rename(path)


def build_project(documents: Path, out: Path) -> dict:
    """build_catalog from the documents file, in a child measured alone (wall, peak RSS)."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
        "from arena.taskpack.build import build_catalog\n"
        f"build_catalog({str(out)!r}, documents={str(documents)!r})\n"
    )
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"project build failed ({child.returncode})")
    return {"build_s": round(time.perf_counter() - started, 1), "peak_rss_mib": round(usage.ru_maxrss / 1024)}


def build_lucene(args, documents: Path, out: Path) -> dict:
    """Anserini's IndexCollection with build_index.sh's options, in its own peer child."""
    peer = Peer(args.env, args.peer_heap, args.verbose)
    peer.request({"op": "index", "input": str(documents.parent), "index": str(out)})
    figures = peer.close()
    return {"build_s": round(figures["wall_s"], 1), "peak_rss_mib": round(figures["peak_rss_mib"])}


def disk_mib(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


def keyword_queries(documents: Path, size: int, n: int, seed: int) -> dict[str, str]:
    """n distinct queries of 2-4 words of seeded catalog titles (words shuffled), each with
    its product's shop. Twice n products are drawn, so short titles and repeats still leave n."""
    rng = random.Random(seed)
    order = rng.sample(range(size), min(2 * n, size))
    drawn: dict[int, tuple[str, str]] = {}
    wanted = set(order)
    with documents.open("rb") as handle:
        for i, line in enumerate(handle):
            if i in wanted:
                product = json.loads(line)["product"]
                words = product["title"].split()
                if len(words) >= 2:
                    q = " ".join(rng.sample(words, min(len(words), rng.randint(2, 4))))
                    drawn[i] = (q, product["shop_id"])
    queries: dict[str, str] = {}
    for i in order:
        if i in drawn and len(queries) < n:
            queries.setdefault(*drawn[i])
    return queries


def official_families() -> dict[str, list[str]]:
    from benchmarks.lucene_texts import TASK_FILES, task_rows

    families: dict[str, list[str]] = {}
    for name in TASK_FILES:
        family = name.removeprefix("synthesize_").removesuffix("_test.jsonl")
        families[family] = [r["query"] for r in task_rows((name,))]
    return families


# --- (a) fidelity -----------------------------------------------------------------------------


def project_top(env, q: str, pages: int = TOP // 10, **filters) -> list[str]:
    ids: list[str] = []
    for page in range(1, pages + 1):
        result = env.call("find_product", {"q": q, "page": page, **filters})
        if not result.ok:
            raise SystemExit(f"find_product failed on {q!r}: {result.error}")
        ids += [p["product_id"] for p in result.result]
        if len(result.result) < 10:
            break
    return ids


def fidelity_row(pairs: list[tuple[list[str], list[str]]]) -> dict:
    n = len(pairs)
    jaccard = [
        len(set(a[:10]) & set(b[:10])) / len(set(a[:10]) | set(b[:10])) if (a[:10] or b[:10]) else 1.0 for a, b in pairs
    ]
    return {
        "queries": n,
        "page1_set": sum(set(a[:10]) == set(b[:10]) for a, b in pairs) / n,
        "page1_order": sum(a[:10] == b[:10] for a, b in pairs) / n,
        "jaccard10": sum(jaccard) / n,
        "top50_set": sum(set(a[:TOP]) == set(b[:TOP]) for a, b in pairs) / n,
        "top50_order": sum(a[:TOP] == b[:TOP] for a, b in pairs) / n,
    }


# --- (b) filtered and sorted requests ---------------------------------------------------------

PRICES = (None, "100-2000", "0-150", "500-", "-300", "nan-500", "200-nan", "nan-nan", "abc-100", "1-2-3", "50")
SERVICES = (None, "COD", " COD", "COD,official", "official, COD", "freeShipping,flashsale", "COD,COD", "bogus", "")
SORTS = (None, "order", "priceasc", "pricedesc", "bogus")
PAGES = ("1", "1", "2", "3", "5", "0", "6")


def filtered_requests(queries: list[str], shops: dict[str, str], n: int, seed: int) -> list[dict]:
    """Seeded requests over every filter, sort and page case; a keyword query sometimes also
    asks for the shop of the product it was drawn from."""
    rng = random.Random(seed)
    requests = []
    for q in rng.sample(queries, min(n, len(queries))):
        r = {"q": q, "page": rng.choice(PAGES)}
        for key, choices in (("price", PRICES), ("service", SERVICES), ("sort", SORTS)):
            value = rng.choice(choices)
            if value is not None:
                r[key] = value
        if q in shops and rng.random() < 0.3:
            r["shop_id"] = shops[q]
        requests.append(r)
    return requests


# --- (c) latency ------------------------------------------------------------------------------


def latency(ms: list[float]) -> dict:
    cuts = statistics.quantiles(ms, n=100, method="inclusive")
    return {"p50_ms": round(statistics.median(ms), 2), "p99_ms": round(cuts[98], 2), "n": len(ms)}


def timed(fn, items) -> list[float]:
    times = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - started) * 1000)
    return times


def project_latency(env, families: dict[str, list[str]], shops: dict[str, str]) -> dict:
    """find_product p50/p99 per query kind (the official requests, the keyword queries), each unfiltered,
    filtered (price, service, a sort, page 2) and in one shop (a keyword query's own shop; the official
    requests take the keyword queries' shops in turn), run after the peer has exited."""
    requests = [q for family, qs in families.items() if family != "keyword" for q in qs]
    keyword = families["keyword"]
    ring = [shops[q] for q in keyword]
    kinds = {
        "request": [(q, ring[i % len(ring)]) for i, q in enumerate(requests)],
        "keyword": [(q, shops[q]) for q in keyword],
    }
    shapes = {
        "": lambda q, shop: {"q": q, "page": 1},
        ", filtered": lambda q, shop: {"q": q, "page": 2, "price": "100-2000", "service": "COD", "sort": "priceasc"},
        ", in shop": lambda q, shop: {"q": q, "page": 1, "shop_id": shop, "sort": "order"},
    }
    out = {}
    for kind, pairs in kinds.items():
        for shape, request in shapes.items():
            calls = [request(q, shop) for q, shop in pairs]
            env.call("find_product", dict(calls[0]))  # warm
            out[f"project {kind}{shape}"] = latency(timed(lambda c: env.call("find_product", dict(c)), calls))
    return out


def run_size(args, size: int, workdir: Path) -> dict:
    from arena.shop.index import CatalogIndex
    from arena.shop.tools import ShopEnvironment

    base = workdir / f"fidelity-{size}-seed{args.seed}"
    documents = base / "documents" / "documents.jsonl"
    project_dir, lucene_dir = base / "project-index", base / "lucene-index"
    figures: dict = {"products": size, "seed": args.seed}
    if not documents.is_file():
        started = time.perf_counter()
        write_documents(documents, size, args.seed)
        figures["documents_s"] = round(time.perf_counter() - started, 1)
    if args.rebuild_project or not (project_dir / "catalog.json").is_file():
        shutil.rmtree(project_dir, ignore_errors=True)
        figures["project_build"] = build_project(documents, project_dir)
    if not any(lucene_dir.glob("segments_*")):
        shutil.rmtree(lucene_dir, ignore_errors=True)
        figures["lucene_build"] = build_lucene(args, documents, lucene_dir)
    figures["disk_mib"] = {"project": disk_mib(project_dir), "lucene": disk_mib(lucene_dir)}
    print(json.dumps(figures), flush=True)

    families = official_families()
    shops = keyword_queries(documents, size, args.keyword_queries, args.seed)
    families["keyword"] = list(shops)
    everything = [q for qs in families.values() for q in qs]
    env = ShopEnvironment(CatalogIndex(project_dir))
    with Peer(args.env, args.peer_heap, args.verbose) as peer:
        peer.request({"op": "open", "index": str(lucene_dir)})
        # The reference top 50 comes from k=50: Lucene ranks by (score, id) -- a total order, so
        # the first 50 of k=100000 are the same 50 (checked below on a seeded subset), and a
        # k=100000 search loads every hit's stored document (~1 s a query at 1M).
        k50 = peer.request({"op": "search", "queries": everything, "k": TOP})
        official = {q: [d for d, _ in h] for q, h in zip(everything, k50["hits"], strict=True)}
        deep_sample = random.Random(args.seed).sample(everything, min(args.deep_check, len(everything)))
        deep = peer.request({"op": "search", "queries": deep_sample, "k": OFFICIAL_DEPTH, "keep": TOP})["hits"]
        figures["k50_equals_k100000_top50"] = sum(
            [d for d, _ in h] == official[q] for q, h in zip(deep_sample, deep, strict=True)
        ) / len(deep_sample)
        requests = filtered_requests(everything, shops, args.filtered_requests, args.seed)
        served = peer.request({"op": "official", "requests": requests})
    project = {q: project_top(env, q) for q in everything}
    fidelity = {family: fidelity_row([(project[q], official[q]) for q in qs]) for family, qs in families.items()}
    fidelity["all"] = fidelity_row([(project[q], official[q]) for q in everything])
    mismatches = []
    for request, page in zip(requests, served["pages"], strict=True):
        mine = env.call("find_product", dict(request))
        if not mine.ok or [p["product_id"] for p in mine.result] != [p["product_id"] for p in page]:
            mismatches.append(request)
    same_records = sum(
        env.call("find_product", dict(r)).result == p for r, p in zip(requests, served["pages"], strict=True)
    )
    # Where the unfiltered top 50 already agree, a differing page points at the request handling,
    # or at the ranking below the 50th hit, which the filters reach.
    agreeing = [r for r in requests if project[r["q"]] == official[r["q"]]]
    figures["fidelity"] = fidelity
    figures["filtered"] = {
        "requests": len(requests),
        "same_page_ids": 1 - len(mismatches) / len(requests),
        "same_page_records": same_records / len(requests),
        "ranking_agrees": len(agreeing),
        "ranking_agrees_but_differs": [r for r in agreeing if r in mismatches],
        "examples": mismatches[:5],
    }
    figures["latency"] = project_latency(env, families, shops)
    figures["latency"]["pyserini_k50"] = latency(k50["ms"])
    figures["latency"]["official_logic"] = latency(served["ms"])
    if not args.keep:
        shutil.rmtree(base)
    return figures


def print_tables(results: list[dict], commit: str) -> None:
    print(f"\nproject commit {commit}; reference: pyserini 1.0.0 LuceneSearcher.search(q, k=100000, remove_dups=True)")
    for r in results:
        print(f"\n== {r['products']:,} products (seed {r['seed']}) ==")
        for side in ("project_build", "lucene_build"):
            if side in r:
                print(f"{side}: {r[side]['build_s']} s, peak RSS {r[side]['peak_rss_mib']} MiB")
        print(f"disk MiB: {r['disk_mib']}; k=50 top 50 == k=100000 top 50: {r['k50_equals_k100000_top50']:.1%}")
        print("\n(a) fidelity     queries  page1-set  page1-order  Jaccard@10  top50-set  top50-order")
        for family, f in r["fidelity"].items():
            print(f"{family:<15} {f['queries']:>7}  {f['page1_set']:>9.1%}  {f['page1_order']:>11.1%}  "
                  f"{f['jaccard10']:>10.3f}  {f['top50_set']:>9.1%}  {f['top50_order']:>11.1%}")  # fmt: skip
        b = r["filtered"]
        print(f"\n(b) filtered/sorted vs official logic: {b['requests']} requests, same page ids "
              f"{b['same_page_ids']:.1%}, same records {b['same_page_records']:.1%}")  # fmt: skip
        print(f"    {b['ranking_agrees']} of them on queries whose unfiltered top 50 agree; of those, "
              f"{len(b['ranking_agrees_but_differs'])} differ (request handling, or ranks below 50 that a filter reached):")  # fmt: skip
        for example in b["ranking_agrees_but_differs"][:10]:
            print(f"      {json.dumps(example)}")
        for example in b["examples"]:
            print(f"    differs: {json.dumps(example)[:300]}")
        print("\n(c) latency                           p50 ms    p99 ms      n")
        for name, t in r["latency"].items():
            print(f"{name:<35} {t['p50_ms']:>8} {t['p99_ms']:>9} {t['n']:>6}")


def run_sizes(args) -> None:
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="arena-fidelity-"))
    workdir.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    results = []
    for size in args.sizes:
        results.append(run_size(args, size, workdir))
        print(json.dumps(results[-1]), flush=True)
    print_tables(results, commit.stdout.strip() or "unknown")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install", action="store_true", help="create the pyserini peer environment and exit")
    parser.add_argument("--env", type=Path, default=DEFAULT_ENV, help="the peer environment (default %(default)s)")
    parser.add_argument("--fixtures", action="store_true", help=f"rewrite {FIXTURE.relative_to(REPO)} and exit")
    parser.add_argument("--dev-tokens", type=Path, help="write Lucene tokens of tasks and catalog texts and exit")
    parser.add_argument("--dev-products", type=int, default=20_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keyword-queries", type=int, default=2000)
    parser.add_argument(
        "--filtered-requests", type=int, default=300, help="through the official logic (1-5 s each at 1M here)"
    )
    parser.add_argument("--deep-check", type=int, default=200, help="queries whose k=100000 top 50 is compared")
    parser.add_argument("--peer-heap", default="4g", help="the peer JVM's -Xmx (default %(default)s)")
    parser.add_argument("--verbose", action="store_true", help="show the JVM's and Anserini's logs")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the documents and both indexes; reuse them next run")
    parser.add_argument(
        "--rebuild-project", action="store_true", help="rebuild the project index even if kept (the engine changed)"
    )
    args = parser.parse_args()
    if args.install:
        install(args.env)
        return
    if args.fixtures:
        write_fixtures(args.env)
        return
    if args.dev_tokens:
        write_dev_tokens(args.env, args.dev_tokens, args.dev_products, args.seed)
        return
    run_sizes(args)


if __name__ == "__main__":
    main()
