"""The leak-cluster guard on hard cases: deep variants merge, look-alikes stay apart.

The labelled set (tests/support/data/cluster_pairs.jsonl) is written by
tests/support/data/build_cluster_pairs.py from the official tasks with rewriting rules of its
own; the builder imports nothing of the guard, so the labels come from how each pair
was made. Every pair has both sides re-grounded on other products (new ids, other
titles), and a third are query-only, so neither gold ids nor a reward signature can
find a variant: the guard has to read what each problem asks for.
"""

from __future__ import annotations

import ast
import importlib.util
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from arena.problems.clusters import REASONS, ClusterConfig, cluster_problems
from arena.problems.official import load_problems, parse_row
from tests.conftest import official_dir

DATA = Path(__file__).resolve().parents[2] / "support" / "data"
PAIRS = DATA / "cluster_pairs.jsonl"
BUILDER = DATA / "build_cluster_pairs.py"
MERGE_CATEGORIES = (
    "paraphrase",
    "chitchat",
    "reordered_price",
    "voucher_reworded",
    "knowledge_moved",
    "shop_reordered",
)
APART_CATEGORIES = ("brand", "noun", "attribute", "price", "shop_value", "voucher_terms")
FLOOR = 0.95


def read_pairs() -> list[dict]:
    return [json.loads(line) for line in PAIRS.read_text().split("\n") if line.strip()]


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return read_pairs()


@pytest.fixture(scope="module")
def problems(pairs):
    return [parse_row(p[side], source=PAIRS.name, query_only=True) for p in pairs for side in "ab"]


@pytest.fixture(scope="module")
def clustering(problems):
    return cluster_problems(problems)


