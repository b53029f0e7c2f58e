"""Leak clusters: every variant kind joins its source, distinct problems stay apart, ids are stable."""

from __future__ import annotations

import hashlib
import itertools
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest
from datasketch import MinHash
from pydantic import ValidationError

from arena.problems.clusters import ClusterConfig, _bucket_pairs, assign_clusters, cluster_problems
from arena.problems.model import Problem
from arena.problems.official import load_problems, parse_row
from arena.problems.signature import (
    minhash_matrix,
    price_interval,
    problem_signature,
    query_tokens,
    shingle_hash,
    shingle_hashes,
)
from tests.conftest import REPO, official_dir

ARENA = str(Path(sys.executable).parent / "arena")

JEANS_QUERY = (
    "Show me women's jeans in size eu:30 with a baggy fit, high waist, made of denim, plain design, "
    "and priced above 114 PHP."
)
JEANS_REWARD = {
    "product_id": "5113553158",
    "title": ["American Retro Baggy Jeans For Women High Waist Straight Denim Vintage Blue Wide Leg"],
    "sku_options": [{"size": "eu:30"}],
    "attributes": [
        {"jeans_fit_type": ["baggy fit"]},
        {"waist_type": ["high"]},
        {"clothing_material": ["denim"]},
        {"fa_pattern": ["plain"]},
    ],
    "price": [{"greater than": [114, None]}],
}
SHOP_QUERY = (
    "Find a shop that offers these items: (1) A battery spring contact plate in color option 04; "
    "(2) A set of 100 double rubber plugs for glasses, priced between 75 and 95 pesos; "
    "(3) A metal pipe tap tool in g1/2 color, with free shipping and cash on delivery."
)
SHOP_REWARD = [
    {"product_id": "4098726003", "title": ["Speed 5PCS AA Battery Spring Contact Plate"],
     "sku_options": [{"color_family": "04"}]},
    {"product_id": "3971631378", "title": ["Speed 100Pcs Set Double Rubber Plug For Frameless Glasses"],
     "price": [{"between": [75, 95]}]},
    {"product_id": "4945301257", "title": ["Speed HSS Taper Pipe Tap BSP Metal Screw Thread Cutting Tool"],
     "sku_options": [{"color_family": "g1/2"}], "service": ["freeShipping", "COD"]},
]  # fmt: skip
VOUCHER_TAIL = (
    "\n\nMy budget is only `425`, but I have a voucher with the following rules:\n"
    "1. The voucher applies to all products.\n"
    "2. It is valid only when the total price of the products exceeds `170`.\n"
    "3. It provides a fixed discount of `34`."
)
VOUCHER = {
    "voucher_type": "platform", "threshold": 170, "discount_type": "fixed", "face_value": 34,
    "discount": None, "cap": None, "price_after_voucher": 419.0, "budget": 425,
}  # fmt: skip


def problem(id_: str, query: str, reward: dict | list, **extra) -> Problem:
    """A problem read through the official row parser, as every real problem is."""
    return parse_row({"id": id_, "query": query, "reward": reward, **extra}, source="test")


def with_gold(reward: dict, product_id: str, **changes) -> dict:
    return {**reward, "product_id": product_id, **changes}


# --- the sources and their variants ----------------------------------------------------------

JEANS = problem("jeans", JEANS_QUERY, JEANS_REWARD)
SHOP = problem("shop", SHOP_QUERY, SHOP_REWARD)

