"""The problem generator on a real 5k-product synthetic catalog (catalog index, files in tmp).

One catalog and one generated set per module; every check reads the real
rows, the real scorer and the real search index.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest

from arena.generator.candidates import assemble, harder
from arena.generator.catalog_frame import CatalogFrame
from arena.generator.generate import GenerationError, GeneratorConfig, generate, write_knowledge, write_problems
from arena.generator.rewrite_client import QueryRewriter, RewriteError, RewriterConfig, RewriterUnavailable
from arena.generator.solvability import SearchProbe, check_problem, honest_queries
from arena.problems.clusters import cluster_problems
from arena.problems.draft import Constraint, Draft, Fact, ItemNeed, Style
from arena.problems.model import Difficulty, Intent, Problem, Voucher
from arena.problems.official import parse_row
from arena.problems.phrasing import render_query, voucher_rules
from arena.problems.variants import HARD_KINDS, KINDS, parse_kinds
from arena.problems.wording import number_words, respell_units
from arena.scoring.outcome import ScoreMode, discounted_total, score_problem
from arena.shop.index import CatalogIndex, SearchFilters
from arena.shop.knowledge import LocalKnowledgeBase
from arena.shop.tools import ShopEnvironment
from tests.conftest import REPO, official_dir
from tests.support.guide_blocks import shell_blocks

ARENA = str(Path(sys.executable).parent / "arena")
N = 80
SEED = 11

# The voucher paragraph as every official voucher task writes it.
VOUCHER_RULES = re.compile(
    r"\n\nMy budget is only `\d+`, but I have a voucher with the following rules:\n"
    r"1\. The voucher (applies to all products|only applies to the products from the same shop)\.\n"
    r"2\. It is valid only when the total price of the products exceeds `\d+`\.\n"
    r"3\. It provides (a fixed discount of `\d+`|a percentage discount of `\d+%` with a cap of `\d+`)\.$"
)


@pytest.fixture(scope="module")
def catalog_path(tmp_path_factory) -> Path:
    from arena.taskpack.build import build_catalog

    out = tmp_path_factory.mktemp("gen") / "catalog"
    build_catalog(out, synthetic=5000, seed=1)
    return out


@pytest.fixture(scope="module")
def catalog5k(catalog_path) -> CatalogIndex:
    return CatalogIndex(catalog_path)


@pytest.fixture(scope="module")
def result(catalog5k):
    return generate(catalog5k, GeneratorConfig(n=N, seed=SEED, variants=2))


@pytest.fixture(scope="module")
def rows(result) -> list[dict]:
    return [p.to_row() for p in result.problems]


@pytest.fixture(scope="module")
def sources(rows) -> list[dict]:
    return [r for r in rows if "variant_of" not in r]


@pytest.fixture(scope="module")
def probe(catalog5k) -> SearchProbe:
    return SearchProbe(catalog5k)


def gold_ids(row: dict) -> list[str]:
    reward = row["reward"]
    return [r["product_id"] for r in reward] if isinstance(reward, list) else [reward["product_id"]]


# ------------------------------------------------------------------ what is generated


def test_all_four_intents_in_equal_shares(result, sources):
    counts = Counter(r["intent"] for r in sources)
    assert counts == {"product": N // 4, "shop": N // 4, "voucher": N // 4, "knowledge": N // 4}
    report = result.report
    assert report.generated == N and sum(report.counts["shop"].values()) == N // 4
    for intent, tried in report.candidates.items():
        assert tried == counts[intent] + sum(report.rejections[intent].values())
    assert len(result.documents) == N // 4  # one fact document per knowledge problem


def test_every_problem_parses_and_its_gold_answer_scores_in_both_modes(rows, catalog5k):
    assert len(rows) == N * 3  # each source with two variants
    for row in rows:
        problem = parse_row(json.loads(json.dumps(row)))  # through JSON, as a file round trip
        assert problem.id == row["id"] and problem.intent.value == row["intent"]
        assert problem.difficulty.value == row["difficulty"] and problem.extra["seed"] == SEED
        for mode in (ScoreMode.official, ScoreMode.strict):
            score = score_problem(problem, gold_ids(row), catalog5k, mode=mode)
            assert score.success, (row["query"], mode, score)


def test_rows_have_the_official_shapes(sources, catalog5k):
    for row in sources:
        intent = row["intent"]
        assert set(row) >= {"query", "reward", "id", "intent", "difficulty", "seed"}
        if intent == "product":
            assert isinstance(row["reward"], dict) and row["reward"]["title"]
        elif intent in ("shop", "voucher"):
            assert isinstance(row["reward"], list) and 1 <= len(row["reward"]) <= 4
            assert ("voucher" in row) == (intent == "voucher")
        else:
            gold = catalog5k.get(row["reward"]["product_id"])
            assert row["reward"] == gold.model_dump()  # the full record, as officially
            assert row["Knowledge_Attribute"] and row["knowledge_doc_id"]
        rewards = row["reward"] if isinstance(row["reward"], list) else [row["reward"]]
        if intent == "shop":
            assert 2 <= len(rewards) and len({catalog5k.get(r["product_id"]).shop_id for r in rewards}) == 1
        for reward in rewards if intent != "knowledge" else []:
            gold = catalog5k.get(reward["product_id"])
            assert reward["title"] == [gold.title]
            for rng in reward.get("price", []):
                ((mode, (lo, hi)),) = rng.items()
                if mode == "between":
                    assert lo <= gold.price <= hi
                elif mode == "greater than":
                    assert hi is None and lo <= gold.price
                else:
                    assert mode == "less than" and lo == 0 and gold.price <= hi
            assert len(reward.get("sku_options", [])) <= 1  # pairs of one option only


def test_shop_tasks_have_two_to_four_products_of_one_shop(sources):
    sizes = Counter(len(r["reward"]) for r in sources if r["intent"] == "shop")
    assert set(sizes) <= {2, 3, 4} and len(sizes) >= 2


def test_voucher_numbers_follow_the_recipe(sources, catalog5k):
    vouchers = [r for r in sources if r["intent"] == "voucher"]
    assert {r["voucher"]["voucher_type"] for r in vouchers} == {"platform", "shop"}
    assert {r["voucher"]["discount_type"] for r in vouchers} == {"fixed", "percentage"}
    for row in vouchers:
        voucher = Voucher.model_validate(row["voucher"])
        golds = [catalog5k.get(i) for i in gold_ids(row)]
        total = sum(g.price for g in golds)
        if voucher.voucher_type == "shop":
            assert 2 <= len(golds) and len({g.shop_id for g in golds}) == 1
        assert 0.1 * total - 0.5 <= voucher.threshold <= 0.9 * total + 0.5
        if voucher.discount_type == "fixed":
            assert max(1, 0.1 * voucher.threshold - 0.5) <= voucher.face_value <= 0.5 * voucher.threshold + 0.5
        else:
            assert 0.10 <= voucher.discount <= 0.50 and voucher.cap is not None
            assert voucher.cap <= voucher.threshold + 0.5
        after = discounted_total(total, voucher)
        assert voucher.price_after_voucher == pytest.approx(round(after, 2))
        base = math.ceil(voucher.price_after_voucher)
        assert base <= voucher.budget <= base * 1.10 + 1e-9 and voucher.budget < total  # the voucher is needed
        assert VOUCHER_RULES.search(row["query"]) and row["query"].endswith(voucher_rules(voucher))
        assert f"`{int(voucher.budget)}`" in row["query"]


def test_the_voucher_paragraph_format_is_the_official_one():
    path = official_dir() / "synthesize_voucher_test.jsonl"
    official = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    assert all(VOUCHER_RULES.search(row["query"]) for row in official)
    for row in official[:20]:  # our renderer writes the same paragraph from the same numbers
        voucher = Voucher.model_validate(row["voucher"])
        assert row["query"].endswith(voucher_rules(voucher)), row["query"][-300:]


def test_knowledge_facts_live_only_in_the_corpus(result, sources, catalog5k, tmp_path):
    corpus = write_knowledge(result.documents, tmp_path / "kb")
    documents = {d["doc_id"]: d for d in map(orjson.loads, corpus.read_bytes().splitlines())}
    env = ShopEnvironment(catalog5k, knowledge=LocalKnowledgeBase(tmp_path / "kb"))
    for row in (r for r in sources if r["intent"] == "knowledge"):
        value = row["Knowledge_Attribute"]
        gold = row["reward"]
        assert value.lower() not in row["query"].lower()  # only the fact resolves it
        assert re.search(rf"\b{re.escape(value)}\b", f"{gold['title']}\n{gold['description']}".lower())
        document = documents[row["knowledge_doc_id"]]
        assert value in document["content"]
        question = row["query"].split("?")[0] + "?"
        hits = env.call("web_search", {"q": question, "max_results": 3}).result
        assert hits[0]["url"] == document["url"], (question, hits)


def test_difficulty_is_the_constraint_count_bumped_by_search(rows):
    order = ["easy", "medium", "hard"]
    for row in rows:
        problem = parse_row({k: v for k, v in row.items() if k != "difficulty"})  # computed from constraints
        base = order.index(problem.difficulty.value)
        assert order.index(row["difficulty"]) in (base, min(base + 1, 2))
    assert {r["difficulty"] for r in rows} == set(order)


def test_queries_vary_in_wording_order_and_money_formats(sources):
    products = [r["query"] for r in sources if r["intent"] == "product"]
    assert len({" ".join(q.split()[:2]) for q in products}) >= 5  # several openers
    text = "\n".join(r["query"] for r in sources)
    formats = {
        "PHP n": r"PHP \d",
        "n pesos": r"\d pesos",
        "₱n": r"₱\d",
        "n PHP": r"\d PHP",
        "bare": r"(?:under|than|most|over|between|above|below) \d+(?![\d,]*\s*(?:pesos|PHP))",
    }
    seen = {name for name, pattern in formats.items() if re.search(pattern, text)}
    assert len(seen) >= 4, seen
    assert len({r["query"] for r in sources}) == len(sources)


# ------------------------------------------------------------------ determinism


def test_same_seed_same_bytes_other_seed_other_bytes(catalog5k, tmp_path):
    paths = []
    for i, seed in enumerate((5, 5, 6)):
        res = generate(catalog5k, GeneratorConfig(n=12, seed=seed, variants=1))
        paths.append(tmp_path / f"p{i}.jsonl")
        write_problems(res.problems, paths[-1])
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()


def test_worker_processes_do_not_change_the_output(catalog5k):
    config = dict(n=8, seed=3, intents=[Intent.product, Intent.shop])
    one = generate(catalog5k, GeneratorConfig(**config))
    two = generate(catalog5k, GeneratorConfig(**config, workers=2))
    assert [p.to_row() for p in one.problems] == [p.to_row() for p in two.problems]
    assert one.report.rejections == two.report.rejections


def test_generation_is_a_function_of_the_seed_alone_across_catalog_orders(catalog_path, catalog5k, tmp_path):
    """The issue's case: --n 1500 --seed 11 gave other files over rebuilds of one catalog, because
    equal BM25 scores were ordered by index layout. The module's 5k catalog rebuilt from its
    products in another order must give byte-identical problem files."""
    from arena.shop.index import build_index
    from arena.taskpack.synthetic import generate_products

    shuffled = list(generate_products(5000, 1))
    random.Random(3).shuffle(shuffled)
    rebuilt = tmp_path / "rebuilt"
    build_index(shuffled, rebuilt)
    first = CatalogIndex(rebuilt).record(0).product_id
    assert first != catalog5k.record(0).product_id  # really another order
    files = []
    for path in (catalog_path, rebuilt):
        out = tmp_path / f"{path.name}.jsonl"
        write_problems(generate(CatalogIndex(path), GeneratorConfig(n=1500, seed=11)).problems, out)
        files.append(out.read_bytes())
    assert len(files[0].splitlines()) == 1500
    assert files[1] == files[0]


def test_the_frame_lists_every_product_once_in_id_order(catalog_path, catalog5k):
    frame = CatalogFrame(catalog_path)
    ids = [frame.product(i).product_id for i in range(0, len(frame), 97)]
    assert len(frame) == len(catalog5k) == 5000 and ids == sorted(ids)
    shop = frame.product(0).shop_id
    listed = [frame.product(i) for i in frame.shop_positions(shop)]
    assert listed and all(p.shop_id == shop for p in listed)


# ------------------------------------------------------------------ solvability


def test_the_probe_ranks_exactly_as_find_product_orders(catalog5k, probe, sources):
    checked = 0
    for row in sources[:12]:
        gold = catalog5k.get(gold_ids(row)[0])
        for flt in (SearchFilters(), SearchFilters(price_low=1, price_high=gold.price * 2, services=("COD",))):
            q = " ".join(gold.title.split()[:3])
            hits = catalog5k.bm25(q, flt, limit=50)
            for i, product in enumerate(hits, start=1):
                assert probe.rank(q, flt, probe.address(product.product_id)) == i
                checked += 1
    assert checked > 100


def _draft(catalog5k, row) -> Draft:
    gold = catalog5k.get(gold_ids(row)[0])
    need = ItemNeed(product=gold, noun=" ".join(gold.title.split()[:3]).lower(), article=False)
    return Draft(intent=Intent.product, needs=[need], style=Style(wording=1, order=2, money=3))


def _verdict(draft: Draft, probe: SearchProbe, query: str | None = None):
    text = query if query is not None else render_query(draft)
    return check_problem(draft, assemble(draft, text, seed=0), probe)


def test_solvability_keeps_an_honest_candidate(catalog5k, probe, sources):
    draft = _draft(catalog5k, next(r for r in sources if r["intent"] == "product"))
    # The product's whole title names it: no other listing passes the title check in one mode but not the other.
    draft.needs[0].noun = draft.needs[0].product.title.lower()
    verdict = _verdict(draft, probe)
    assert verdict.ok and verdict.ranks and verdict.ranks[0] is not None


def _succeeds(problem, product, mode) -> bool:
    from arena.shop.catalog import InMemoryCatalog

    return score_problem(problem, [product.product_id], InMemoryCatalog([product]), mode=mode).success


def test_solvability_rejects_a_problem_whose_strict_answer_is_luck(catalog5k, probe, sources):
    from arena.generator.solvability import NOT_UNIQUE

    # Three title words and no constraint: where another listing with those words ranks above the gold and
    # passes official mode but not strict, which one an agent recommends is luck.
    rejected = 0
    for row in (r for r in sources if r["intent"] == "product"):
        draft = _draft(catalog5k, row)
        verdict = _verdict(draft, probe)
        if verdict.reason != NOT_UNIQUE:
            continue
        rejected += 1
        problem = assemble(draft, render_query(draft), seed=0)
        query = honest_queries(draft.needs[0])[0]
        above = catalog5k.bm25(query.q, query.filters, verdict.ranks[0] - 1)
        noun = set(draft.needs[0].noun.split())
        assert any(
            noun <= set(p.title.lower().split())
            and _succeeds(problem, p, ScoreMode.official)
            and not _succeeds(problem, p, ScoreMode.strict)
            for p in above
        )
        # Named by its whole title, the same product is a fair question again.
        draft.needs[0].noun = draft.needs[0].product.title.lower()
        assert _verdict(draft, probe).reason != NOT_UNIQUE
    assert rejected >= 1


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("price", "price_excludes_gold"),
        ("attribute", "attribute_mismatch"),
        ("service", "service_missing"),
        ("unreachable", "gold_unreachable_by_search"),
        ("missing", "gold_not_in_catalog"),
    ],
)
def test_solvability_rejects_an_unsolvable_product_candidate(catalog5k, probe, sources, change, reason):
    draft = _draft(catalog5k, next(r for r in sources if r["intent"] == "product"))
    need = draft.needs[0]
    gold = need.product
    if change == "price":  # a range that excludes the gold price
        bad = Constraint(kind="price", key="less than", high=max(0, math.floor(gold.price / 2)))
        need = need.model_copy(update={"constraints": [bad]})
    elif change == "attribute":  # an attribute the gold does not have
        need = need.model_copy(update={"constraints": [Constraint(kind="attribute", key="material", value="adamant")]})
    elif change == "service":
        lacking = next(s for s in ("official", "flashsale", "COD", "freeShipping") if s not in gold.service)
        need = need.model_copy(update={"constraints": [Constraint(kind="service", value=lacking)]})
    elif change == "unreachable":  # a noun phrase no product contains: no honest search finds it
        need = need.model_copy(update={"noun": "zqxv blorft"})
    else:
        need = need.model_copy(update={"product": gold.model_copy(update={"product_id": "0"})})
    verdict = _verdict(draft.model_copy(update={"needs": [need]}), probe)
    assert verdict.reason == reason


def test_solvability_rejects_unsolvable_baskets_and_facts(catalog5k, probe, sources):
    shop_row = next(r for r in sources if r["intent"] == "shop")
    golds = [catalog5k.get(i) for i in gold_ids(shop_row)]
    other = next(p for p in catalog5k.bm25(golds[0].title, SearchFilters(), 50) if p.shop_id != golds[0].shop_id)
    needs = [ItemNeed(product=p, noun=" ".join(p.title.split()[:3]).lower(), article=False) for p in (golds[0], other)]
    style = Style(wording=1, order=1, money=1)
    two_shops = Draft(intent=Intent.shop, needs=needs, style=style)
    assert _verdict(two_shops, probe).reason == "gold_not_one_shop"

    total = sum(n.product.price for n in needs)
    never_applies = Voucher(
        voucher_type="platform", threshold=total + 100, discount_type="fixed", face_value=10, budget=total - 1
    )
    over = Draft(intent=Intent.voucher, needs=needs, style=style, voucher=never_applies)
    assert _verdict(over, probe).reason == "gold_basket_over_budget"
    roomy = never_applies.model_copy(update={"budget": total + 1})
    assert _verdict(over.model_copy(update={"voucher": roomy}), probe).reason == "voucher_not_needed"

    fact = Fact(kind="material", value="adamant", name="Kavelon", place="Quessary", year=1900, doc_id="kb-x")
    riddle = Draft(intent=Intent.knowledge, needs=needs[:1], style=style, fact=fact)
    assert _verdict(riddle, probe).reason == "fact_not_in_gold_text"
    leaked = fact.model_copy(update={"value": needs[0].noun.split()[0]})
    told = riddle.model_copy(update={"fact": leaked})
    assert _verdict(told, probe, query=f"I want a {needs[0].noun}").reason == "fact_in_query"


def test_honest_queries_use_constraint_values_and_filters(catalog5k, sources):
    row = next(r for r in sources if r["intent"] == "product" and r["reward"].get("price"))
    gold = catalog5k.get(row["reward"]["product_id"])
    need = ItemNeed(
        product=gold,
        noun="widget",
        constraints=[
            Constraint(kind="attribute", key="material", value="cotton"),
            Constraint(kind="service", value="COD"),
            Constraint(kind="price", key="between", low=10, high=90),
        ],
    )
    first, plain, *scoped = honest_queries(need, shop_id="s1")
    assert first.q == "widget cotton" and plain.q == "widget"
    assert first.filters == SearchFilters(price_low=10, price_high=90, services=("COD",))
    assert scoped and all(q.filters.shop_id == "s1" for q in scoped)


def test_an_impossible_intent_fails_with_the_reasons(catalog):
    # The 61-product conftest catalog: no product states a material, colour... in its text.
    with pytest.raises(GenerationError, match=r"knowledge: 20 candidates in a row .*no_fact_in_product_text"):
        generate(catalog, GeneratorConfig(n=2, intents=[Intent.knowledge], max_rejections_in_a_row=20))


# ------------------------------------------------------------------ variants


def test_variants_keep_the_reward_and_change_the_text(rows):
    by_id = {r["id"]: r for r in rows}
    variants = [r for r in rows if "variant_of" in r]
    assert {r["variant_kind"] for r in variants} == set(KINDS)
    for row in variants:
        source = by_id[row["variant_of"]]
        assert "variant_of" not in source and row["query"] != source["query"]
        assert row["intent"] == source["intent"] and row["difficulty"] == source["difficulty"]
        assert _canonical(row) == _canonical(source)
        if row["variant_kind"] in ("paraphrase", "price_phrasing", "deep_paraphrase", "split_sentences"):
            assert row["reward"] == source["reward"]  # not even reordered
        if row["variant_kind"] == "attribute_order" and row["intent"] != "knowledge":
            assert row["reward"] != source["reward"]  # the attributes list is reordered (a riddle's reward is
            # the gold record itself: its hints reorder in the text only)
        if row["variant_kind"] == "shop_items":
            assert row["reward"] != source["reward"]  # the items are reordered, the reward list with them
        if row["intent"] == "knowledge":
            assert row["reward"] == source["reward"] and row["knowledge_doc_id"] == source["knowledge_doc_id"]


def _canonical(row: dict):
    reward = row["reward"] if isinstance(row["reward"], list) else [row["reward"]]
    if row["intent"] == "knowledge":
        return row["Knowledge_Attribute"], reward[0]["product_id"]

    def key(value) -> str:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()

    # Each sub-reward with its lists sorted, then the sub-rewards sorted: equal up to list order.
    items = sorted(key({k: sorted(map(key, v)) if isinstance(v, list) else v for k, v in r.items()}) for r in reward)
    return items, row.get("voucher")


# ------------------------------------------------------------------ the command


def arena(*args, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([ARENA, *map(str, args)], capture_output=True, text=True, cwd=REPO)
    if check and done.returncode != 0:
        raise AssertionError(f"arena {' '.join(map(str, args))} failed:\n{done.stderr}")
    return done


def test_cli_writes_rows_and_the_knowledge_corpus_deterministically(catalog_path, tmp_path):
    runs = []
    for name in ("a", "b"):  # two processes: nothing may depend on per-process state (hash salts, layout)
        out, kb = tmp_path / f"{name}.jsonl", tmp_path / f"kb-{name}"
        done = arena("problems", "generate", "--catalog", catalog_path, "--n", 8, "--seed", 9, "--out", out,
                     "--variants", 1, "--knowledge-out", kb)  # fmt: skip
        assert done.stdout == ""  # the report is for people: stderr
        assert "8 problems + 8 variants" in done.stderr and "problems in" in done.stderr
        runs.append((out.read_bytes(), (kb / "knowledge.jsonl").read_bytes()))
    assert runs[0] == runs[1]
    rows = [orjson.loads(line) for line in runs[0][0].splitlines()]
    assert Counter(r["intent"] for r in rows if "variant_of" not in r) == dict.fromkeys(Intent, 2)
    assert all(r["seed"] == 9 for r in rows) and all(parse_row(r).id == r["id"] for r in rows)
    assert len(runs[0][1].splitlines()) == 2  # one fact document per knowledge problem


def test_cli_skips_knowledge_without_a_corpus_dir(catalog_path, tmp_path):
    out = tmp_path / "p.jsonl"
    done = arena("problems", "generate", "--catalog", catalog_path, "--n", 3, "--out", out, "--intents", "product,web")
    assert "knowledge skipped" in done.stderr
    assert {orjson.loads(line)["intent"] for line in out.read_bytes().splitlines()} == {"product"}


def test_cli_refuses_bad_input_with_a_clear_message(catalog_path, tmp_path):
    from typer.testing import CliRunner

    from arena.cli import app

    def run(*args):
        return CliRunner().invoke(app, ["problems", "generate", "--out", str(tmp_path / "p.jsonl"), *map(str, args)])

    bad = run("--catalog", catalog_path, "--n", 3, "--intents", "gifts")
    assert bad.exit_code == 2 and "unknown intent 'gifts'" in bad.stderr
    missing = run("--catalog", tmp_path, "--n", 3)
    assert missing.exit_code == 2 and "is not a catalog index" in missing.stderr
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "old.txt").write_text("x")
    busy = run("--catalog", catalog_path, "--n", 3, "--knowledge-out", tmp_path / "kb")
    assert busy.exit_code == 2 and "is not empty" in busy.stderr
    half = run("--catalog", catalog_path, "--n", 3, "--rewrite-model", "m")
    assert half.exit_code == 2 and "needs both --rewrite-base-url and --rewrite-model" in half.stderr
    assert not (tmp_path / "p.jsonl").exists()


# ------------------------------------------------------------------ the optional rewriter


class _ChatServer:
    """A tiny OpenAI-compatible endpoint: replies "Hi! <user text>" or a canned reply, records requests."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.reply: str | None = None
        self.status = 200
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                text = owner.reply if owner.reply is not None else "Hi! " + body["messages"][-1]["content"]
                payload = json.dumps({
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }).encode()  # fmt: skip
                self.send_response(owner.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("backend", ["openai", "httpx"])
def test_the_rewriter_talks_to_an_openai_compatible_endpoint(backend, result):
    pytest.importorskip(backend)
    problem = next(p for p in result.problems if p.intent is Intent.voucher and "variant_of" not in p.extra)
    with _ChatServer() as server:
        rewriter = QueryRewriter(
            RewriterConfig(base_url=server.url, model="gpt-4.1", api_key="k", backend=backend, retries=0)
        )
        draft = Draft(intent=Intent.voucher, needs=[], style=Style(wording=0, order=0, money=0),
                      voucher=problem.voucher)  # fmt: skip
        rules = voucher_rules(problem.voucher)
        request = problem.query.removesuffix(rules)
        rewritten = rewriter(problem.query, draft)
        assert rewritten == "Hi! " + request + rules  # the voucher paragraph is kept verbatim, never sent
        sent = server.requests[-1]
        assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer k"
        assert sent["body"]["model"] == "gpt-4.1" and sent["body"]["messages"][-1]["content"] == request
        assert "Keep every requirement" in sent["body"]["messages"][0]["content"]

        server.reply = "Something cheap, please."  # drops the numbers: the template stays
        assert rewriter("Show me a mug under PHP 1,200.", draft) == "Show me a mug under PHP 1,200."
        assert rewriter.stats == {"rewritten": 1, "kept_template:number_changed": 1}

        server.status = 500
        with pytest.raises(RewriteError, match=re.escape(server.url)):
            rewriter.complete("anything")


def test_the_rewriter_keeps_riddle_answers_out(result):
    problem = next(p for p in result.problems if p.intent is Intent.knowledge)
    fact = Fact(kind="color", value="teal", name="Kavelon", place="Quessary", year=1900, doc_id="kb-x")
    draft = Draft(intent=Intent.knowledge, needs=[], style=Style(wording=0, order=0, money=0), fact=fact)
    with _ChatServer() as server:
        server.reply = "Which colour is the flag of Kavelon? Teal, I think. I want a teal mug."
        rewriter = QueryRewriter(RewriterConfig(base_url=server.url, model="m", backend="httpx"))
        assert rewriter(problem.query, draft) == problem.query
        assert rewriter.stats == {"kept_template:answer_revealed": 1}


def test_generation_with_the_rewriter_keeps_ids_and_links_consistent(catalog5k):
    with _ChatServer() as server:
        rewriter = QueryRewriter(RewriterConfig(base_url=server.url, model="m"))
        res = generate(catalog5k, GeneratorConfig(n=4, seed=1, variants=1), rewrite=rewriter)
    rows = [p.to_row() for p in res.problems]
    ids = {r["id"] for r in rows}
    assert all(r["query"].startswith("Hi! ") and r["query_template"] for r in rows)
    assert all(r["variant_of"] in ids for r in rows if "variant_of" in r)
    assert len(server.requests) == len(rows)


def test_the_rewriter_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` raise ImportError
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(RewriterUnavailable, match="pip install openai"):
        QueryRewriter(RewriterConfig(base_url="http://127.0.0.1:9/v1", model="m"))


def test_difficulty_order_is_easy_medium_hard():
    # The bump helper must never skip a level or go past hard.
    assert [harder(d) for d in Difficulty] == [Difficulty.medium, Difficulty.hard, Difficulty.hard]


def test_each_fact_page_is_readable_only_by_the_problems_that_ask_it(result, rows, tmp_path):
    """Issue 30 class 4: a fact page names the source and every variant asking its fact, and a problem's
    web_search never reaches another problem's fact, whatever it asks (every fact's name, all at once)."""
    write_knowledge(result.documents, tmp_path / "kb")
    base = LocalKnowledgeBase(tmp_path / "kb")
    askers: dict[str, set[str]] = {}
    for row in rows:
        if row["intent"] == "knowledge":
            askers.setdefault(row["knowledge_doc_id"], set()).add(row["id"])
    assert {d.doc_id: set(d.problems) for d in result.documents} == askers
    assert any(len(a) > 1 for a in askers.values())  # variants share their source's page
    own_url = {p: d.url for d in result.documents for p in d.problems}
    names = [d.url.rsplit("/", 1)[-1] for d in result.documents]
    for row in rows:
        view = base.for_problem(row["id"])
        reached = {h["url"] for q in [*names, " ".join(names), row["query"]] for h in view.search(q, 20)}
        assert reached == ({own_url[row["id"]]} if row["intent"] == "knowledge" else set()), row["id"]


# ------------------------------------------------------------------ the hard variant kinds (issue 31)

WORD = re.compile(r"[\w']+")


@pytest.fixture(scope="module")
def hard_result(catalog5k):
    return generate(catalog5k, GeneratorConfig(n=60, seed=SEED, variants=3, variant_kinds=list(HARD_KINDS)))


@pytest.fixture(scope="module")
def hard(hard_result) -> list[tuple[Problem, Problem]]:
    """(source, variant) pairs of every hard kind, three per source."""
    by_id = {p.id: p for p in hard_result.problems}
    return [(by_id[p.extra["variant_of"]], p) for p in hard_result.problems if "variant_of" in p.extra]


def overlap(a: str, b: str, n: int) -> float:
    """Jaccard overlap of the two texts' word n-grams (1: the words; 2: word pairs, which see sentence shape)."""
    wa, wb = WORD.findall(a.lower()), WORD.findall(b.lower())
    ga = {tuple(wa[i : i + n]) for i in range(len(wa) - n + 1)}
    gb = {tuple(wb[i : i + n]) for i in range(len(wb) - n + 1)}
    return len(ga & gb) / len(ga | gb)


def test_every_hard_kind_is_made_for_the_intents_it_fits(hard):
    made = Counter((v.extra["variant_kind"], v.intent.value) for _, v in hard)
    kinds = {kind for kind, _ in made}
    assert kinds == set(HARD_KINDS)
    assert {i for k, i in made if k == "riddle_reworded"} == {"knowledge"}
    assert {i for k, i in made if k == "deep_paraphrase"} == {"product", "shop", "voucher"}
    assert {i for k, i in made if k == "split_sentences"} == {"product", "shop", "voucher", "knowledge"}
    assert {i for k, i in made if k == "shop_items"} == {"shop", "voucher"}
    assert all(len(v.rewards) > 1 for _, v in hard if v.extra["variant_kind"] == "shop_items")


def _answers(source: Problem, catalog: CatalogIndex, rng: random.Random) -> list[dict[str, str]]:
    """Answers to score, each as gold id -> recommended id: the gold, the gold with one item swapped for
    another product, and other products throughout (partial credit included)."""
    gold = source.gold_product_ids()
    others = [
        p.product_id for p in catalog.bm25(rng.choice(("bag", "case", "set", "shirt", "mat")), SearchFilters(), 50)
    ]
    swapped = dict(zip(gold, gold, strict=True)) | {gold[rng.randrange(len(gold))]: rng.choice(others)}
    return [dict(zip(gold, gold, strict=True)), swapped, {g: rng.choice(others) for g in gold}]


def _score_key(problem: Problem, answer: dict[str, str], catalog: CatalogIndex, mode: ScoreMode):
    score = score_problem(problem, [answer[g] for g in problem.gold_product_ids()], catalog, mode=mode)
    details = sorted((d.gold_product_id, d.rule, d.gold_hit, d.found) for d in score.details)
    return score.success, round(score.rule, 9), score.all_found, score.same_shop, score.budget_met, details


def test_every_hard_variant_keeps_the_task_the_scorer_gives_the_same_reward(hard, catalog5k):
    """Same answer (each item's recommendation at the variant's own position), same score, both modes."""
    rng = random.Random(5)
    assert len(hard) >= 150
    for source, variant in hard:
        assert variant.voucher == source.voucher and variant.knowledge == source.knowledge
        assert sorted(variant.gold_product_ids()) == sorted(source.gold_product_ids())
        for answer in _answers(source, catalog5k, rng):
            for mode in (ScoreMode.official, ScoreMode.strict):
                expected = _score_key(source, answer, catalog5k, mode)
                assert _score_key(variant, answer, catalog5k, mode) == expected, (variant.query, answer)
        gold = {g: g for g in source.gold_product_ids()}
        assert _score_key(variant, gold, catalog5k, ScoreMode.strict)[0]  # the gold still solves it


def test_every_hard_kind_reads_differently_from_its_source(hard, rows):
    """Lower word and word-pair overlap with the source than the template paraphrase has."""
    by_id = {r["id"]: r for r in rows}
    templated = [(by_id[r["variant_of"]]["query"], r["query"]) for r in rows if r.get("variant_kind") == "paraphrase"]
    base = {n: statistics.median(overlap(a, b, n) for a, b in templated) for n in (1, 2)}
    for kind in HARD_KINDS:
        pairs = [(s.query, v.query) for s, v in hard if v.extra["variant_kind"] == kind]
        words = statistics.median(overlap(a, b, 1) for a, b in pairs)
        shape = statistics.median(overlap(a, b, 2) for a, b in pairs)
        assert words < base[1] and shape < base[2] * 0.9, (kind, words, shape, base)
        assert shape <= 0.45, (kind, shape)
        if kind != "shop_items":  # several items' names and values are shared by any wording of them
            assert words <= 0.5 and shape <= 0.25, (kind, words, shape)
        assert max(overlap(a, b, 2) for a, b in pairs) < 0.8, kind


def test_hard_variants_stay_official_style_rows(hard, hard_result):
    names = {d.doc_id: d.url.rsplit("/", 1)[-1] for d in hard_result.documents}
    askers = {d.doc_id: d.problems for d in hard_result.documents}
    for source, variant in hard:
        row = json.loads(json.dumps(variant.to_row()))  # as a file round trip
        problem = parse_row(row)
        assert problem.id == variant.id and problem.query == variant.query
        assert problem.rewards == variant.rewards and problem.knowledge == variant.knowledge
        text = variant.query
        assert "{" not in text and "  " not in text and " ." not in text and " ," not in text, text
        assert text[:1].isupper(), text
        if variant.intent is Intent.voucher:
            assert VOUCHER_RULES.search(text), text  # the rules paragraph word for word, as officially
            assert text.split("\n\n")[1] == source.query.split("\n\n")[1]
        else:
            assert "\n" not in text and text[-1] in ".?", text
        for reward in variant.rewards:  # every constraint is still said, in any spelling
            for value in [v for a in reward.attributes for vs in a.values() for v in vs]:
                assert _says(text, value), (value, text)
            for value in [v for option in reward.sku_options for v in option.values()]:
                assert _says(text, value), (value, text)
            for bounds in [b for p in reward.price for b in p.values()]:
                for bound in (b for b in bounds if b):
                    assert _says(text, str(int(bound))), (bound, text)
            for service in reward.service:
                assert re.search(SERVICE_WORDS[service], text, re.IGNORECASE), (service, text)
        if variant.knowledge is not None:
            fact = variant.knowledge.knowledge_attribute
            assert not re.search(rf"\b{re.escape(fact)}\b", text.lower()), text  # no lookup needed otherwise
            doc = variant.extra["knowledge_doc_id"]
            assert names[doc] in text and names[doc] in source.query  # the name web_search finds the fact by
            assert variant.id in askers[doc]  # and the fact's page answers the variant's episode too


SERVICE_WORDS = {"official": "LazMall", "freeShipping": r"free|no shipping fee|no shipping cost|pay for delivery",
                 "COD": r"COD|cash", "flashsale": "LazFlash|flash sale"}  # fmt: skip


UNIT_WORDS = re.compile(r"(ml|l|ltrs?|g|kg|cm|mm|m|inch(es)?|oz|w|mah|gb|tb)")


def _says(text: str, value: str) -> bool:
    """``value`` is in ``text``: as written, or its numbers and words with units respelled, or a number in words."""
    text = text.lower()
    if value.lower() in text:
        return True
    if value.isdigit() and (f"{int(value):,}" in text or number_words(int(value)) in text):
        return True
    numbers = re.findall(r"\d+(?:\.\d+)?", value)
    words = [w for w in re.findall(r"[a-z]+", value.lower()) if not UNIT_WORDS.fullmatch(w)]
    return all(re.search(rf"(?<![\d.]){re.escape(n)}(?!\d)", text) for n in numbers) and all(
        re.search(rf"\b{w}\b", text) for w in words
    )


def test_variant_kinds_are_chosen_and_bad_names_refused(catalog5k, catalog_path, tmp_path):
    res = generate(catalog5k, GeneratorConfig(n=8, seed=3, variants=2, variant_kinds=["riddle_reworded"]))
    made = [p for p in res.problems if "variant_of" in p.extra]
    assert made and {p.intent for p in made} == {Intent.knowledge}
    assert {p.extra["variant_kind"] for p in made} == {"riddle_reworded"}
    assert res.report.variants == {"riddle_reworded": len(made)}
    assert parse_kinds("hard,paraphrase") == [*HARD_KINDS, "paraphrase"] and parse_kinds("all") == list(KINDS)
    with pytest.raises(ValueError, match="unknown variant kind 'deep'; choose from paraphrase"):
        parse_kinds("deep")
    done = arena("problems", "generate", "--catalog", catalog_path, "--n", 4, "--out", tmp_path / "x.jsonl",
                 "--variants", 1, "--variant-kinds", "split,hard", check=False)  # fmt: skip
    assert done.returncode == 2 and "--variant-kinds: unknown variant kind 'split'" in done.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_number_words_and_units_are_respelled_with_the_same_quantity():
    assert number_words(300) == "three hundred" and number_words(1237) == "one thousand two hundred thirty-seven"
    assert number_words(40) == "forty" and number_words(2_000_015) == "two million fifteen"
    rng = random.Random(0)
    for text, quantity in (("750ml", "750"), ("40 L", "40"), ("1.5 m", "1.5"), ("500g pack", "500")):
        out = respell_units(text, rng)
        assert out != text and quantity in out, (text, out)
    assert respell_units("2 in 1 cable, size M", rng) == "2 in 1 cable, size M"  # no unit there


# ------------------------------------------------------------------ the leak-cluster guard on generated variants

# Every kind joins its re-grounded source in 95% of cases or more (issue 31). Measured on the fixture
# below (joined of made), before the meaning guard / with it (branch guard) / with the constraint reader's
# fixes (branch guard2): paraphrase 28 / 60 / 75 of 76, constraint_order 30 / 39 / 45 of 46, attribute_order
# 20 / 24 / 28 of 29, deep_paraphrase 2 / 18 / 35 of 35, split_sentences 3 / 42 / 63 of 63, shop_items
# 0 / 12 / 24 of 25, riddle_reworded 0 / 20 / 22 of 22, price_phrasing 24 of 24 throughout.


def regrounded(problem: Problem) -> Problem:
    """The row as if generated from another catalog: every gold id and title replaced, the constraints kept,
    and no ``variant_of`` (the guard must find the family from what each problem asks)."""
    row = {k: v for k, v in problem.to_row().items() if k not in ("variant_of", "variant_kind")}
    tag = hashlib.sha256(problem.id.encode()).hexdigest()[:10]

    def other(reward: dict) -> dict:
        title = f"Listing {tag}"
        return reward | {"product_id": f"x{tag}", "title": title if isinstance(reward["title"], str) else [title]}

    row["reward"] = [other(r) for r in row["reward"]] if isinstance(row["reward"], list) else other(row["reward"])
    return parse_row(row)


@pytest.fixture(scope="module")
def family_clusters(catalog5k) -> dict[str, dict[str, tuple[int, int]]]:
    """Per kind: (variants in their source's cluster, variants), clustered as generated (same gold) and
    re-grounded (other gold ids and titles on both sides, as the same generator run on another catalog)."""
    res = generate(catalog5k, GeneratorConfig(n=80, seed=SEED, variants=4))
    forms = {
        "with_gold": cluster_problems([parse_row(p.to_row()) for p in res.problems]),
        "regrounded": cluster_problems([regrounded(p) for p in res.problems]),
    }
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for form, clustering in forms.items():
        of = clustering.cluster_of
        joined: Counter[tuple[str, bool]] = Counter()
        for p in res.problems:
            if "variant_of" in p.extra:
                joined[p.extra["variant_kind"], of[p.id] == of[p.extra["variant_of"]]] += 1
        out[form] = {k: (joined[k, True], joined[k, True] + joined[k, False]) for k in KINDS}
    sources = [p.id for p in res.problems if "variant_of" not in p.extra]
    out["regrounded_sources"] = {"clusters": (len({forms["regrounded"].cluster_of[s] for s in sources}), len(sources))}
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_generated_variants_join_their_source_cluster_as_generated(family_clusters, kind):
    joined, made = family_clusters["with_gold"][kind]
    assert made >= 20 and joined == made, (kind, joined, made)


@pytest.mark.parametrize("kind", KINDS)
def test_generated_variants_join_their_source_cluster_when_regrounded(family_clusters, kind):
    joined, made = family_clusters["regrounded"][kind]
    assert made >= 20, (kind, made)
    assert joined / made >= 0.95, (kind, joined, made)


def test_distinct_generated_problems_stay_apart_when_regrounded(family_clusters):
    clusters, sources = family_clusters["regrounded_sources"]["clusters"]
    assert clusters == sources


def test_the_suites_page_builds_a_bank_that_carries_every_variant_kind(catalog_path, tmp_path):
    """docs/suites.md's commands, run as written (the catalog linked where the page puts it)."""
    # The page marks the block "skip" for the role guides' check (no role follows docs/suites.md): this test runs it.
    block = next(b for b in shell_blocks("docs/suites.md") if "--variant-kinds" in b.text)
    (tmp_path / "catalog").symlink_to(catalog_path)
    env = os.environ | {"PATH": f"{Path(ARENA).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-eu", "-o", "pipefail", "-c", block.text], cwd=tmp_path, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [orjson.loads(line) for line in (tmp_path / "bank.jsonl").read_bytes().splitlines()]
    assert {r["variant_kind"] for r in rows if "variant_of" in r} == set(KINDS)
    line = next(x for x in done.stderr.splitlines() if x.startswith("variants in their source's cluster, by kind:"))
    shares = dict(re.findall(r"(\w+) (\d+/\d+)", line.split(":", 1)[1]))
    assert set(shares) == set(KINDS)
    assert all(a == b for a, b in (s.split("/") for s in shares.values())), line  # same gold: always together
    assert arena("suite", "check", tmp_path / "bank-suite").returncode == 0
