"""One candidate problem: built by its intent's builder from a seeded draw, then checked.

Candidate ``i`` of an intent draws from ``Random(f"{seed}:{intent}:{i}")``, so a
candidate is a pure function of (seed, intent, index) whichever process builds
it. A builder returns a ``Draft`` or the reason it could not make one; a draft
then passes the solvability check (``arena.generator.solvability``) or is
rejected with the check's reason.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from pydantic import BaseModel

from arena.generator.catalog_frame import CatalogFrame
from arena.generator.recipe import ITEM, PRODUCT, VOUCHER_ITEM, Profile, make_voucher, pick_constraints
from arena.generator.solvability import SearchProbe, Verdict, check_problem
from arena.problems.draft import Draft, Fact, ItemNeed, Style
from arena.problems.model import Difficulty, Intent, KnowledgeReward, Problem, content_id
from arena.problems.nouns import title_noun
from arena.problems.phrasing import render_query
from arena.problems.riddles import fact_options, invent_name, pick_place
from arena.shop.index import CatalogIndex
from arena.shop.product import Product


class Outcome(BaseModel):
    """One candidate: a solvable draft and its text, or the reason it was rejected."""

    index: int
    draft: Draft | None = None
    query: str = ""
    verdict: Verdict | None = None
    reason: str | None = None


class CandidateContext:
    """What every candidate of one run shares: the catalog, its frame, the seed and a search probe."""

    def __init__(self, catalog: CatalogIndex, frame: CatalogFrame, seed: int) -> None:
        self.catalog, self.frame, self.seed = catalog, frame, seed
        self.probe = SearchProbe(catalog)


def _need(product: Product, rng: random.Random, profile: Profile) -> ItemNeed:
    noun, article = title_noun(product)
    return ItemNeed(product=product, noun=noun, article=article, constraints=pick_constraints(product, rng, profile))


def _distinct_needs(basket: list[Product], rng: random.Random, profile: Profile) -> list[ItemNeed] | str:
    # Two items worded alike (same noun, same constraints) would make the basket's answer ambiguous.
    needs = [_need(p, rng, profile) for p in basket]
    return needs if len({(n.noun, tuple(n.constraints)) for n in needs}) == len(needs) else "indistinct_items"


def _usable(product: Product) -> bool:
    return bool(product.title.strip()) and product.price > 0


def _shop_basket(ctx: CandidateContext, rng: random.Random, sizes: dict[int, int]) -> list[Product] | str:
    anchor = ctx.frame.sample(rng)
    positions = ctx.frame.shop_positions(anchor.shop_id) if anchor.shop_id else []
    if len(positions) < 2:
        return "shop_too_small"
    k = min(len(positions), rng.choices(list(sizes), weights=list(sizes.values()))[0])
    products = [ctx.frame.product(p) for p in rng.sample(list(positions), k)]
    return products if all(_usable(p) for p in products) else "unusable_product"


def _build_product(ctx: CandidateContext, rng: random.Random, index: int, style: Style) -> Draft | str:
    product = ctx.frame.sample(rng)
    if not _usable(product):
        return "unusable_product"
    return Draft(intent=Intent.product, needs=[_need(product, rng, PRODUCT)], style=style)


def _build_shop(ctx: CandidateContext, rng: random.Random, index: int, style: Style) -> Draft | str:
    basket = _shop_basket(ctx, rng, {2: 89, 3: 86, 4: 75})  # the official split of 2-4 item shop tasks
    if isinstance(basket, str):
        return basket
    needs = _distinct_needs(basket, rng, ITEM)
    if isinstance(needs, str):
        return needs
    return Draft(intent=Intent.shop, needs=needs, style=style)


def _build_voucher(ctx: CandidateContext, rng: random.Random, index: int, style: Style) -> Draft | str:
    basket: list[Product] | str
    if rng.random() < 0.5:
        kind = "platform"
        k = rng.choices((1, 2, 3, 4), weights=(22, 40, 41, 26))[0]
        basket = [ctx.frame.sample(rng) for _ in range(k)]
        if len({p.product_id for p in basket}) < k or not all(_usable(p) for p in basket):
            return "unusable_product"
    else:
        kind = "shop"
        basket = _shop_basket(ctx, rng, {2: 30, 3: 39, 4: 52})
        if isinstance(basket, str):
            return basket
    needs = _distinct_needs(basket, rng, VOUCHER_ITEM)
    if isinstance(needs, str):
        return needs
    voucher = make_voucher(sum(p.price for p in basket), kind, rng)
    if voucher is None:
        return "voucher_not_needed"
    return Draft(intent=Intent.voucher, needs=needs, style=style, voucher=voucher)


def _build_knowledge(ctx: CandidateContext, rng: random.Random, index: int, style: Style) -> Draft | str:
    product = ctx.frame.sample(rng)
    if not _usable(product):
        return "unusable_product"
    noun, article = title_noun(product)
    options = fact_options(product, noun)
    if not options:
        return "no_fact_in_product_text"
    kind, key, value = options[rng.randrange(len(options))]
    hints = [
        c
        for c in pick_constraints(product, rng, ITEM, exclude=frozenset({key}))
        if value not in c.value.lower() and c.value.lower() not in value
    ][:2]
    fact = Fact(
        kind=kind,
        value=value,
        name=invent_name(ctx.seed, index),
        place=pick_place(rng),
        year=rng.randint(1720, 2015),
        doc_id=f"kb-{ctx.seed}-{index}",
    )
    need = ItemNeed(product=product, noun=noun, article=article, constraints=hints)
    return Draft(intent=Intent.knowledge, needs=[need], style=style, fact=fact)


_BUILDERS: dict[Intent, Callable[[CandidateContext, random.Random, int, Style], Draft | str]] = {
    Intent.product: _build_product,
    Intent.shop: _build_shop,
    Intent.voucher: _build_voucher,
    Intent.knowledge: _build_knowledge,
}


def candidate(ctx: CandidateContext, intent: Intent, index: int) -> Outcome:
    """Build and check candidate ``index`` of ``intent`` (a pure function of the seed, intent and index)."""
    rng = random.Random(f"{ctx.seed}:{intent.value}:{index}")
    style = Style(wording=rng.getrandbits(32), order=rng.getrandbits(32), money=rng.getrandbits(32))
    draft = _BUILDERS[intent](ctx, rng, index, style)
    if isinstance(draft, str):
        return Outcome(index=index, reason=draft)
    query = render_query(draft)
    verdict = check_problem(draft, assemble(draft, query, seed=ctx.seed), ctx.probe)
    if not verdict.ok:
        return Outcome(index=index, reason=verdict.reason, verdict=verdict)
    return Outcome(index=index, draft=draft, query=query, verdict=verdict)


def assemble(
    draft: Draft, query: str, *, seed: int, difficulty: Difficulty | None = None, extra: dict | None = None
) -> Problem:
    """The Problem (official row shape) a draft and its text stand for; the id hashes the row's content."""
    problem = Problem(
        id="pending",
        intent=draft.intent,
        query=query,
        difficulty=difficulty or Difficulty.easy,
        rewards=[] if draft.fact else [n.reward() for n in draft.needs],
        voucher=draft.voucher,
        knowledge=(
            KnowledgeReward(knowledge_attribute=draft.fact.value, product=draft.needs[0].product)
            if draft.fact
            else None
        ),
        source="generated",
        extra={"seed": seed, **({"knowledge_doc_id": draft.fact.doc_id} if draft.fact else {}), **(extra or {})},
    )
    if difficulty is None:
        problem.difficulty = Difficulty.from_constraint_count(problem.constraint_count())
    problem.id = content_id(problem.to_row())
    return problem


def difficulty_of(draft: Draft, verdict: Verdict) -> Difficulty:
    """By constraint count (as the official loader grades), one level up when search buries a gold product."""
    count = 2 if draft.fact else sum(n.reward().constraint_count() for n in draft.needs)
    base = Difficulty.from_constraint_count(count)
    return harder(base) if verdict.search_is_hard() else base


def harder(difficulty: Difficulty) -> Difficulty:
    order = [Difficulty.easy, Difficulty.medium, Difficulty.hard]
    return order[min(order.index(difficulty) + 1, 2)]