VARIANTS: dict[str, tuple[str, Problem]] = {
    # A few words changed, same gold and constraints.
    "paraphrase": (
        "jeans",
        problem(
            "jeans-paraphrase",
            "Looking for women's jeans in size eu:30 with a baggy fit, high waist, made of denim, "
            "a plain design, costing more than 114 pesos.",
            JEANS_REWARD,
        ),
    ),
    # The attributes listed (in the reward and the query) in another order, keys in another case.
    "attributes reordered": (
        "jeans",
        problem(
            "jeans-reordered",
            "Show me plain denim women's jeans with a high waist and a baggy fit, size eu:30, priced above 114 PHP.",
            with_gold(
                JEANS_REWARD,
                "5113553158",
                attributes=[
                    {"FA_Pattern": ["Plain"]},
                    {"clothing_material": ["denim"]},
                    {"waist_type": ["high"]},
                    {"jeans_fit_type": ["Baggy  Fit"]},
                ],
            ),
        ),
    ),
    # The shop's items in another order (and each item's constraints in another order).
    "constraints permuted": (
        "shop",
        problem(
            "shop-permuted",
            "Looking for one store selling a metal pipe tap tool (g1/2, free shipping, COD), 100 double rubber "
            "plugs for glasses between 75 and 95 PHP, and a battery spring contact plate in colour 04.",
            [
                {**SHOP_REWARD[2], "service": ["COD", "freeShipping"]},
                SHOP_REWARD[1],
                SHOP_REWARD[0],
            ],
        ),
    ),
    # "between [75, 95]" as two one-sided bounds, in floats.
    "equivalent price phrasing": (
        "shop",
        problem(
            "shop-price",
            "Which shop has a contact plate (option 04), double rubber plugs for glasses costing at least 75 and "
            "at most 95 pesos, and a g1/2 pipe tap with free delivery and cash on delivery?",
            [
                SHOP_REWARD[0],
                {**SHOP_REWARD[1], "price": [{"greater than": [75.0, None]}, {"less than": [0, 95.0]}]},
                SHOP_REWARD[2],
            ],
        ),
    ),
    # The same gold product asked for with other constraints and other words.
    "same gold set": (
        "jeans",
        problem(
            "jeans-same-gold",
            "I need vintage blue wide-leg trousers for ladies, straight cut.",
            with_gold(JEANS_REWARD, "5113553158", attributes=[], sku_options=[], price=[]),
        ),
    ),
    # The query reworded, its gold re-grounded in another catalog: only the text can tell.
    "paraphrase, other catalog": (
        "jeans",
        problem(
            "jeans-regrounded",
            "Show me women's jeans, size eu:30, baggy fit, high waist, denim material, plain design, "
            "costing over 114 pesos.",
            with_gold(JEANS_REWARD, "other-catalog-77"),
        ),
    ),
}

# Distinct problems that merely share a category, a shop or a template with the sources.
DISTINCT = [
    problem(
        "jeans-other",
        "Show me women's jeans in size eu:28 with a skinny fit, low waist, made of cotton, ripped design, "
        "and priced below 900 PHP.",
        with_gold(
            JEANS_REWARD,
            "5113550001",
            sku_options=[{"size": "eu:28"}],
            attributes=[{"jeans_fit_type": ["skinny fit"]}, {"waist_type": ["low"]}],
            price=[{"less than": [0, 900]}],
        ),
    ),
    problem(
        "jeans-men",
        "Show me men's cargo pants in size 32 with a relaxed fit, made of twill, and priced above 114 PHP.",
        with_gold(JEANS_REWARD, "5113550002", attributes=[{"fit": ["relaxed"]}], sku_options=[{"size": "32"}]),
    ),
    problem(
        "shop-other",  # the same shop ("Speed"), other items
        "Find a shop that offers these items: (1) A wooden sword stand in a2 color made of brass chrome; "
        "(2) A pink spiral notebook with free shipping priced above 40 pesos.",
        [
            {
                "product_id": "4686960982",
                "title": ["Speed Wooden Sword Stand Display Holder"],
                "sku_options": [{"color_family": "a2"}],
            },
            {"product_id": "4686960983", "title": ["Speed Spiral Notebook"], "service": ["freeShipping"]},
        ],
    ),  # fmt: skip
    problem(
        "voucher-crayons",
        "Looking for oil-based crayons, preferably the junior artist set with 50 shades." + VOUCHER_TAIL,
        [{"product_id": "3829481471", "title": ["Sakura Craypas Junior artist 50 colors"]}],
        voucher=VOUCHER,
    ),
    problem(
        "voucher-caliper",  # the same voucher paragraph, another request
        "Show me caliper measuring tools for square pipe folding." + VOUCHER_TAIL,
        [{"product_id": "4908867299", "title": ["Square Pipe Fold Round Ruler"]}],
        voucher=VOUCHER,
    ),
]

ALL = [JEANS, SHOP, *(v for _, v in VARIANTS.values()), *DISTINCT]


@pytest.fixture(scope="module")
def clustering():
    return cluster_problems(ALL)


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_every_variant_kind_lands_in_its_source_cluster(clustering, kind):
    source, variant = VARIANTS[kind]
    assert clustering.cluster_of[variant.id] == clustering.cluster_of[source]


