"""Throughput of the outcome scorer with the lexical title similarity.

Builds a catalog from the 900 official tasks' gold information plus one
near-miss distractor per gold product (same words reordered with a tail, other
ids, other attributes), replicates the tasks, and answers them with a mix of
gold ids (the id shortcut), near-misses (the similarity path) and unrelated
products. It scores the whole set in three settings (best of --repeats runs each) and\nprints problems/second:

- uncached: a LexicalSimilarity with a zero-size pair cache;
- cold: a fresh pair cache, filled during the run (replicas already hit it);
- warm: the same set again with the cache filled.

Run: ``.venv/bin/python benchmarks/scoring.py [--replicas 5] [--data DIR]``
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.problems.model import Intent, Problem  # noqa: E402
from arena.problems.official import load_problems  # noqa: E402
from arena.scoring import (  # noqa: E402
    LexicalSimilarity,
    ScoreMode,
    asr,
    normalize_title,
    score_problem,
)
from arena.shop.catalog import InMemoryCatalog  # noqa: E402
from arena.shop.product import Product  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/shoppingbench"


def build_catalog(problems: list[Problem], rng: random.Random) -> InMemoryCatalog:
    products: dict[str, Product] = {}
    golds: list[tuple[str, str]] = []
    for p in problems:
        if p.intent is Intent.knowledge:
            assert p.knowledge is not None
            gold = p.knowledge.product
            products[gold.product_id] = gold
            golds.append((gold.product_id, gold.title))
            continue
        for r in p.rewards:
            attrs = {k: list(v) for a in r.attributes for k, v in a.items()}
            option = {k: v for o in r.sku_options for k, v in o.items()}
            products.setdefault(
                r.product_id,
                Product(
                    product_id=r.product_id,
                    shop_id=f"shop-{p.id}",
                    title=r.title[0] if r.title else "",
                    price=10.0,
                    attributes=attrs,
                    sku_options={"1": option} if option else {},
                    service=[s for s in r.service if s in ("official", "freeShipping", "COD", "flashsale")],
                ),
            )
            golds.append((r.product_id, r.title[0] if r.title else ""))
    for gid, title in golds:
        words = title.split()
        rng.shuffle(words)
        products[f"near-{gid}"] = Product(
            product_id=f"near-{gid}",
            shop_id="shop-near",
            title=" ".join(words + ["new", "2024", "original"]),
            price=rng.uniform(5, 500),
            attributes={"color": [rng.choice(["red", "blue", "black"])]},
            sku_options={"1": {"size": "m"}, "2": {"size": "xl"}},
            service=["COD"],
        )
    return InMemoryCatalog(products.values())


def build_answers(problems: list[Problem], replicas: int, rng: random.Random) -> list[tuple[Problem, list[str]]]:
    all_golds = [g for p in problems for g in p.gold_product_ids()]
    work: list[tuple[Problem, list[str]]] = []
    for _ in range(replicas):
        for p in problems:
            answer = []
            for gid in p.gold_product_ids():
                style = rng.random()
                if style < 0.3:
                    answer.append(gid)
                elif style < 0.8:
                    answer.append(f"near-{gid}")
                else:
                    answer.append(f"near-{rng.choice(all_golds)}")
            work.append((p, answer))
    return work


def run(work, catalog, mode: ScoreMode, similarity: LexicalSimilarity) -> tuple[float, float]:
    start = time.perf_counter()
    scores = [score_problem(p, ans, catalog, mode, similarity) for p, ans in work]
    elapsed = time.perf_counter() - start
    return len(work) / elapsed, asr(scores).asr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--replicas", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"official tasks not found at {args.data}")
    rng = random.Random(args.seed)
    problems = load_problems(*sorted(args.data.glob("*.jsonl")))
    catalog = build_catalog(problems, rng)
    work = build_answers(problems, args.replicas, rng)
    print(f"{len(work)} problems ({len(problems)} official x {args.replicas}), catalog of {len(catalog)} products")
    for mode in ScoreMode:
        uncached = cold = warm = 0.0
        for _ in range(args.repeats):  # best of N: the host may be shared
            normalize_title.cache_clear()
            uncached = max(uncached, run(work, catalog, mode, LexicalSimilarity(cache_size=0))[0])
            sim = LexicalSimilarity()
            sim.cache_clear()  # also clears the normalized-title cache
            rate, success_rate = run(work, catalog, mode, sim)
            cold = max(cold, rate)
            info = sim.cache_info()
            warm = max(warm, run(work, catalog, mode, sim)[0])
        print(
            f"{mode.value:8s} uncached {uncached:9,.0f}/s | cold cache {cold:9,.0f}/s "
            f"| warm cache {warm:9,.0f}/s | pairs cached {info.currsize:,} "
            f"(cold-run hit rate {info.hits / max(1, info.hits + info.misses):.0%}) | ASR {success_rate:.3f}"
        )


if __name__ == "__main__":
    main()
