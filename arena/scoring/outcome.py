"""The outcome scorer: ShoppingBench's ``run_evaluate.py`` + ``rewards/orm.py``, and a strict mode.

Official mode reproduces the published evaluation rule for rule; the differences
are only where the official code would crash or compare float artefacts:

- A sub-reward with no scoreable constraint (no title, price, service, SKU or
  attribute) divides 0/0 in ``rule_score_reward``; here it scores 0.0 (unless the
  gold id is recommended, which scores 1 before any division, as officially).
  None of the 900 official tasks has such a reward (every one has a title).
- A ``None`` price bound (the unused side of ``greater than`` / ``less than``)
  is unbounded; officially it is never read. A percentage voucher without ``cap``
  is uncapped (officially a crash); a voucher missing the value its discount type
  needs raises ValueError.
- Success uses ``rule >= 1 - 1e-9`` and the budget comparisons a 1e-9 tolerance,
  so float summation never flips an outcome.

Recommended ids are compared as given, like the official ``split(",")``: an id
with surrounding spaces ("123, 456" gives " 456") is not in the catalog and so
scores as not found, exactly as it does in the published evaluation.

Strict mode (the live subnet's production scorer) differs in three places: the
title threshold is 0.7 instead of 0.5 for product, shop and voucher titles
(knowledge keeps 0.8); in shop and voucher tasks a recommended product counts as
*found* (for the all-matched, same-shop and budget checks) only if its rule is
> 0, so a real but irrelevant product cannot complete a basket; and an
unanswered problem is a failure (it is one officially too, but strict states it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from arena.problems.model import (
    Intent,
    KnowledgeReward,
    Problem,
    ProductReward,
    Voucher,
)
from arena.scoring.similarity import (
    KNOWLEDGE_TITLE_THRESHOLD,
    OFFICIAL_TITLE_THRESHOLD,
    STRICT_TITLE_THRESHOLD,
    TitleSimilarity,
    default_similarity,
)
from arena.shop.catalog import ProductLookup
from arena.shop.product import Product

FIELDS: tuple[str, ...] = ("title", "price", "service", "sku & attrs")
_EPS = 1e-9


class ScoreMode(StrEnum):
    official = "official"
    strict = "strict"

    @property
    def title_threshold(self) -> float:
        return OFFICIAL_TITLE_THRESHOLD if self is ScoreMode.official else STRICT_TITLE_THRESHOLD


@dataclass(slots=True)
class RuleResult:
    """One product against one (sub-)reward: ``rule`` = hits / total, with per-field counts."""

    rule: float
    gold_hit: bool
    totals: dict[str, int] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)


class SubRewardScore(BaseModel):
    """How the product at one position fared against the sub-reward at that position."""

    index: int
    gold_product_id: str
    recommended_id: str | None = None  # None: the answer had no id at this position
    in_catalog: bool = False
    found: bool = False  # counts for the all-matched / same-shop / budget checks
    gold_hit: bool = False
    rule: float = 0.0
    totals: dict[str, int] = Field(default_factory=dict)
    hits: dict[str, int] = Field(default_factory=dict)
    shop_id: str | None = None
    price: float | None = None


class OutcomeScore(BaseModel):
    """The verdict on one answer to one problem."""

    problem_id: str
    intent: Intent
    mode: ScoreMode
    answered: bool
    success: bool
    rule: float  # mean rule over all sub-rewards; (kw + title) / 2 for knowledge
    recommended: list[str] = Field(default_factory=list)
    details: list[SubRewardScore] = Field(default_factory=list)
    all_found: bool | None = None  # shop / voucher: every sub-reward matched to a found product
    same_shop: bool | None = None  # shop / voucher: all_found and a single shop_id (official "shop")
    total_price: float | None = None  # voucher: sum of the found products' prices
    budget_met: bool | None = None  # voucher
    knowledge_kw: float | None = None
    knowledge_title: float | None = None
    # Set when the episode's ending made it a failure whatever the answer ("timeout", "limit"):
    # arena.runner.verdict, from the runner's termination label.
    failed_by: str | None = None

    def field_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """Totals and hits per field, summed over the sub-rewards (diagnostics)."""
        totals = dict.fromkeys(FIELDS, 0)
        hits = dict.fromkeys(FIELDS, 0)
        for d in self.details:
            for f in FIELDS:
                totals[f] += d.totals.get(f, 0)
                hits[f] += d.hits.get(f, 0)
        return totals, hits


def parse_recommended(recommended: list[str] | str | None) -> list[str]:
    """The final ``recommend_product`` ids: a list as given, a string split on ','."""
    if recommended is None:
        return []
    if isinstance(recommended, str):
        return recommended.split(",") if recommended else []
    return [str(x) for x in recommended]


def _price_hit(mode: str, bounds: list[float | None], price: float) -> bool:
    lo, hi = (list(bounds) + [None, None])[:2]
    if mode == "between":
        return (lo is None or price >= lo) and (hi is None or price <= hi)
    if mode == "greater than":
        return lo is None or price >= lo
    if mode == "less than":
        return hi is None or price <= hi
    return False  # counted in the total, never a hit, as officially


def rule_score(
    product: Product,
    reward: ProductReward,
    *,
    mode: ScoreMode = ScoreMode.official,
    similarity: TitleSimilarity | None = None,
) -> RuleResult:
    """``rule_score_reward``: 1 for the gold id, else hits / total over every constraint.

    SKU and attribute pairs are matched against the product's attribute pairs plus
    its *single* best SKU option (or none), never a union of options: a buyer
    picks one option, so "red" from one option and "XL" from another is not a red XL.
    """
    if product.product_id == reward.product_id:
        return RuleResult(1.0, True)
    sim = similarity if similarity is not None else default_similarity()
    threshold = mode.title_threshold
    totals = dict.fromkeys(FIELDS, 0)
    hits = dict.fromkeys(FIELDS, 0)

    for title in reward.title:
        totals["title"] += 1
        if sim(product.title, title) >= threshold:
            hits["title"] += 1
    for price_range in reward.price:
        for price_mode, bounds in price_range.items():
            totals["price"] += 1
            if _price_hit(price_mode, bounds, product.price):
                hits["price"] += 1
    for service in reward.service:
        totals["service"] += 1
        if service in product.service:
            hits["service"] += 1

    wanted = [(k, v) for option in reward.sku_options for k, v in option.items()]
    wanted += [(k, v) for attr in reward.attributes for k, values in attr.items() for v in values]
    if wanted:
        attr_pairs = {(k, v) for k, values in product.attributes.items() for v in values}
        no_option: dict[str, str] = {}
        best = 0
        for option in (no_option, *product.sku_options.values()):
            n = sum(1 for k, v in wanted if (k, v) in attr_pairs or option.get(k) == v)
            best = max(best, n)
        totals["sku & attrs"] = len(wanted)
        hits["sku & attrs"] = best

    total = sum(totals.values())
    hit = sum(hits.values())
    return RuleResult(hit / total if total else 0.0, False, totals, hits)


def knowledge_score(
    product: Product, knowledge: KnowledgeReward, similarity: TitleSimilarity | None = None
) -> tuple[float, float]:
    """``web_rule_score_reward``: (kw, title), each 0 or 1; (1, 1) for the gold id."""
    gold = knowledge.product
    if product.product_id == gold.product_id:
        return 1.0, 1.0
    kw = knowledge.knowledge_attribute.lower()
    kw_score = 1.0 if kw in product.title.lower() or kw in product.description.lower() else 0.0
    sim = similarity if similarity is not None else default_similarity()
    title_score = 1.0 if sim(product.title, gold.title) >= KNOWLEDGE_TITLE_THRESHOLD else 0.0
    return kw_score, title_score


def _lookup(catalog: ProductLookup, product_id: str | None) -> Product | None:
    # An empty id is "no product" (officially searcher.doc("") finds nothing).
    return catalog.get(product_id) if product_id else None


def _score_position(
    index: int,
    reward: ProductReward,
    product_id: str | None,
    catalog: ProductLookup,
    mode: ScoreMode,
    similarity: TitleSimilarity | None,
) -> SubRewardScore:
    product = _lookup(catalog, product_id)
    if product is None:
        return SubRewardScore(index=index, gold_product_id=reward.product_id, recommended_id=product_id)
    result = rule_score(product, reward, mode=mode, similarity=similarity)
    return SubRewardScore(
        index=index,
        gold_product_id=reward.product_id,
        recommended_id=product_id,
        in_catalog=True,
        found=mode is ScoreMode.official or result.rule > 0,
        gold_hit=result.gold_hit,
        rule=result.rule,
        totals=result.totals,
        hits=result.hits,
        shop_id=product.shop_id,
        price=product.price,
    )


def discounted_total(total: float, voucher: Voucher) -> float:
    """The basket total after the voucher (the caller checks the threshold)."""
    if voucher.discount_type == "fixed":
        if voucher.face_value is None:
            raise ValueError("a fixed voucher needs face_value")
        return total - voucher.face_value
    if voucher.discount is None:
        raise ValueError("a percentage voucher needs discount")
    after = total * (1 - voucher.discount)
    return after if voucher.cap is None else max(after, total - voucher.cap)


def budget_met(total: float, shop_ids: set[str], voucher: Voucher) -> bool:
    """``eval_voucher``'s budget check, for a basket where every sub-reward is matched."""
    if total <= voucher.budget + _EPS:
        return True
    applies = voucher.voucher_type == "platform" or len(shop_ids) == 1
    if not applies or total < voucher.threshold - _EPS:
        return False
    return discounted_total(total, voucher) <= voucher.budget + _EPS