def test_distinct_problems_sharing_category_shop_or_template_stay_apart(clustering):
    members = clustering.members()
    assert members[clustering.cluster_of["jeans"]] == sorted(
        ["jeans", "jeans-paraphrase", "jeans-reordered", "jeans-same-gold", "jeans-regrounded"]
    )
    assert members[clustering.cluster_of["shop"]] == ["shop", "shop-permuted", "shop-price"]
    for distinct in DISTINCT:
        assert members[clustering.cluster_of[distinct.id]] == [distinct.id], distinct.id
    assert len(members) == 2 + len(DISTINCT)


def test_each_merge_keeps_its_reason(clustering):
    reasons = {(m.a, m.b): m for m in clustering.merges}
    assert len(clustering.merges) == len(ALL) - len(clustering.members())  # a spanning forest
    signature = reasons[("jeans", "jeans-reordered")]
    assert signature.reason == "signature" and signature.detail.startswith("signature ")
    text = reasons[("jeans", "jeans-regrounded")]
    assert text.reason == "near_duplicate_text" and text.detail.startswith("jaccard~")
    assert float(text.detail.removeprefix("jaccard~")) >= ClusterConfig().minhash_threshold
    gold = reasons[("jeans", "jeans-same-gold")]
    assert gold.reason == "gold_overlap" and gold.detail == "shared gold 1/1: 5113553158"
    assert reasons[("shop", "shop-permuted")].reason == "signature"
    assert reasons[("shop", "shop-price")].reason == "signature"


def test_cluster_ids_are_deterministic_and_order_independent(clustering):
    shuffled = ALL[:]
    random.Random(7).shuffle(shuffled)
    again = cluster_problems(shuffled)
    assert again == clustering
    for cluster_id, ids in clustering.members().items():
        assert cluster_id == "c-" + hashlib.sha256(ids[0].encode()).hexdigest()[:12]


def test_assign_clusters_returns_copies_in_input_order(clustering):
    assigned = assign_clusters(ALL)
    assert [p.id for p in assigned] == [p.id for p in ALL]
    assert all(p.cluster_id == clustering.cluster_of[p.id] for p in assigned)
    assert all(p.cluster_id is None for p in ALL)


def test_repeated_problem_id_is_an_error():
    with pytest.raises(ValueError, match="'jeans' appears 2 times"):
        cluster_problems([JEANS, JEANS])


def test_config_is_validated():
    with pytest.raises(ValidationError):
        ClusterConfig(minhash_threshold=0)
    with pytest.raises(ValidationError):
        ClusterConfig(gold_overlap=1.5)
    with pytest.raises(ValidationError):
        ClusterConfig(shingle_sizes=2)  # a typo is not silently ignored


def test_gold_overlap_threshold_is_a_fraction_of_the_smaller_gold_set():
    # Requests about unrelated things, so that only the gold can link them.
    three = problem("three", "Show me a red ceramic mug.", [{"product_id": g} for g in ("a", "b", "c")])
    shares_one = problem("shares-one", "Looking for a hiking backpack.", [{"product_id": g} for g in ("c", "d", "e")])
    shares_two = problem("shares-two", "Find a wooden tray.", [{"product_id": g} for g in ("a", "b", "f", "g")])
    of = cluster_problems([three, shares_one, shares_two]).cluster_of
    assert of["three"] == of["shares-two"] != of["shares-one"]  # 2/3 >= 0.5 links, 1/3 does not
    of = cluster_problems([three, shares_one, shares_two], ClusterConfig(gold_overlap=0.3)).cluster_of
    assert of["three"] == of["shares-one"]


def test_price_windows_stay_apart_while_price_phrasings_join():
    """Word pairs keep a number tied to its role: single words would see one bag {81, 200} in both windows."""
    window = problem("win-a", "Show me luggage covers priced between 81 and 200 PHP.", {"product_id": "a"})
    other = problem("win-b", "Show me luggage covers priced between 200 and 350 PHP.", {"product_id": "b"})
    phrased = problem("win-c", "Looking for luggage covers costing from 81 to 200 pesos.", {"product_id": "c"})
    of = cluster_problems([window, other, phrased]).cluster_of
    assert of["win-a"] == of["win-c"] != of["win-b"]


# --- the signature ---------------------------------------------------------------------------


