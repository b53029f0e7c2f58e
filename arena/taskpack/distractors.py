"""Near-miss distractors: listings that look like a gold product but fail its task.

Without them a task-pack catalog would hold one obvious match per task and an
agent could recommend the first search hit without reading anything. Each
distractor copies its gold product, perturbs the title the way sellers retitle a
listing (a word moved, an adjective swapped in or added; still similar enough to
pass the title check, so the title is not what gives it away) and breaks exactly
one thing the task checks:

- ``price``: a price outside every range the rewards put on the product;
- ``attribute`` / ``sku``: one asked-for attribute or SKU value changed, wherever
  it appears (attributes and every SKU option);
- ``service``: one required service removed;
- ``shop``: sold by another shop (tasks that need one shop for the whole basket);
- ``budget``: priced so the gold basket no longer meets the voucher budget;
- ``knowledge``: the riddle's answer replaced by another word;
- ``title``: a different listing that shares a word or two with the gold title.

``shop`` and ``budget`` keep every per-product fact, so their rule score is 1 by
construction; they fail at the basket level (same shop, budget), and that is what
is checked for them. Every distractor is checked with the real scorer against
every task that names its gold product, and one that would still pass (or would
complete another slot of those tasks) is regenerated as another kind or skipped,
never kept.
"""

from __future__ import annotations

import random

from pydantic import BaseModel

from arena.problems.model import Intent, ProductReward
from arena.scoring.outcome import ScoreMode, knowledge_score, rule_score, score_problem
from arena.scoring.similarity import normalize_title
from arena.shop.product import Product
from arena.taskpack.distractor_builders import BASKET_KINDS, BUILDERS, DistractorContext, DistractorKind
from arena.taskpack.gold import PRODUCT_HOST
from arena.taskpack.requirements import GoldRequirement, attribute_pairs, sku_pairs

DEFAULT_DISTRACTORS = 3
_ATTEMPTS = 4


class DistractorRecord(BaseModel):
    """Which gold product a distractor imitates and what it breaks (kept in ``taskpack.json``)."""

    product_id: str
    gold_id: str
    kind: DistractorKind
    detail: str


class _Overlay:
    """The gold catalog plus one candidate, for basket checks with the real scorer."""

    def __init__(self, ctx: DistractorContext, extra: Product) -> None:
        self._ctx, self._extra = ctx, extra

    def get(self, product_id: str) -> Product | None:
        return self._extra if product_id == self._extra.product_id else self._ctx.get(product_id)


def available_kinds(spec: GoldRequirement) -> list[DistractorKind]:
    """Kinds that break a constraint of *every* task naming the product (else some task would accept it)."""
    intents = {t.problem.intent for t in spec.tasks}
    kinds: list[DistractorKind] = []
    if intents == {Intent.knowledge}:
        return [DistractorKind.knowledge]
    if Intent.knowledge in intents or not spec.rewards:
        return kinds
    if all(r.price for r in spec.rewards):
        kinds.append(DistractorKind.price)
    if set.intersection(*(set(attribute_pairs(r)) for r in spec.rewards)):
        kinds.append(DistractorKind.attribute)
    if set.intersection(*(set(sku_pairs(r)) for r in spec.rewards)):
        kinds.append(DistractorKind.sku)
    if set.intersection(*(set(r.service) for r in spec.rewards)):
        kinds.append(DistractorKind.service)
    if all(t.same_shop for t in spec.tasks):
        kinds.append(DistractorKind.shop)
    if intents == {Intent.voucher}:
        kinds.append(DistractorKind.budget)
    return kinds


def make_distractors(
    spec: GoldRequirement, ctx: DistractorContext, count: int
) -> tuple[list[Product], list[DistractorRecord], int]:
    """Up to ``count`` checked distractors for one gold product, and how many slots were skipped."""
    rng = random.Random(f"{ctx.seed}:distractors:{spec.product_id}")
    kinds = available_kinds(spec)
    rng.shuffle(kinds)
    sequence = [*kinds, DistractorKind.title]
    products: list[Product] = []
    records: list[DistractorRecord] = []
    skipped = 0
    for slot in range(count):
        for attempt in range(_ATTEMPTS):
            kind = sequence[(slot + attempt) % len(sequence)]
            built = BUILDERS[kind](spec, ctx, rng)
            if built is None or not fails_everywhere(built[0], kind, spec, ctx):
                continue
            pid = ctx.ids.product()
            slug = "-".join(normalize_title(built[0].title).split()[:8])
            product = built[0].model_copy(
                update={"product_id": pid, "product_url": f"{PRODUCT_HOST}{slug}-i{pid}.html"}
            )
            products.append(product)
            records.append(DistractorRecord(product_id=pid, gold_id=spec.product_id, kind=kind, detail=built[1]))
            break
        else:
            skipped += 1
    return products, records, skipped


def fails_everywhere(candidate: Product, kind: DistractorKind, spec: GoldRequirement, ctx: DistractorContext) -> bool:
    """True when no task naming the gold product would accept ``candidate`` in the gold's place,
    and ``candidate`` fills no other slot of those tasks that the gold itself cannot fill."""
    for task in spec.tasks:
        problem = task.problem
        if problem.knowledge is not None:
            kw, title = knowledge_score(candidate, problem.knowledge, ctx.similarity)
            if kw + title >= 2:
                return False
            continue
        for reward in problem.rewards:
            if _passes(candidate, reward, ctx):
                if reward.product_id == spec.product_id:
                    if kind not in BASKET_KINDS:
                        return False
                # Another slot: sibling listings of one shop can pass each other's rewards; a copy of
                # the gold may do what the gold does, but must not open a slot the gold cannot fill.
                elif not _passes(ctx.gold[spec.product_id], reward, ctx):
                    return False
        if kind in BASKET_KINDS:
            answer = [candidate.product_id if p == spec.product_id else p for p in problem.gold_product_ids()]
            if score_problem(problem, answer, _Overlay(ctx, candidate), similarity=ctx.similarity).success:
                return False
    return True


def _passes(product: Product, reward: ProductReward, ctx: DistractorContext) -> bool:
    return rule_score(product, reward, mode=ScoreMode.official, similarity=ctx.similarity).rule >= 1