def _is_one(rule: float) -> bool:
    return rule >= 1 - _EPS


def score_problem(
    problem: Problem,
    recommended: list[str] | str | None,
    catalog: ProductLookup,
    mode: ScoreMode = ScoreMode.official,
    similarity: TitleSimilarity | None = None,
) -> OutcomeScore:
    """Score the final ``recommend_product`` answer to one problem.

    ``recommended`` is the id list of the *last* recommend_product call (a comma
    string is split on ","), or None when the agent never recommended anything.
    """
    ids = parse_recommended(recommended)
    answered = any(ids)
    fields = _HANDLERS[problem.intent](problem, ids, catalog, mode, similarity)
    if not answered:
        fields["success"] = False
    # Built once: validating one model is far cheaper than many validated setattrs.
    return OutcomeScore(
        problem_id=problem.id, intent=problem.intent, mode=mode, answered=answered, recommended=ids, **fields
    )


_Handler = Callable[[Problem, list[str], ProductLookup, ScoreMode, TitleSimilarity | None], dict[str, Any]]


def _score_product(
    problem: Problem,
    ids: list[str],
    catalog: ProductLookup,
    mode: ScoreMode,
    similarity: TitleSimilarity | None,
) -> dict[str, Any]:
    first = ids[0] if ids else None
    detail = _score_position(0, problem.rewards[0], first, catalog, mode, similarity)
    return {"details": [detail], "rule": detail.rule, "success": detail.in_catalog and _is_one(detail.rule)}


