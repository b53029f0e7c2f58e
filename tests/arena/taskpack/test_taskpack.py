"""The task-pack catalog: the official tasks made solvable offline, on real catalog indexes.

The official part builds the 900 tasks once per module (200 background products)
and prints its figures (run with ``-s`` to see them); the unit part uses small
hand-written tasks for merging, conflicts, vouchers and determinism.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import orjson
import pytest

from arena.problems.model import Intent, Problem
from arena.problems.official import load_problems
from arena.scoring.outcome import ScoreMode, budget_met, knowledge_score, rule_score, score_problem
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import LocalKnowledgeBase
from arena.shop.tools import ShopEnvironment
from arena.taskpack.build import CatalogBuildError, build_catalog
from arena.taskpack.distractors import BASKET_KINDS, DistractorKind
from arena.taskpack.pack import KNOWLEDGE_DIR, KNOWLEDGE_JSONL, SUMMARY, TaskPackSummary, riddle
from arena.taskpack.pricing import intended_total
from arena.taskpack.synthetic import generate_products
from tests.conftest import REPO, official_dir

ARENA = str(Path(sys.executable).parent / "arena")
NEGATION = re.compile(r"(^|\s)-\s*\w")  # what tantivy's query parser reads as "must not"


def official_files() -> list[Path]:
    return sorted(official_dir().glob("*.jsonl"))


class Built:
    def __init__(self, out: Path, report, problems: list[Problem]) -> None:
        self.out, self.report, self.problems = out, report, problems
        self.catalog = CatalogIndex(out)
        self.summary = TaskPackSummary.model_validate_json((out / SUMMARY).read_bytes())


@pytest.fixture(scope="module")
def official(tmp_path_factory) -> Built:
    files = official_files()
    out = tmp_path_factory.mktemp("taskpack") / "catalog"
    report = build_catalog(out, tasks=files, background=200, seed=7)
    return Built(out, report, load_problems(*files))


def by_gold(problems: list[Problem]) -> dict[str, list[Problem]]:
    out: dict[str, list[Problem]] = defaultdict(list)
    for problem in problems:
        for pid in dict.fromkeys(problem.gold_product_ids()):
            out[pid].append(problem)
    return out


def test_official_pack_builds_without_conflicts(official):
    pack = official.report.taskpack
    print(f"\ntask pack on the official tasks: {pack.model_dump(exclude={'conflicts'})}")
    assert pack.conflicts == []
    assert pack.tasks == 900 and pack.gold == len(by_gold(official.problems)) == 1818
    assert pack.knowledge_documents == 150 and pack.background == 200
    assert pack.distractors + pack.distractors_skipped == 3 * pack.gold
    assert pack.distractors_skipped <= 0.01 * pack.distractors  # a few title-only or odd rewards
    assert official.report.products == pack.gold + pack.distractors + pack.background
    source = official.catalog.manifest["source"]
    assert source["kind"] == "taskpack" and source["seed"] == 7 and source["background"] == 200
    assert [f["sha256"] for f in source["files"]] == [
        hashlib.sha256(p.read_bytes()).hexdigest() for p in official_files()
    ]


@pytest.mark.parametrize("mode", list(ScoreMode))
def test_official_gold_answers_score_asr_one(official, mode):
    by_intent: Counter[str] = Counter()
    wins: Counter[str] = Counter()
    for problem in official.problems:
        score = score_problem(problem, problem.gold_product_ids(), official.catalog, mode=mode)
        by_intent[problem.intent.value] += 1
        wins[problem.intent.value] += score.success
    print(f"\nASR of the gold answers ({mode.value}): {sum(wins.values()) / len(official.problems):.3f} "
          + ", ".join(f"{k} {wins[k]}/{n}" for k, n in by_intent.items()))  # fmt: skip
    assert wins == by_intent


def test_gold_products_meet_their_rewards_through_constraints(official):
    """Not only through the gold-id shortcut: the same record under another id passes too."""
    for problem in official.problems:
        if problem.knowledge is not None:  # kept as it is
            assert official.catalog.get(problem.knowledge.product.product_id) == problem.knowledge.product
            continue
        for reward in problem.rewards:
            gold = official.catalog.get(reward.product_id)
            probe = gold.model_copy(update={"product_id": "probe"})
            for mode in ScoreMode:
                assert rule_score(probe, reward, mode=mode).rule == 1.0, (problem.id, reward.product_id, mode)


def test_voucher_baskets_meet_the_budget_as_intended(official):
    needs_voucher = 0
    for problem in official.problems:
        if problem.voucher is None:
            continue
        basket = [official.catalog.get(pid) for pid in problem.gold_product_ids()]
        total = sum(p.price for p in basket)
        assert budget_met(total, {p.shop_id for p in basket}, problem.voucher)
        assert total == pytest.approx(intended_total(problem.voucher), abs=0.02)  # price_after_voucher recovered
        if problem.voucher.voucher_type == "shop":
            assert len({p.shop_id for p in basket}) == 1
        needs_voucher += total > problem.voucher.budget
    print(f"\nvoucher baskets over budget before the discount: {needs_voucher}/250")
    assert needs_voucher == 232


def test_shop_task_gold_products_share_one_shop(official):
    for problem in official.problems:
        if problem.intent is Intent.shop:
            assert len({official.catalog.get(pid).shop_id for pid in problem.gold_product_ids()}) == 1


def test_every_distractor_fails_its_tasks(official):
    tasks_of = by_gold(official.problems)
    kinds: Counter[str] = Counter()
    for record in official.summary.distractors:
        product = official.catalog.get(record.product_id)
        assert product is not None and record.product_id not in tasks_of
        kinds[record.kind] += 1
        for problem in tasks_of[record.gold_id]:
            if problem.knowledge is not None:
                kw, title = knowledge_score(product, problem.knowledge)
                assert (kw + title) / 2 < 1, record
                continue
            if record.kind in BASKET_KINDS:  # per-product facts kept; the basket must fail
                answer = [record.product_id if p == record.gold_id else p for p in problem.gold_product_ids()]
                assert not score_problem(problem, answer, official.catalog).success, record
                continue
            for reward in problem.rewards:
                if reward.product_id == record.gold_id:
                    assert rule_score(product, reward).rule < 1, record
    print(f"\ndistractors checked: {sum(kinds.values())}, by kind {dict(kinds)}")
    assert set(kinds) == set(DistractorKind)


def test_web_search_finds_every_planted_knowledge_document(official):
    env = ShopEnvironment(official.catalog, LocalKnowledgeBase(official.out / KNOWLEDGE_DIR))
    urls = {}
    for line in (official.out / KNOWLEDGE_JSONL).read_bytes().splitlines():
        doc = orjson.loads(line)
        urls[doc["doc_id"]] = doc["url"]
    planted = {p.task_id: urls[p.doc_id] for p in official.summary.planted}
    # A page's id and URL are no function of its task (the content id hashes the answer).
    assert not any(task_id in url for task_id, url in planted.items())
    misses: dict[str, list[str]] = {"riddle": [], "query": []}
    knowledge = [p for p in official.problems if p.intent is Intent.knowledge]
    for problem in knowledge:
        for name, q in (("riddle", riddle(problem.query)), ("query", problem.query)):
            result = env.call("web_search", {"q": q, "max_results": 3})
            assert result.ok, result.error
            if planted[problem.id] not in [r["url"] for r in result.result]:
                misses[name].append(problem.id)
    n = len(knowledge)
    print(f"\nweb_search top-3 hit rate: riddle {(n - len(misses['riddle'])) / n:.3f}, "
          f"whole query {(n - len(misses['query'])) / n:.3f}; misses: {misses}")  # fmt: skip
    # web_search takes a bag of terms (a riddle's " - Word" is no "must not contain"), so every
    # planted page must be found.
    assert misses == {"riddle": [], "query": []}


def first_fifty(env: ShopEnvironment, q: str, target: str) -> bool:
    """Is ``target`` among the 50 hits find_product pages through (pages 1-5)?"""
    for page in range(1, 6):
        hits = env.call("find_product", {"q": q, "page": page}).result
        if target in (h["product_id"] for h in hits):
            return True
        if len(hits) < 10:
            return False
    return False


def test_product_task_gold_is_findable_by_its_title(official):
    env = ShopEnvironment(official.catalog)
    products = [p for p in official.problems if p.intent is Intent.product]
    found: Counter[str] = Counter()
    for problem in products:
        gold, title = problem.rewards[0].product_id, problem.rewards[0].title[0]
        found["title"] += first_fifty(env, title, gold)
        found["first five title words"] += first_fifty(env, " ".join(title.split()[:5]), gold)
        found["the task's own query"] += first_fifty(env, problem.query, gold)
    print(
        "\ngold in the first 50 find_product hits: "
        + ", ".join(f"{k} {v / len(products):.3f}" for k, v in found.items())
    )
    assert found["title"] == len(products)
    assert found["first five title words"] >= 0.95 * len(products)


def gold_share_by(records: list[dict], gold: set[str], shape) -> dict:
    """{shape: (products, share of them that are gold)} for shapes held by at least 30 products."""
    total, golden = Counter(), Counter()
    for record in records:
        total[shape(record)] += 1
        golden[shape(record)] += record["product_id"] in gold
    return {k: (n, golden[k] / n) for k, n in total.items() if n >= 30}


def test_no_id_shape_tells_gold_from_the_rest(official):
    # Official gold ids are 9-10 digits; once every 9-digit id was gold and every id in
    # 1e9-6e9 a distractor. Now, whatever an id or its shop id looks like, the share of gold
    # among products of that look is the pack's overall share.
    records = all_records(official.out)
    gold = set(official.summary.gold)
    overall = len(gold) / len(records)
    shapes = {
        "product id length and first digit": lambda r: (len(r["product_id"]), r["product_id"][0]),
        "product id in 250M bands": lambda r: int(r["product_id"]) // 250_000_000,
        "shop id length": lambda r: len(r["shop_id"]),
        "product url digits": lambda r: len(re.sub(r"\D", "", r["product_url"])),
        "price with cents": lambda r: round(r["price"] * 100) % 100 != 0,
    }
    for name, shape in shapes.items():
        shares = gold_share_by(records, gold, shape)
        assert len(shares) > 1 or name == "product url digits", name
        odd = {k: v for k, v in shares.items() if not 0.6 * overall <= v[1] <= 1.4 * overall}
        assert odd == {}, f"{name}: gold share {overall:.2f} overall, but {odd}"


def test_score_ties_do_not_favour_gold(official):
    # Look-alike distractors tie with their gold in BM25, and the index breaks ties by
    # insertion order: with gold indexed first, gold won every tie.
    catalog = official.catalog
    gold = set(official.summary.gold)
    ties = gold_first = 0
    for pid in sorted(gold)[:400]:
        # scores are not in find_product's answer
        docs, scores = catalog.scored(catalog.query_terms(catalog.get(pid).title))
        top = catalog._first(docs, scores, 10, ordered=True)
        hits = [(scores[i], int(docs[i])) for i in top]
        ids = [catalog.record(address).product_id for _, address in hits]
        for (score, _), (next_score, _), a, b in zip(hits, hits[1:], ids, ids[1:], strict=False):
            if score == next_score and (a in gold) != (b in gold):
                ties += 1
                gold_first += a in gold
    assert ties >= 100
    assert 0.35 <= gold_first / ties <= 0.65, f"gold first in {gold_first} of {ties} ties"


# ------------------------------------------------------------- hand-written tasks


def write_tasks(path: Path, rows: list[dict]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def product_row(pid: str, title: str, **reward) -> dict:
    return {"query": f"find {title}", "reward": {"product_id": pid, "title": [title], **reward}}


def shop_row(*rewards: dict) -> dict:
    return {"query": "one shop selling " + " and ".join(r["title"][0] for r in rewards), "reward": list(rewards)}


SMALL = [
    product_row("101", "Stainless Steel Insulated Tumbler 500ml", price=[{"greater than": [100, None]}],
                attributes=[{"material": ["stainless steel"]}], service=["COD"]),
    shop_row({"product_id": "101", "title": ["Stainless Steel Insulated Tumbler 500ml"],
              "price": [{"between": [50, 200]}]},
             {"product_id": "102", "title": ["Bamboo Lid For Tumbler"], "sku_options": [{"color_family": "natural"}]}),
    {"query": "Which instrument did Alec Aitken play? I want a bow for it.", "Knowledge_Attribute": "Violin",
     "reward": {"product_id": "103", "shop_id": "3450032", "title": "Heart String Violin Bow Full Size",
                "description": "A violin bow.", "price": 640.0}},
]  # fmt: skip


def build_small(tmp_path: Path, rows: list[dict], name: str = "catalog", **kwargs):
    tasks = write_tasks(tmp_path / f"{name}.jsonl", rows)
    out = tmp_path / name
    kwargs.setdefault("background", 20)
    return out, build_catalog(out, tasks=[tasks], **kwargs)


def test_requirements_of_one_id_in_several_tasks_are_merged(tmp_path):
    out, report = build_small(tmp_path, SMALL, seed=3)
    assert report.taskpack.conflicts == []
    catalog = CatalogIndex(out)
    tumbler, lid = catalog.get("101"), catalog.get("102")
    assert 100 <= tumbler.price <= 200  # "greater than 100" and "between 50 and 200"
    assert "stainless steel" in tumbler.attributes["material"] and "COD" in tumbler.service
    assert tumbler.shop_id == lid.shop_id  # the shop task wants them from one shop
    assert {"color_family": "natural"} in lid.sku_options.values()
    assert catalog.get("103").shop_id == "3450032"  # a knowledge record is kept as it is
    for problem in load_problems(tmp_path / "catalog.jsonl"):
        assert score_problem(problem, problem.gold_product_ids(), catalog, mode=ScoreMode.strict).success


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        (product_row("101", "Stainless Steel Insulated Tumbler 500ml", price=[{"less than": [0, 80]}]), "disjoint"),
        (product_row("101", "Wireless Gaming Mouse RGB"), "does not match the gold title"),
        (shop_row({"product_id": "101", "title": ["Stainless Steel Insulated Tumbler 500ml"], "shop_id": "77"},
                  {"product_id": "104", "title": ["Straw Brush Set"], "shop_id": "88"}), "pinned to shops"),
    ],
)  # fmt: skip
def test_conflicting_tasks_are_reported_with_file_and_line(tmp_path, second, reason):
    rows = [SMALL[0], second]
    out, report = build_small(tmp_path, rows)
    (conflict,) = report.taskpack.conflicts
    assert "catalog.jsonl:2: task p-" in conflict and reason in conflict
    first = load_problems(tmp_path / "catalog.jsonl")[0]  # the first task keeps its facts
    assert score_problem(first, first.gold_product_ids(), CatalogIndex(out)).success
    summary = TaskPackSummary.model_validate_json((out / SUMMARY).read_bytes())
    assert summary.conflicts[0].where.endswith("catalog.jsonl:2")
    with pytest.raises(CatalogBuildError, match=r"strict\.jsonl:2: .*" + reason):
        build_small(tmp_path, rows, name="strict", strict=True)


def voucher_row(rewards: list[dict], **voucher) -> dict:
    return {"query": "basket with a voucher", "reward": rewards, "voucher": voucher}


@pytest.mark.parametrize(
    "voucher",
    [
        {"voucher_type": "platform", "threshold": 170, "discount_type": "fixed", "face_value": 34,
         "discount": None, "cap": None, "price_after_voucher": 419.0, "budget": 425},
        {"voucher_type": "shop", "threshold": 1563, "discount_type": "percentage", "face_value": None,
         "discount": 0.14, "cap": 1465, "price_after_voucher": 1644.019, "budget": 1807},
        {"voucher_type": "shop", "threshold": 100, "discount_type": "percentage", "face_value": None,
         "discount": 0.5, "cap": 60, "price_after_voucher": 240.0, "budget": 250},  # the cap binds
    ],
)  # fmt: skip
def test_voucher_prices_recover_the_intended_total(tmp_path, voucher):
    rewards = [
        {"product_id": "201", "title": ["Kanye West ye CD Original Album"], "price": [{"greater than": [100, None]}]},
        {"product_id": "202", "title": ["Carpenters Cassette Tape Sealed"]},
        {"product_id": "203", "title": ["Gorillaz Cracker Island CD"], "service": ["flashsale"]},
    ]
    out, report = build_small(tmp_path, [voucher_row(rewards, **voucher)])
    assert report.taskpack.conflicts == []
    catalog = CatalogIndex(out)
    basket = [catalog.get(r["product_id"]) for r in rewards]
    total = sum(p.price for p in basket)
    (problem,) = load_problems(tmp_path / "catalog.jsonl")
    assert total == pytest.approx(intended_total(problem.voucher), abs=0.01) and total > voucher["budget"]
    assert basket[0].price >= 100
    if voucher["voucher_type"] == "shop":
        assert len({p.shop_id for p in basket}) == 1
    for mode in ScoreMode:
        assert score_problem(problem, problem.gold_product_ids(), catalog, mode=mode).success
    summary = TaskPackSummary.model_validate_json((out / SUMMARY).read_bytes())
    budget = [d for d in summary.distractors if d.kind == DistractorKind.budget]
    assert budget, "voucher golds get over-budget twins"
    for record in budget:
        answer = [record.product_id if p == record.gold_id else p for p in problem.gold_product_ids()]
        assert not score_problem(problem, answer, catalog).success


def test_a_budget_no_basket_can_meet_is_reported(tmp_path):
    row = voucher_row(
        [{"product_id": "301", "title": ["Gaming Laptop 16GB"], "price": [{"greater than": [5000, None]}]}],
        voucher_type="platform", threshold=100, discount_type="fixed", face_value=50, price_after_voucher=950,
        budget=1000,
    )  # fmt: skip
    _, report = build_small(tmp_path, [row])
    (conflict,) = report.taskpack.conflicts
    assert "catalog.jsonl:1" in conflict and "budget 1000" in conflict


def all_records(out: Path) -> list[dict]:
    catalog = CatalogIndex(out)
    return sorted((p.model_dump() for p in catalog.records(range(len(catalog)))), key=lambda r: r["product_id"])


def test_same_tasks_and_seed_give_the_same_catalog(tmp_path):
    builds = [build_small(tmp_path, SMALL, name=name, seed=seed)[0] for name, seed in (("a", 5), ("b", 5), ("c", 6))]
    a, b, c = (all_records(out) for out in builds)
    assert orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)
    assert (builds[0] / KNOWLEDGE_JSONL).read_bytes() == (builds[1] / KNOWLEDGE_JSONL).read_bytes()
    assert a != c  # another seed, another catalog
    assert len(a) == 3 + 3 * 3 + 20


def test_background_products_are_renamed_and_never_collide_with_gold(tmp_path):
    taken = next(generate_products(1, 9)).product_id
    out, report = build_small(tmp_path, [product_row(taken, "Handmade Rattan Basket")], seed=9)
    assert report.taskpack.background == 20 and report.products == 1 + report.taskpack.distractors + 20
    assert CatalogIndex(out).get(taken).title == "Handmade Rattan Basket"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"query": "q", "reward": {"product_id": "1", "title": []}}, "has no title"),
        ({"query": "q", "reward": {"product_id": "1", "title": ["x"], "service": ["teleport"]}}, "unknown service"),
        ({"query": "q"}, "missing 'reward'"),
    ],
)
def test_bad_task_rows_name_file_and_line(tmp_path, row, message):
    with pytest.raises(CatalogBuildError, match=r"catalog\.jsonl:2: .*" + message):
        build_small(tmp_path, [SMALL[0], row])


def arena(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([ARENA, *map(str, args)], capture_output=True, text=True, cwd=REPO)


def test_cli_builds_a_task_pack(tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl", SMALL)
    out = tmp_path / "cli"
    done = arena("catalog", "build", "--from-tasks", tasks, "--background", 30, "--distractors", 2, "--seed", 4,
                 "--out", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # reports go to stderr
    assert "3 gold" in done.stderr and "1 knowledge" in done.stderr
    manifest = json.loads((out / "catalog.json").read_text())
    assert manifest["source"]["kind"] == "taskpack" and manifest["source"]["distractors_per_gold"] == 2
    assert manifest["products"] == 3 + 3 * 2 + 30
    assert LocalKnowledgeBase(out / KNOWLEDGE_DIR).search("Alec Aitken instrument", 1)[0]["content"].count("Violin")


def test_cli_rejects_bad_uses_clearly(tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl", [SMALL[0], product_row("101", "Wireless Gaming Mouse RGB")])
    done = arena("catalog", "build", "--from-tasks", tasks, "--strict", "--out", tmp_path / "x")
    assert done.returncode == 2 and "tasks.jsonl:2" in done.stderr and "does not match" in done.stderr
    done = arena("catalog", "build", "--from-tasks", tasks, "--synthetic", 10, "--out", tmp_path / "y")
    assert done.returncode == 2 and "exactly one" in done.stderr
    done = arena("catalog", "build", "--synthetic", 10, "--background", 5, "--out", tmp_path / "z")
    assert done.returncode == 2 and "--from-tasks" in done.stderr
    done = arena("catalog", "build", "--from-tasks", tmp_path / "missing.jsonl", "--out", tmp_path / "w")
    assert done.returncode == 2 and "missing.jsonl does not exist" in done.stderr