def scores(pairs: list[dict], cluster_of: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Pairwise precision and recall per category over that category's pairs."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for p in pairs:
        joined = cluster_of[p["a"]["id"]] == cluster_of[p["b"]["id"]]
        counts[p["category"]][(p["direction"], joined)] += 1
    out = {}
    for category, c in counts.items():
        tp, fn, fp = c["merge", True], c["merge", False], c["apart", True]
        out[category] = (tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0)
    return out


def test_the_labelled_set_covers_every_category_in_both_directions(pairs):
    per = Counter((p["category"], p["direction"]) for p in pairs)
    for category in (*MERGE_CATEGORIES, *APART_CATEGORIES):
        for direction in ("merge", "apart"):
            assert per[category, direction] >= 50, (category, direction)
        query_only = [p for p in pairs if p["category"] == category and "reward" not in p["b"]]
        assert len(query_only) >= 20, category  # constraints that only the text states


def test_every_variant_is_regrounded_on_another_product(pairs):
    """A variant that only changed product_id would be caught by a reward signature and test nothing."""
    for p in pairs:
        a, b = p["a"], p["b"]
        if "reward" not in a or "reward" not in b:
            continue
        items = [r if isinstance(r, list) else [r] for r in (a["reward"], b["reward"])]
        assert not {i["product_id"] for i in items[0]} & {i["product_id"] for i in items[1]}, p["a"]["id"]
        titles = [[str(i.get("title")) for i in side] for side in items]
        assert titles[0] != titles[1], p["a"]["id"]


@pytest.mark.parametrize("category", [*MERGE_CATEGORIES, *APART_CATEGORIES])
def test_precision_and_recall_per_category(pairs, clustering, category):
    precision, recall = scores(pairs, clustering.cluster_of)[category]
    assert precision >= FLOOR and recall >= FLOOR, f"{category}: precision {precision:.3f}, recall {recall:.3f}"


def test_similarity_alone_would_not_do(pairs, problems, monkeypatch):
    """The look-alike pairs under a similarity-only guard (the ask checks and the constraint veto
    off) merge: this is what the constraint checks buy, and it shows the set is hard for the text
    and meaning signals."""
    from arena.problems import clusters

    apart = {p[side]["id"] for p in pairs if p["category"] in APART_CATEGORIES for side in "ab"}
    problems = [p for p in problems if p.id in apart]
    pairs = [p for p in pairs if p["category"] in APART_CATEGORIES]
    monkeypatch.setattr(clusters, "asks_agree", lambda a, b: True)
    monkeypatch.setattr(clusters, "concepts_match", lambda a, b: True)
    monkeypatch.setattr(clusters, "conflict", lambda a, b: None)
    loose = cluster_problems(problems, ClusterConfig())
    precision = [scores(pairs, loose.cluster_of)[c][0] for c in APART_CATEGORIES]
    assert min(precision) < 0.8


def test_every_merge_keeps_a_reason_and_the_report_counts_them(problems, clustering):
    from arena.commands.problem_cluster import render_report

    by_reason = Counter(m.reason for m in clustering.merges)
    assert set(by_reason) <= set(REASONS) and all(m.detail for m in clustering.merges)
    assert len(clustering.merges) == len(problems) - len(clustering.members())
    report = render_report(problems, clustering, ClusterConfig())
    for reason in REASONS:
        assert f"| {reason} | {by_reason[reason]} |" in report


# --- the issue's own examples, written by hand ---------------------------------------------------

VOUCHER = (
    "\n\nMy budget is only `82`, but I have a voucher with the following rules:\n1. The voucher applies to all "
    "products.\n2. It is valid only when the total price of the products exceeds `60`.\n3. It provides a fixed "
    "discount of `10`."
)
SAME = [
    ("Show me baby wall stickers with free delivery.", "Can you find infant wall decals with no-cost shipping?"),
    ("I need 6 AA batteries priced above 272 pesos.", "Could you find six AA batteries costing more than two "
     "hundred seventy-two PHP?"),
    ("Looking for a rice cooker priced below 1,500 PHP.", "Do you have a rice cooker for no more than ₱1.5k?"),
    ("Show me crash cymbals priced above 112 Php.", "Find crash cymbals costing over 112.00 pesos."),
    ("Show me women's jeans with a baggy fit, high waist, made of denim, and priced above 114 PHP.",
     "Looking for denim women's jeans within a price range starting at Php 114, high waist, baggy fit."),
    ("Looking for oil-based crayons." + VOUCHER,
     "Looking for oil-based crayons.\n\nI can spend eighty-two pesos at most. I have a voucher too: it works on "
     "every product once the total goes over 60, and it takes 10 pesos off."),
    ("Looking for a stainless steel water bottle with cash on delivery.",
     "Looking for a stainless steel water bottle with cash on delivery.\n\nMy sister just started running and "
     "she keeps borrowing mine. We went hiking last week and I ran out of water twice."),
    ("Which instrument did Alec Aitken play? I would like to buy a horsetail bow for this instrument.",
     "I'd like to purchase a horsetail bow for this instrument. Which instrument did Alec Aitken play?"),
    ("Find a shop that offers these items: (1) A red mug priced above 50 PHP; (2) A wooden tray with free "
     "shipping.", "Is there one store selling all of these?\n- A wooden tray with free shipping\n- A red mug "
     "priced above 50 PHP"),
    # Beyond the issue's list: other number and currency forms, other asides.
    ("Show me a rice cooker priced under 1500 PHP.", "Show me a rice cooker priced under 1.5 thousand pesos."),
    ("Show me a rice cooker priced under 2500 PHP.", "Show me a rice cooker priced under PHP2,500.00."),
    ("Show me a rice cooker priced under 2500 PHP.", "Is there a rice cooker under P2500?"),
    ("Looking for a 12 inch heavy-duty rubber wheel.", "I need a twelve-inch rubber wheel, heavy duty please."),
    ("Looking for a wallet under 500 PHP.", "Looking for a wallet under 500 PHP. Thanks in advance, I really need "
     "this before my trip next week!"),
    ("Looking for a wallet under 500 PHP.", "So my dog chewed up my wallet yesterday. Anyway, looking for a wallet "
     "under 500 PHP."),
    ("Looking for a fuel injector that comes with complimentary shipping.", "I'd love a fuel injector that ships "
     "for free."),
]  # fmt: skip
APART = [
    ("Show me vktech cordless drills priced above 500 PHP.", "Show me makita cordless drills priced above 500 PHP."),
    ("Looking for ballpoint pens in a pack of 12.", "Looking for markers in a pack of 12."),
    ("I'm looking for B20 cast bronze crash cymbals.", "I'm looking for B20 cast bronze drumsticks."),
    ("Show me white cotton t-shirts for men.", "Show me black cotton t-shirts for men."),
    ("Show me floral summer dresses.", "Show me color block summer dresses."),
    ("Find luggage covers priced between 180 and 951 PHP.", "Find luggage covers priced between 331 and 1724 PHP."),
    ("Find luggage covers priced above 180 PHP.", "Find luggage covers priced below 180 PHP."),
    ("Show me hiking socks with free shipping.", "Show me hiking socks with cash on delivery."),
    ("Looking for oil-based crayons." + VOUCHER, "Looking for oil-based crayons." + VOUCHER.replace("`82`", "`92`")),
    ("Looking for oil-based crayons." + VOUCHER,
     "Looking for oil-based crayons." + VOUCHER.replace("all products", "the products from the same shop")),
    ("Find a shop that offers these items: (1) A red mug priced above 50 PHP; (2) A wooden tray with free "
     "shipping.", "Find a shop that offers these items: (1) A blue mug priced above 50 PHP; (2) A wooden tray "
     "with free shipping."),
    ("Show me running shoes in size 8.", "Show me running shoes in size 9."),
    ("Find a phone case for iPhone 12.", "Find a phone case for iPhone 13."),
    ("Show me men's watches with LazMall service.", "Show me women's watches with LazMall service."),
    ("Show me cotton socks for kids.", "Show me wool socks for kids."),
    ("I want a blue backpack with cash on delivery.", "I want a blue backpack with free shipping."),
    ("Show me large dog beds.", "Show me small dog beds."),
    ("Show me a 1.5L water bottle.", "Show me a 2L water bottle."),
    # A shop task is its sub-requests, not one bag of words: values swapped between items.
    ("Find a shop that offers these items: (1) A red mug priced above 50 PHP; (2) A blue plate.",
     "Find a shop that offers these items: (1) A blue mug priced above 50 PHP; (2) A red plate."),
    ("Find a shop that offers these items: (1) A red mug priced above 50 PHP; (2) A blue plate priced above 80 PHP.",
     "Find a shop that offers these items: (1) A red mug priced above 80 PHP; (2) A blue plate priced above 50 PHP."),
]  # fmt: skip


def _pair(kind: str, i: int, a: str, b: str) -> list:
    intent = "voucher" if "voucher" in a else "shop" if "shop" in a.lower() else "product"
    return [
        parse_row({"id": f"{kind}-{i}-{side}", "query": q, "intent": intent}, query_only=True)
        for side, q in (("a", a), ("b", b))
    ]


def test_the_issue_examples():
    problems = [p for i, (a, b) in enumerate(SAME) for p in _pair("same", i, a, b)]
    problems += [p for i, (a, b) in enumerate(APART) for p in _pair("apart", i, a, b)]
    of = cluster_problems(problems).cluster_of
    for i, (a, b) in enumerate(SAME):
        assert of[f"same-{i}-a"] == of[f"same-{i}-b"], (a, b)
    for i, (a, b) in enumerate(APART):
        assert of[f"apart-{i}-a"] != of[f"apart-{i}-b"], (a, b)


# --- the builder ---------------------------------------------------------------------------------


def test_the_builder_imports_nothing_of_the_guard():
    tree = ast.parse(BUILDER.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    } | {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "argparse", "copy", "json", "random", "re", "collections", "pathlib"}


def test_the_committed_set_is_what_the_builder_writes():
    spec = importlib.util.spec_from_file_location("build_cluster_pairs", BUILDER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = module.build(module.load_official(official_dir()))
    assert [json.dumps(p, ensure_ascii=False, sort_keys=True) for p in built] == PAIRS.read_text().split("\n")[:-1]


def test_official_tasks_as_query_only_problems_stay_nearly_900_apart():
    """900 different problems with their rewards removed: only the text can link them. With the
    meaning signal, 5 pairs link at the default threshold (docs/leak-clusters.md lists them: two
    where one request states a subset of the other's constraints, which the guard may not split
    without a reward, and three look-alike requests about other things). With their rewards the
    900 keep their 880 clusters (test_clusters.py), with no meaning merge at all."""
    official = load_problems(*sorted(official_dir().glob("*.jsonl")))
    bare = [parse_row({"id": p.id, "query": p.query, "intent": p.intent.value}, query_only=True) for p in official]
    clustering = cluster_problems(bare)
    assert len(clustering.members()) >= len(official) - 5
    assert {m.reason for m in clustering.merges} <= {"same_meaning"}


def test_each_synonym_belongs_to_one_group():
    from arena.problems.synonyms import GROUPS

    words = Counter(word for group in GROUPS for word in group)
    assert [w for w, n in words.items() if n > 1] == []


def test_query_only_rows_load_and_write_back_without_a_reward(tmp_path):
    rows = [{"id": "q1", "query": "Show me markers in a pack of 12.", "intent": "product"}, {"id": "q2", "query": "x"}]
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n")
    (problem,) = load_problems(path, query_only=True)
    assert problem.rewards == [] and problem.knowledge is None
    assert problem.to_row() == {**rows[0], "difficulty": "easy"}
    with pytest.raises(ValueError, match="missing 'reward'"):
        parse_row(rows[1], query_only=True)  # no intent: not a query-only row
    with pytest.raises(ValueError, match="missing 'reward'"):
        parse_row(rows[0])  # only where the caller accepts them
