"""How each kind of near-miss distractor is made: a copy of the gold product that breaks one thing.

Every builder starts from ``_base`` (the gold under a near title, its own sales,
images and a slightly different price that still fits every range), changes
the one thing its kind breaks, and returns the record with a line saying what
it broke, or None when the gold offers nothing of that kind to break. Whether
the result really fails every task is checked by ``arena.taskpack.distractors``.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from arena.scoring.outcome import budget_met
from arena.scoring.similarity import (
    KNOWLEDGE_TITLE_THRESHOLD,
    OFFICIAL_TITLE_THRESHOLD,
    STRICT_TITLE_THRESHOLD,
    TitleSimilarity,
    normalize_title,
)
from arena.shop.product import Product
from arena.shop.vocabulary import GENERAL_ADJECTIVES
from arena.taskpack.gold import (
    GENERIC_CATEGORY,
    IMAGE_HOST,
    ValueVocabulary,
    leaf_for,
    listing_texts,
)
from arena.taskpack.ids import IdAllocator
from arena.taskpack.requirements import (
    GoldRequirement,
    TaskRef,
    attribute_pairs,
    fmt_range,
    reward_interval,
    sku_pairs,
)


class DistractorKind(StrEnum):
    price = "price"
    attribute = "attribute"
    sku = "sku"
    service = "service"
    shop = "shop"
    budget = "budget"
    knowledge = "knowledge"
    title = "title"  # type: ignore[assignment]  # the kind shadows str.title on purpose: members are their names


BASKET_KINDS = frozenset({DistractorKind.shop, DistractorKind.budget})


@dataclass
class DistractorContext:
    seed: int
    ids: IdAllocator
    vocab: ValueVocabulary
    gold: dict[str, Product]
    similarity: TitleSimilarity
    titles: list[str] = field(default_factory=list)  # every gold title: foreign words for "title" distractors
    titles_by_category: dict[str, list[str]] = field(default_factory=dict)
    answers: list[str] = field(default_factory=list)  # every knowledge answer: substitutes for "knowledge"

    def get(self, product_id: str) -> Product | None:
        return self.gold.get(product_id)


_Built = tuple[Product, str] | None


def _title_refs(spec: GoldRequirement) -> list[str]:
    refs = [t for r in spec.rewards for t in r.title]
    return refs + ([spec.record.title] if spec.record is not None else [])


def near_title(rng: random.Random, title: str, refs: list[str], floor: float, sim: TitleSimilarity) -> str:
    """The title as another seller would list it: one word moved, an adjective swapped in or added or a word dropped,
    still at least ``floor`` similar to every reference title (else the title unchanged)."""
    words = title.split()
    for _ in range(8):
        w = list(words)
        if len(w) >= 2:
            moved = w.pop(rng.randrange(len(w)))
            w.insert(rng.randrange(len(w) + 1), moved)
        adjective = " ".join(p.capitalize() for p in GENERAL_ADJECTIVES[rng.randrange(len(GENERAL_ADJECTIVES))].split())
        # Mostly the same length as the gold title: BM25 favours shorter titles, and a copy that is
        # always longer would always rank below its gold, a tell a first-hit agent could exploit.
        r = rng.random()
        if len(w) >= 4 and r < 0.5:
            w[rng.randrange(len(w))] = adjective
        elif len(w) >= 5 and r < 0.75:
            del w[rng.randrange(len(w))]
        else:
            w.insert(rng.randrange(len(w) + 1), adjective)
        candidate = " ".join(w)
        if candidate != title and all(sim(candidate, ref) >= floor for ref in refs):
            return candidate
    return title


def _base(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> dict:
    """A copy of the gold product under a placeholder id, with a near title, its own sales and images,
    and a slightly different price that still fits every range."""
    gold = ctx.gold[spec.product_id]
    fields = gold.model_dump()
    floor = KNOWLEDGE_TITLE_THRESHOLD if spec.record is not None else STRICT_TITLE_THRESHOLD
    fields["title"] = near_title(rng, gold.title, _title_refs(spec), floor, ctx.similarity)
    fields["product_id"] = f"{spec.product_id}~candidate"
    if not all(t.same_shop for t in spec.tasks):
        fields["shop_id"] = ctx.ids.shop()
    fields["sold_count"] = min(200_000, int((1.0 - rng.random()) ** (-1.0 / 1.1)) - 1)
    fields["main_image_url"] = f"{IMAGE_HOST}{rng.getrandbits(128):032x}.jpg"
    jittered = round(gold.price * rng.uniform(0.9, 1.1))
    if spec.low <= jittered <= spec.high and jittered > 0:
        fields["price"] = cents_like(gold.price, float(jittered), rng, lambda p: spec.low <= p <= spec.high)
    return fields


def cents_like(gold_price: float, price: float, rng: random.Random, allowed: Callable[[float], bool]) -> float:
    """``price`` (a whole number) with cents when the gold price has cents, staying where ``allowed``.

    Whole-number distractor prices beside gold prices like 167.24 told the gold apart: now a
    distractor's price has cents exactly when its gold's has."""
    if round(gold_price * 100) % 100 == 0:
        return price
    cents = rng.randrange(1, 100) / 100
    for candidate in (round(price + cents, 2), round(price - 1 + cents, 2)):
        if candidate > 0 and allowed(candidate):
            return candidate
    return price


def _finish(spec: GoldRequirement, fields: dict) -> Product:
    """The distractor's record. A rebuilt gold's texts are rewritten from the distractor's own title
    and facts, so the listing neither names the gold title nor contradicts itself; a full record
    (knowledge) keeps its real texts, edited only where the builder says."""
    if spec.record is not None:
        return Product.model_validate(fields)
    short, description, specification = listing_texts(
        fields["title"], fields["attributes"], list(fields["sku_options"].values()), leaf_for(fields["title"])
    )
    return Product.model_validate(
        fields | {"short_description": short, "description": description, "specification": specification}
    )


def _price(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    intervals = [reward_interval(r) for r in spec.rewards]
    lowest = min(lo for lo, _ in intervals)
    highest = max(hi for _, hi in intervals)
    sides = (["below"] if lowest >= 2 else []) + (["above"] if highest != math.inf else [])
    if not sides:
        return None
    gold_price = ctx.gold[spec.product_id].price
    if sides[rng.randrange(len(sides))] == "below":
        price = float(max(1, math.floor(lowest * rng.uniform(0.55, 0.9))))
        if price >= lowest:
            return None
        price = cents_like(gold_price, price, rng, lambda p: p < lowest)
    else:
        price = cents_like(gold_price, float(math.ceil(highest * rng.uniform(1.1, 1.6))), rng, lambda p: p > highest)
    fields = _base(spec, ctx, rng) | {"price": price}
    ranges = ", ".join(fmt_range(lo, hi) for lo, hi in intervals)
    return _finish(spec, fields), f"price {price:g} outside {ranges}"


def _change_pair(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random, sku: bool) -> _Built:
    pairs_of = sku_pairs if sku else attribute_pairs
    common = sorted(set.intersection(*(set(pairs_of(r)) for r in spec.rewards)))
    if not common:
        return None
    key, value = common[rng.randrange(len(common))]
    gold = ctx.gold[spec.product_id]
    avoid = {v for r in spec.rewards for k, v in (*sku_pairs(r), *attribute_pairs(r)) if k == key}
    avoid |= set(gold.attributes.get(key, ())) | {o[key] for o in gold.sku_options.values() if key in o}
    other = ctx.vocab.alternative(rng, key, avoid, like=value)
    if other is None:
        return None
    fields = _base(spec, ctx, rng)
    if key in fields["attributes"]:
        fields["attributes"][key] = list(dict.fromkeys(other if v == value else v for v in fields["attributes"][key]))
    options: list[dict[str, str]] = []
    for option in fields["sku_options"].values():
        changed = {k: (other if k == key and v == value else v) for k, v in option.items()}
        if changed not in options:
            options.append(changed)
    fields["sku_options"] = {str(i + 1): o for i, o in enumerate(options)}
    where = "SKU option" if sku else "attribute"
    return _finish(spec, fields), f"{where} {key}: {value!r} -> {other!r}"


def _attribute(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    return _change_pair(spec, ctx, rng, sku=False)


def _sku(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    return _change_pair(spec, ctx, rng, sku=True)


def _service(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    common = sorted(set.intersection(*(set(r.service) for r in spec.rewards)))
    if not common:
        return None
    dropped = common[rng.randrange(len(common))]
    fields = _base(spec, ctx, rng)
    fields["service"] = [s for s in fields["service"] if s != dropped]
    return _finish(spec, fields), f"service {dropped} removed"


def _shop(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    fields = _base(spec, ctx, rng) | {"shop_id": ctx.ids.shop()}
    return _finish(spec, fields), f"sold by shop {fields['shop_id']}, not {ctx.gold[spec.product_id].shop_id}"


def _budget(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    gold = ctx.gold[spec.product_id]
    step = max(10.0, gold.price * rng.uniform(0.3, 0.6))
    for _ in range(16):
        price = cents_like(gold.price, float(math.ceil(gold.price + step)), rng, lambda p: p > gold.price)
        if price > spec.high:
            return None
        if all(not _basket_meets_budget(task, spec.product_id, price, ctx) for task in spec.tasks):
            fields = _base(spec, ctx, rng) | {"price": price, "shop_id": gold.shop_id}
            return _finish(spec, fields), f"price {price:g} breaks the voucher budget (gold {gold.price:g})"
        step *= 2
    return None


def _basket_meets_budget(task: TaskRef, pid: str, price: float, ctx: DistractorContext) -> bool:
    voucher = task.problem.voucher
    assert voucher is not None
    basket = [ctx.gold[p] for p in task.problem.gold_product_ids()]
    total = sum(price if p.product_id == pid else p.price for p in basket)
    return budget_met(total, {p.shop_id for p in basket}, voucher)


def _knowledge(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    answers = sorted({t.problem.knowledge.knowledge_attribute for t in spec.tasks if t.problem.knowledge})
    lowered = [a.lower() for a in answers]
    pool = [w for w in ctx.answers if not any(a in w.lower() or w.lower() in a for a in lowered)]
    if not pool or not answers:
        return None
    substitute = pool[rng.randrange(len(pool))]
    fields = _base(spec, ctx, rng)
    for answer in answers:
        pattern = re.compile(re.escape(answer), re.IGNORECASE)
        for name in ("title", "description", "short_description", "specification", "brand"):
            fields[name] = pattern.sub(substitute, fields[name])
        fields["attributes"] = {
            k: [pattern.sub(substitute.lower(), v) for v in vals] for k, vals in fields["attributes"].items()
        }
    return _finish(spec, fields), f"answer {', '.join(answers)!r} replaced by {substitute!r}"


def _title(spec: GoldRequirement, ctx: DistractorContext, rng: random.Random) -> _Built:
    gold = ctx.gold[spec.product_id]
    refs = _title_refs(spec)
    own = [w for w in gold.title.split() if len(normalize_title(w)) > 2] or gold.title.split()
    # words from listings of the same category read like a sibling product, not a random one
    others = [t for t in ctx.titles_by_category.get(gold.category, ()) if t != gold.title]
    if len(others) < 3 or gold.category == GENERIC_CATEGORY:
        others = [t for t in ctx.titles if t != gold.title]
    if not own or not others:
        return None
    for _ in range(8):
        words = others[rng.randrange(len(others))].split()[: rng.randint(3, 7)]
        for word in rng.sample(own, min(len(own), rng.randint(1, 2))):
            words.insert(rng.randrange(len(words) + 1), word)
        candidate = " ".join(words)
        best = max(ctx.similarity(candidate, ref) for ref in refs)
        if best < OFFICIAL_TITLE_THRESHOLD:
            fields = _base(spec, ctx, rng) | {"title": candidate}
            return _finish(spec, fields), f"another listing (title similarity {best:.2f})"
    return None


BUILDERS = {
    DistractorKind.price: _price,
    DistractorKind.attribute: _attribute,
    DistractorKind.sku: _sku,
    DistractorKind.service: _service,
    DistractorKind.shop: _shop,
    DistractorKind.budget: _budget,
    DistractorKind.knowledge: _knowledge,
    DistractorKind.title: _title,
}
