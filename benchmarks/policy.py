"""ASR of the built-in heuristic policy, per intent, with the real scorer (official and strict).

Two sources of problems:

- ``--problems FILE... --catalog DIR [--knowledge DIR]``: task files (e.g. the
  official 900 with a task-pack catalog, or ``arena problems generate``
  output) against their catalog;
- default: a seeded synthetic catalog (``--products``, ``--seed``) and problems
  made here from it, so the figure exists without any other component:
  easy product problems (title words + a price range), two-item shop
  problems (one shop), two-item voucher problems (a fixed platform voucher
  the basket needs) and knowledge riddles (a founder's label, answered by a
  small local knowledge corpus).

Every episode is the agentic loop (``arena.policy.rollout``): the policy sees
the dialogue, emits tool calls, the real ``ShopEnvironment`` executes them.

- ``--generator``: the same catalog, with problems from the project's
  generator (``arena.generator.generate``, the engine of ``arena problems generate``).

Run: ``.venv/bin/python benchmarks/policy.py [--n 100] [--products 20000] [--seed 1] [--generator]``
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.policy.policy import HeuristicPolicy  # noqa: E402
from arena.policy.rollout import rollout  # noqa: E402
from arena.problems.model import Intent, Problem  # noqa: E402
from arena.problems.official import load_problems, parse_row  # noqa: E402
from arena.scoring import ScoreMode, score_problem  # noqa: E402
from arena.shop.index import CatalogIndex, build_index  # noqa: E402
from arena.shop.knowledge import KnowledgeDocument, LocalKnowledgeBase, build_knowledge_index  # noqa: E402
from arena.shop.product import Product  # noqa: E402
from arena.shop.tools import KNOWLEDGE_TOOLS, SHOP_TOOLS, ShopEnvironment  # noqa: E402
from arena.taskpack.synthetic import generate_products  # noqa: E402

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_PEOPLE = ("Amelia Grant", "Jonas Ferreira", "Mika Tanaka", "Rosa Villanueva", "Henrik Aalto", "Lena Okafor",
           "Marco Bellini", "Sofia Lindqvist", "Tomas Reyes", "Yara Haddad", "Ines Duarte", "Kofi Mensah")  # fmt: skip


def title_words(product: Product, rng: random.Random, keep: float = 0.7) -> str:
    """Most of the title's words, in order: how a shopper would paraphrase a listing."""
    tokens = _WORD.findall(product.title)
    kept = [t for t in tokens if rng.random() < keep] or tokens[:3]
    return " ".join(kept).lower()


def price_band(price: float, rng: random.Random) -> tuple[int, int]:
    return math.floor(price * rng.uniform(0.7, 0.95)), math.ceil(price * rng.uniform(1.05, 1.3))


def product_problem(p: Product, rng: random.Random, index: int) -> Problem:
    lo, hi = price_band(p.price, rng)
    query = f"Looking for {title_words(p, rng)} priced between {lo} and {hi} pesos."
    row = {"query": query, "reward": {"product_id": p.product_id, "title": [p.title],
                                      "price": [{"between": [lo, hi]}]}}  # fmt: skip
    return parse_row({**row, "id": f"bench-product-{index}", "difficulty": "easy"})


def shop_problem(products: list[Product], rng: random.Random, index: int) -> Problem:
    parts = [f"({i + 1}) {title_words(p, rng, 0.8)}" for i, p in enumerate(products)]
    query = "Find a shop that offers these items: " + "; ".join(parts) + ". The shop should sell all these products."
    reward = [{"product_id": p.product_id, "title": [p.title]} for p in products]
    return parse_row({"query": query, "reward": reward, "id": f"bench-shop-{index}", "intent": "shop"})


def voucher_problem(products: list[Product], rng: random.Random, index: int) -> Problem:
    total = sum(p.price for p in products)
    face = math.ceil(total * 0.2)
    threshold = math.floor(total * 0.8)
    budget = math.ceil(total - face * 0.5)
    items = " and ".join(f"a {title_words(p, rng, 0.8)}" for p in products)
    query = (
        f"I'm looking for {items}.\n\nMy budget is only `{budget}`, but I have a voucher with the following rules:\n"
        f"1. The voucher applies to all products.\n2. It is valid only when the total price of the products exceeds "
        f"`{threshold}`.\n3. It provides a fixed discount of `{face}`."
    )
    voucher = {"voucher_type": "platform", "threshold": threshold, "discount_type": "fixed", "face_value": face,
               "discount": None, "cap": None, "price_after_voucher": total - face, "budget": budget}  # fmt: skip
    reward = [{"product_id": p.product_id, "title": [p.title]} for p in products]
    return parse_row({"query": query, "reward": reward, "voucher": voucher, "id": f"bench-voucher-{index}"})


def knowledge_problem(p: Product, rng: random.Random, index: int) -> tuple[Problem, list[KnowledgeDocument]]:
    person = f"{rng.choice(_PEOPLE)} {index}"
    year = rng.randint(1950, 2015)
    noun = " ".join(w for w in title_words(p, rng, 0.6).split() if w not in p.brand.lower().split())
    query = f"Which label did the designer {person} found in {year}? I would like to buy {noun} from this label."
    # The answer page is planted for this problem only; the interview is a neutral distractor every episode reads.
    docs = [
        KnowledgeDocument(doc_id=f"k{index}", url=f"https://example.invalid/wiki/{index}", title=f"{person}",
                          content=f"{person} is a designer. In {year}, {person} founded the label {p.brand}, "
                          f"which still sells goods today.", problems=[f"bench-knowledge-{index}"]),
        KnowledgeDocument(doc_id=f"k{index}-noise", url=f"https://example.invalid/news/{index}",
                          title=f"{person} interview", content=f"An interview with {person} about design in {year}."),
    ]  # fmt: skip
    row = {"query": query, "Knowledge_Attribute": p.brand, "reward": p.model_dump(), "id": f"bench-knowledge-{index}"}
    return parse_row(row), docs