def _score_basket(
    problem: Problem,
    ids: list[str],
    catalog: ProductLookup,
    mode: ScoreMode,
    similarity: TitleSimilarity | None,
) -> dict[str, Any]:
    details = [
        _score_position(i, reward, ids[i] if i < len(ids) else None, catalog, mode, similarity)
        for i, reward in enumerate(problem.rewards)
    ]
    found = [d for d in details if d.found]
    shop_ids = {d.shop_id or "" for d in found}
    rule = sum(d.rule for d in details if d.in_catalog) / len(problem.rewards)
    all_found = len(found) == len(problem.rewards)
    same_shop = all_found and len(shop_ids) == 1
    fields: dict[str, Any] = {"details": details, "rule": rule, "all_found": all_found, "same_shop": same_shop}
    if problem.intent is Intent.shop:
        fields["success"] = _is_one(rule) and same_shop
        return fields
    voucher = problem.voucher
    if voucher is None:
        raise ValueError(f"voucher problem {problem.id} has no voucher")
    total = sum(d.price or 0.0 for d in found)
    met = all_found and budget_met(total, shop_ids, voucher)
    fields.update(total_price=total, budget_met=met, success=_is_one(rule) and met)
    return fields


def _score_knowledge(
    problem: Problem,
    ids: list[str],
    catalog: ProductLookup,
    mode: ScoreMode,
    similarity: TitleSimilarity | None,
) -> dict[str, Any]:
    if problem.knowledge is None:
        raise ValueError(f"knowledge problem {problem.id} has no knowledge reward")
    gold_id = problem.knowledge.product.product_id
    first = ids[0] if ids else None
    product = _lookup(catalog, first)
    kw = title = 0.0
    if product is not None:
        kw, title = knowledge_score(product, problem.knowledge, similarity)
    rule = (kw + title) / 2
    detail = SubRewardScore(
        index=0,
        gold_product_id=gold_id,
        recommended_id=first,
        in_catalog=product is not None,
        found=product is not None,
        gold_hit=product is not None and product.product_id == gold_id,
        rule=rule,
        shop_id=product.shop_id if product else None,
        price=product.price if product else None,
    )
    return {"details": [detail], "rule": rule, "success": _is_one(rule), "knowledge_kw": kw, "knowledge_title": title}


_HANDLERS: dict[Intent, _Handler] = {
    Intent.product: _score_product,
    Intent.shop: _score_basket,
    Intent.voucher: _score_basket,
    Intent.knowledge: _score_knowledge,
}
