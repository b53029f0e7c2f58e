"""Rebuild a task pack's gold products from their merged requirements.

The facts a task checks (id, title, price range, attribute and SKU pairs,
services, shop) come from the rewards and are exact. Everything else is filler
that keeps the record looking like a listing: a category found by matching the
title against the synthetic catalog's leaf nouns, a brand (the reward's ``brand``
attribute, else "No Brand", as countless official listings say), descriptions
and a specification written from the attributes, a few more SKU variants and
filler attributes. Filler never touches a pair a reward asks for.

Every random choice comes from a ``random.Random`` seeded with the pack seed and
the product id (string seeds hash with SHA-512, not ``hash()``), so a product's
record does not depend on which other tasks are in the pack.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass

from arena.problems.model import Intent
from arena.scoring.similarity import normalize_title
from arena.shop.product import Product
from arena.shop.vocabulary import LABELS, LEAVES, Leaf
from arena.taskpack.ids import IdAllocator
from arena.taskpack.pricing import (
    basket_total,
    cents_bounds,
    intended_total,
    pick_price,
    split_total,
)
from arena.taskpack.requirements import (
    GoldRequirement,
    RequirementBook,
    TaskConflict,
    TaskRef,
    attribute_pairs,
    fmt_range,
    sku_pairs,
)
from arena.taskpack.synthetic import SERVICE_RATES

GENERIC_CATEGORY = "Others"
DEFAULT_TYPICAL_PRICE = 300.0
PRODUCT_HOST = "https://example.invalid/products/"
IMAGE_HOST = "https://example.invalid/p/"
_DIGITS = re.compile(r"\d+")


class ValueVocabulary:
    """Known values per attribute / SKU key (the synthetic vocabularies plus every reward),
    for filler and for the "one value changed" distractors."""

    def __init__(self, tasks: list[TaskRef]) -> None:
        values: dict[str, set[str]] = {}
        for leaf in LEAVES:
            for key, vals in (*leaf.attributes.items(), *leaf.sku.items()):
                values.setdefault(key, set()).update(vals)
        for task in tasks:
            for reward in task.problem.rewards:
                for key, value in (*sku_pairs(reward), *attribute_pairs(reward)):
                    values.setdefault(key, set()).add(value)
        self._values = {k: [(v, _shape(v)) for v in sorted(vals)] for k, vals in values.items()}

    def alternative(self, rng: random.Random, key: str, avoid: set[str], like: str | None = None) -> str | None:
        """Another plausible value of ``key`` outside ``avoid``, or None. With ``like``, prefer a value
        of the same shape ("12 inch" -> "14 inch", "eu:30" -> "eu:32", a colour for a colour)."""
        known = [(v, shape) for v, shape in self._values.get(key, ()) if v not in avoid]
        pool = [v for v, _ in known]
        if like is not None:
            like_shape = _shape(like)
            if like_shape != like:  # has digits: same format first, else the number bumped
                same = [v for v, shape in known if shape == like_shape]
                bumped = _bump(like, avoid)
                pool = same or ([bumped] if bumped else pool)
            else:
                pool = [v for v, shape in known if shape == v] or pool
        if pool:
            return pool[rng.randrange(len(pool))]
        for value in sorted(avoid):
            if (bumped := _bump(value, avoid)) is not None:
                return bumped
        return None


def _shape(value: str) -> str:
    return _DIGITS.sub("#", value)


def _bump(value: str, avoid: set[str]) -> str | None:
    """The value with its first number raised by one ("04" -> "05"), if that is not in ``avoid``."""
    match = _DIGITS.search(value)
    if match is None:
        return None
    digits = match.group()
    other = value[: match.start()] + str(int(digits) + 1).zfill(len(digits)) + value[match.end() :]
    return None if other in avoid else other


@functools.cache
def _leaf_phrases() -> tuple[tuple[Leaf, tuple[str, ...]], ...]:
    out = []
    for leaf in LEAVES:
        tail = leaf.path.rsplit(">", 1)[-1]
        parts = [p for p in re.split(r"[&,]", tail) if p.strip()]
        phrases = {normalize_title(p) for p in (*leaf.nouns, *parts)}
        out.append((leaf, tuple(sorted(p for p in phrases if p))))
    return tuple(out)


@functools.lru_cache(maxsize=1 << 14)
def leaf_for(title: str) -> Leaf | None:
    """The synthetic leaf whose nouns the title names most (longer phrases weigh more), or None."""
    text = f" {normalize_title(title)} "
    words = set(text.split())
    best, best_score = None, 0
    for leaf, phrases in _leaf_phrases():
        score = 0
        for phrase in phrases:
            first = phrase.split(" ", 1)[0]
            # the cheap set test first: most phrases share no word with the title
            if (first in words or f"{first}s" in words) and (f" {phrase} " in text or f" {phrase}s " in text):
                score += phrase.count(" ") + 1
        if score > best_score:
            best, best_score = leaf, score
    return best


def typical_price(leaf: Leaf | None) -> float:
    return leaf.price[0] if leaf else DEFAULT_TYPICAL_PRICE


@dataclass
class GoldBuild:
    products: dict[str, Product]  # by id, in first-appearance order
    shop_of: dict[str, str]
    conflicts: list[TaskConflict]


def build_gold_products(book: RequirementBook, seed: int, ids: IdAllocator, vocab: ValueVocabulary) -> GoldBuild:
    specs = sorted(book.specs.values(), key=lambda s: s.order)
    # Fresh ids imitate the official ones: gold ids, and the shops of pinned and kept records.
    ids.imitate(
        products=[s.product_id for s in specs],
        shops=[*book.shops.pin.values(), *(s.record.shop_id for s in specs if s.record is not None)],
    )
    shop_of: dict[str, str] = {}
    group_shop: dict[str, str] = {}
    for spec in specs:  # one shop per same-shop group, pinned or fresh
        root = book.shops.find(spec.product_id)
        if root not in group_shop:
            group_shop[root] = book.shops.pin.get(root) or ids.shop()
        shop_of[spec.product_id] = group_shop[root]

    leaves = {s.product_id: leaf_for(s.title) for s in specs}
    prices = {s.product_id: s.record.price for s in specs if s.record is not None}
    conflicts = []
    for task in book.accepted:
        if task.problem.intent is Intent.voucher:
            reason = _price_basket(task, book, prices, shop_of, leaves, seed)
            if reason is not None:
                conflicts.append(TaskConflict(where=task.where, task_id=task.problem.id, reason=reason))
    products: dict[str, Product] = {}
    for spec in specs:
        pid = spec.product_id
        rng = random.Random(f"{seed}:gold:{pid}")
        if pid not in prices:
            prices[pid] = pick_price(rng, spec.low, spec.high, typical_price(leaves[pid]))
        if spec.record is not None:
            products[pid] = spec.record
        else:
            products[pid] = _gold_product(spec, shop_of[pid], prices[pid], leaves[pid], rng, vocab)
    return GoldBuild(products=products, shop_of=shop_of, conflicts=conflicts)


def _price_basket(
    task: TaskRef,
    book: RequirementBook,
    prices: dict[str, float],
    shop_of: dict[str, str],
    leaves: dict[str, Leaf | None],
    seed: int,
) -> str | None:
    """Fix the prices of a voucher task's basket so the gold answer meets its budget."""
    voucher = task.problem.voucher
    assert voucher is not None
    basket = list(dict.fromkeys(task.problem.gold_product_ids()))
    rng = random.Random(f"{seed}:voucher:{task.problem.id}")
    bounds: list[tuple[int, int | None]] = []
    for pid in basket:
        if pid in prices:  # already fixed by a full record or an earlier voucher task
            cents = round(prices[pid] * 100)
            bounds.append((cents, cents))
            continue
        spec = book.specs[pid]
        lo, hi = cents_bounds(spec.low, spec.high)
        if hi is not None and lo > hi:
            return f"product {pid}: no price in whole cents fits {fmt_range(spec.low, spec.high)}"
        bounds.append((lo, hi))
    low = sum(lo for lo, _ in bounds)
    high = None if any(hi is None for _, hi in bounds) else sum(hi for _, hi in bounds if hi is not None)
    shops = {shop_of[pid] for pid in basket}
    total = basket_total(voucher, low, high, intended_total(voucher), shops)
    if total is None:
        span = fmt_range(low / 100, float("inf") if high is None else high / 100)
        return f"no gold basket total in {span} meets the budget {voucher.budget:g} with this voucher"
    weights = [typical_price(leaves[pid]) * rng.uniform(0.7, 1.3) for pid in basket]
    for pid, cents in zip(basket, split_total(total, bounds, weights), strict=True):
        prices[pid] = cents / 100
    return None