def synthetic_suite(products: list[Product], n: int, seed: int) -> tuple[list[Problem], list[KnowledgeDocument]]:
    rng = random.Random(seed)
    by_shop: dict[str, list[Product]] = defaultdict(list)
    for p in products:
        by_shop[p.shop_id].append(p)
    big_shops = sorted(s for s, ps in by_shop.items() if len(ps) >= 2)
    branded = [p for p in products if p.brand]
    problems: list[Problem] = []
    docs: list[KnowledgeDocument] = []
    for i in range(n):
        problems.append(product_problem(rng.choice(products), rng, i))
        problems.append(shop_problem(rng.sample(by_shop[rng.choice(big_shops)], 2), rng, i))
        problems.append(voucher_problem(rng.sample(products, 2), rng, i))
        problem, knowledge = knowledge_problem(rng.choice(branded), rng, i)
        problems.append(problem)
        docs.extend(knowledge)
    return problems, docs


def generated_suite(catalog: CatalogIndex, n: int, seed: int) -> tuple[list[Problem], list[KnowledgeDocument]]:
    """Problems from the project's generator (``arena problems generate``'s engine), n per intent."""
    from arena.generator.generate import GeneratorConfig, generate

    result = generate(catalog, GeneratorConfig(n=4 * n, seed=seed))
    return result.problems, result.documents


def measure(problems: list[Problem], catalog: CatalogIndex, knowledge, seed: int, temperature: float) -> None:
    policy = HeuristicPolicy(seed)
    results: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    turns: list[int] = []
    started = time.perf_counter()
    for problem in problems:
        is_knowledge = problem.intent is Intent.knowledge and knowledge is not None
        env = ShopEnvironment(catalog, knowledge.for_problem(problem.id) if is_knowledge else None,
                              allowed=KNOWLEDGE_TOOLS if is_knowledge else SHOP_TOOLS)  # fmt: skip
        done = rollout(policy, env, problem.query, temperature=temperature)
        turns.append(done.turns)
        for mode in ScoreMode:
            verdict = score_problem(problem, done.recommended, catalog, mode=mode)
            for key in ((problem.intent.value, "all"), (problem.intent.value, problem.difficulty.value)):
                results[key][mode.value].append(verdict.success)
    seconds = time.perf_counter() - started
    print(f"{'intent':<10} {'difficulty':<10} {'n':>5} {'official':>9} {'strict':>9}")
    for intent in ("product", "shop", "voucher", "knowledge"):
        for difficulty in ("all", "easy", "medium", "hard"):
            row = results.get((intent, difficulty))
            if not row or (difficulty != "all" and len(row["official"]) == len(results[(intent, "all")]["official"])):
                continue  # a single-difficulty intent is shown once, as "all"
            n = len(row["official"])
            official, strict = sum(row["official"]) / n, sum(row["strict"]) / n
            print(f"{intent:<10} {difficulty:<10} {n:>5} {official:>9.1%} {strict:>9.1%}")
    total = [s for key, row in results.items() if key[1] == "all" for s in row["official"]]
    strict = [s for key, row in results.items() if key[1] == "all" for s in row["strict"]]
    print(f"{'all':<10} {'':<10} {len(total):>5} {sum(total) / len(total):>9.1%} {sum(strict) / len(strict):>9.1%}")
    print(f"{len(problems)} episodes in {seconds:.1f}s ({len(problems) / seconds:.1f}/s), "
          f"mean {sum(turns) / len(turns):.1f} assistant turns")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=Path, nargs="*", help="task files (default: synthetic problems)")
    parser.add_argument("--catalog", type=Path, help="catalog index directory for --problems")
    parser.add_argument("--knowledge", type=Path, help="knowledge index directory for knowledge problems")
    parser.add_argument("--n", type=int, default=100, help="synthetic problems per intent")
    parser.add_argument("--generator", action="store_true",
                        help="problems from arena.generator.generate instead of this script's own")  # fmt: skip
    parser.add_argument("--products", type=int, default=20_000, help="synthetic catalog size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--limit", type=int, help="only the first N problems of --problems")
    args = parser.parse_args()
    if args.problems:
        if args.catalog is None:
            parser.error("--problems needs --catalog")
        problems = load_problems(*args.problems)[: args.limit]
        knowledge = LocalKnowledgeBase(args.knowledge) if args.knowledge else None
        print(f"{len(problems)} problems from {', '.join(map(str, args.problems))}; catalog {args.catalog}")
        measure(problems, CatalogIndex(args.catalog), knowledge, args.seed, args.temperature)
        return
    with tempfile.TemporaryDirectory() as tmp:
        products = list(generate_products(args.products, args.seed))
        build_index(products, Path(tmp) / "catalog", source={"kind": "synthetic", "seed": args.seed})
        catalog = CatalogIndex(Path(tmp) / "catalog")
        if args.generator:
            problems, docs = generated_suite(catalog, args.n, args.seed)
        else:
            problems, docs = synthetic_suite(products, args.n, args.seed)
        build_knowledge_index(docs, Path(tmp) / "knowledge")
        source = "arena.generator.generate" if args.generator else "this script"
        print(f"synthetic catalog: {len(products)} products (seed {args.seed}); {len(problems)} problems from {source}")
        measure(problems, catalog, LocalKnowledgeBase(Path(tmp) / "knowledge"), args.seed, args.temperature)


if __name__ == "__main__":
    main()