def test_price_phrasings_normalise_to_the_interval_the_scorer_accepts():
    between = price_interval([{"between": [5, 10]}])
    assert between == (5.0, 10.0)
    assert price_interval([{"greater than": [5.0, None]}, {"less than": [0, 10]}]) == between
    assert price_interval([{"less than": [0, 10.0]}, {"between": [5, None]}]) == between
    assert price_interval([{"less than": [0, 10]}]) == price_interval([{"between": [0, 10]}]) == (0.0, 10.0)
    assert price_interval([{"less than": [3, 10]}]) == (0.0, 10.0)  # the scorer ignores its lower slot
    assert price_interval([{"greater than": [5, 99]}]) == (5.0, None)  # ... and this one's upper slot
    assert price_interval([{"greater than": [5, None]}]) != price_interval([{"less than": [0, 5]}])
    assert price_interval([]) is None and price_interval([{"between": [0, None]}]) is None


def test_signature_ignores_order_case_and_phrasing_but_not_meaning():
    base = problem("a", "q", JEANS_REWARD)
    reordered = problem("b", "other words", {**JEANS_REWARD, "attributes": JEANS_REWARD["attributes"][::-1]})
    assert problem_signature(base) == problem_signature(reordered)
    for change in (
        {"price": [{"less than": [0, 114]}]},  # the other side of the same number
        {"sku_options": [{"size": "eu:31"}]},
        {"service": ["COD"]},
        {"product_id": "elsewhere"},
    ):
        assert problem_signature(problem("c", "q", {**JEANS_REWARD, **change})) != problem_signature(base), change
    voucher = problem("v", "q", [JEANS_REWARD], voucher=VOUCHER)
    richer = problem("w", "q", [JEANS_REWARD], voucher={**VOUCHER, "budget": 500})
    assert problem_signature(voucher) != problem_signature(richer)
    assert problem_signature(voucher) == problem_signature(
        problem("x", "q", [JEANS_REWARD], voucher={**VOUCHER, "price_after_voucher": 1.0})
    )  # derived from the gold prices, not a term of the problem


def test_knowledge_signature_is_gold_product_and_fact():
    def riddle(id_: str, query: str, fact: str, product_id: str = "3387550094") -> Problem:
        return parse_row({"id": id_, "query": query, "Knowledge_Attribute": fact,
                          "reward": {"product_id": product_id, "title": "Compact Holy Bible"}})  # fmt: skip

    one = riddle("k1", "In what year did Esteve-Coll become director? Buy a bible from then.", "1982")
    two = riddle("k2", "In which year was Akhnoor Fort declared a monument? A bible of that year.", "1982")
    assert problem_signature(one) == problem_signature(two)
    assert problem_signature(one) != problem_signature(riddle("k3", one.query, "1983"))
    assert problem_signature(one) != problem_signature(riddle("k4", one.query, "1982", "other"))


def test_query_normalisation_unifies_price_phrasing_and_drops_boilerplate():
    def tokens(query: str, **extra) -> list[str]:
        return query_tokens(problem("t", query, [JEANS_REWARD] if extra else JEANS_REWARD, **extra))

    assert tokens("Show me luggage covers priced above 81 PHP.") == ["luggage", "covers", "gt", "81"]
    assert tokens("Looking for luggage covers costing more than 81.00 pesos") == ["luggage", "covers", "gt", "81"]
    assert tokens("luggage covers under 81 php") == ["luggage", "covers", "lt", "81"]
    assert tokens("mats from 1,000 to 2,500 ₱") == tokens("mats between 1000 and 2500 pesos")
    assert tokens("crayons" + VOUCHER_TAIL, voucher=VOUCHER) == ["crayons"]


# --- MinHash and LSH internals ---------------------------------------------------------------


def test_vectorised_minhash_equals_datasketch():
    docs = [["a", "b", "c"], [], ["x"], ["luggage", "covers", "gt", "81"], ["b", "a"], [f"w{i}" for i in range(5000)]]
    for size in (1, 2, 3):
        hashes, counts = shingle_hashes(docs, size)
        matrix = minhash_matrix(hashes, counts, 128, 1)
        offset = 0
        for doc, row, count in zip(docs, matrix, counts, strict=True):
            expected = [shingle_hash(doc[i : i + size]) for i in range(max(len(doc) - size + 1, 1))] if doc else []
            assert hashes[offset : offset + count].tolist() == expected
            offset += count
            reference = MinHash(num_perm=128, seed=1, hashfunc=int)
            reference.update_batch(expected)
            assert np.array_equal(reference.hashvalues, row)
    assert shingle_hash(["a", "b"]) != shingle_hash(["b", "a"])  # order matters inside a shingle