def label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


def listing_texts(
    title: str, attributes: dict[str, list[str]], options: list[dict[str, str]], leaf: Leaf | None
) -> tuple[str, str, str]:
    """short_description, description and specification written from the facts, in the
    official formats (";"-joined short description, "k:v;k:v" specification)."""
    noun = leaf.nouns[0] if leaf else "item"
    pairs = [f"{label(k).capitalize()}: {', '.join(v)}" for k, v in attributes.items()]
    features = [f.replace("{noun}", noun) for f in (leaf.features[:2] if leaf else ())]
    parts = [f"{title}.", *features]
    if pairs:
        parts.append("Specifications: " + "; ".join(pairs) + ".")
    if options:
        parts.append("Available variants: " + ", ".join(" / ".join(o.values()) for o in options) + ".")
    parts.append(f"Package includes: 1 x {noun}.")
    specification = ";".join(f"{label(k)}:{v}" for k, values in attributes.items() for v in values)
    return ";".join(pairs), " ".join(parts), specification


def _gold_product(
    spec: GoldRequirement, shop_id: str, price: float, leaf: Leaf | None, rng: random.Random, vocab: ValueVocabulary
) -> Product:
    attributes = {k: list(v) for k, v in spec.attributes.items()}
    if leaf is not None:  # one or two filler attributes the tasks do not mention
        spare = [k for k in leaf.attributes if k not in attributes and k != "brand"]
        for key in rng.sample(spare, min(len(spare), rng.randint(1, 2))):
            values = leaf.attributes[key]
            attributes[key] = [values[rng.randrange(len(values))]]
    brand = " ".join(w.capitalize() for w in attributes["brand"][0].split()) if attributes.get("brand") else "No Brand"
    options = [dict(o) for o in spec.options]
    if options and rng.random() < 0.7:  # other variants of the same listing
        for _ in range(rng.randint(1, 3)):
            variant = dict(options[0])
            key = sorted(variant)[rng.randrange(len(variant))]
            other = vocab.alternative(rng, key, {o.get(key, "") for o in options}, like=variant[key])
            if other is not None:
                variant[key] = other
                if variant not in options:
                    options.append(variant)
    elif not options and leaf is not None and leaf.sku and rng.random() < 0.5:
        key = sorted(leaf.sku)[rng.randrange(len(leaf.sku))]
        values = leaf.sku[key]
        for value in rng.sample(values, min(len(values), rng.randint(2, 4))):
            options.append({key: value})
    services = set(spec.services) | {name for name, rate in SERVICE_RATES if rng.random() < rate}
    short, description, specification = listing_texts(spec.title, attributes, options, leaf)
    pid = spec.product_id
    slug = "-".join(normalize_title(spec.title).split()[:8])
    return Product(
        product_id=pid,
        shop_id=shop_id,
        brand=brand,
        category=leaf.path if leaf else GENERIC_CATEGORY,
        title=spec.title,
        short_description=short,
        description=description,
        specification=specification,
        price=price,
        sold_count=min(200_000, int((1.0 - rng.random()) ** (-1.0 / 1.1)) - 1),
        sku_options={str(i + 1): o for i, o in enumerate(options)},
        attributes=attributes,
        service=[s for s, _ in SERVICE_RATES if s in services],
        main_image_url=f"{IMAGE_HOST}{rng.getrandbits(128):032x}.jpg",
        product_url=f"{PRODUCT_HOST}{slug}-i{pid}.html",
    )