def test_bucket_pairs_are_all_pairs_with_equal_keys():
    rng = np.random.default_rng(0)
    for _ in range(50):
        keys = rng.integers(0, 6, size=int(rng.integers(0, 30))).astype(np.uint64)
        got = {tuple(pair) for pair in _bucket_pairs(keys).tolist()}
        assert got == {(i, j) for i, j in itertools.combinations(range(len(keys)), 2) if keys[i] == keys[j]}


# --- the official tasks ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def official():
    return load_problems(*sorted(official_dir().glob("*.jsonl")))


def test_official_tasks_cluster_sanely(official):
    result = cluster_problems(official)
    members = result.members()
    assert set(result.cluster_of) == {p.id for p in official}
    assert max(map(len, members.values())) < 20
    assert 850 <= len(members) <= 900
    # 900 different problems: near-duplicate text should (almost) never link two of them.
    assert sum(m.reason == "near_duplicate_text" for m in result.merges) <= 2
    # Their gold constraints differ, and the veto reads them: the meaning signal links none.
    assert not any(m.reason == "same_meaning" for m in result.merges)


def test_reworded_official_tasks_join_their_source(official):
    """Official queries reworded the way a generator does it, gold re-grounded: the text rule alone."""
    swaps = (("show me", "looking for"), ("priced above", "costing more than"), ("php", "pesos"), ("free shipping", "free delivery"))  # fmt: skip
    variants = []
    for p in official[:250]:  # the product tasks
        query = p.query.lower()
        for old, new in swaps:
            query = query.replace(old, new)
        rewards = [r.model_copy(update={"product_id": r.product_id + "-x"}) for r in p.rewards]
        variants.append(p.model_copy(update={"id": p.id + "-x", "query": query, "rewards": rewards}))
    of = cluster_problems([*official, *variants]).cluster_of
    joined = sum(of[v.id] == of[v.id.removesuffix("-x")] for v in variants)
    assert joined / len(variants) >= 0.95


# --- the command -----------------------------------------------------------------------------


def test_cli_round_trip(tmp_path):
    rows = [p.to_row() for p in ALL]
    rows[0]["seed"] = 11  # an extra key must survive
    source = tmp_path / "problems.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    out, report = tmp_path / "out" / "clustered.jsonl", tmp_path / "report.md"
    done = subprocess.run(
        [ARENA, "problems", "cluster", str(source), "--out", str(out), "--report", str(report)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert f"{len(ALL)} problems -> {2 + len(DISTINCT)} leak clusters" in done.stderr
    written = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [r["id"] for r in written] == [r["id"] for r in rows]
    for before, after in zip(rows, written, strict=True):
        assert {k: v for k, v in after.items() if k != "cluster_id"} == orjson.loads(orjson.dumps(before))
    expected = cluster_problems(ALL).cluster_of
    assert {r["id"]: r["cluster_id"] for r in written} == expected
    assert load_problems(out)[0].extra == {"seed": 11}  # re-readable by the loader
    text = report.read_text()
    for heading in ("## Cluster sizes", "## Merges by reason", "## Cross-intent merges", "## Largest clusters"):
        assert heading in text
    assert "| near_duplicate_text | 1 |" in text and "| gold_overlap | 1 |" in text
    assert f"### {expected['jeans']} (5 problems)" in text
    assert "## Cross-intent merges\n\nNone." in text  # all variants here keep their intent


def test_cli_bad_input_names_file_and_line(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_bytes(orjson.dumps(JEANS.to_row()) + b"\n{not json\n")
    done = subprocess.run(
        [ARENA, "problems", "cluster", str(source), "--out", str(tmp_path / "o.jsonl")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert "bad.jsonl:2" in done.stderr and not (tmp_path / "o.jsonl").exists()


def test_cli_help_quotes_the_library_defaults():
    """The options default to None (= ClusterConfig's default); their help must not drift from it."""
    from typing import get_type_hints

    from arena.commands import problem_cluster

    hints = get_type_hints(problem_cluster.cluster, include_extras=True)
    defaults = ClusterConfig()
    for option, (_flag, field) in problem_cluster._FLAGS.items():
        info = next(m for m in hints[option].__metadata__ if hasattr(m, "help"))
        assert f"(default {getattr(defaults, field)})" in info.help, option
