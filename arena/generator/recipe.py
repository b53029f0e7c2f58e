"""The generator's recipe numbers: how many constraints of each kind, price ranges, vouchers.

ShoppingBench's synthesis recipe, with its proportions fitted to the official
test files. Constraints are drawn from the gold product's own fields, so the
gold satisfies them by construction; vouchers are derived from the gold total.
"""

from __future__ import annotations

import math
import random
from typing import NamedTuple

from arena.problems.draft import Constraint
from arena.problems.model import Voucher
from arena.problems.nouns import usable_value
from arena.shop.product import SERVICES, Product


class Profile(NamedTuple):
    """How many constraints of each kind an item gets (fitted to the official test files)."""

    attributes: tuple[int, ...]  # weights over 0, 1, 2, ... attribute constraints
    sku: float  # chance of naming one SKU option (1-2 of its pairs)
    service: float
    price: float


PRODUCT = Profile((28, 33, 17, 9, 5, 4, 4), sku=0.48, service=0.37, price=0.73)
ITEM = Profile((30, 30, 19, 11, 6, 4), sku=0.49, service=0.35, price=0.74)
VOUCHER_ITEM = Profile((30, 27, 19, 11, 7, 6), sku=0.46, service=0.35, price=0.0)  # the budget prices them
PRICE_MODES = {"between": 35, "greater than": 50, "less than": 15}


def pick_constraints(
    product: Product, rng: random.Random, profile: Profile, exclude: frozenset[str] = frozenset()
) -> list[Constraint]:
    """Constraints drawn from the product's own fields, so the gold satisfies them by construction.

    SKU pairs come from one option only: the scorer matches a product's single
    best option, never a mix of two ("red" from one, "XL" from another).
    """
    out: list[Constraint] = []
    keys = [k for k, vs in product.attributes.items() if k not in exclude and any(usable_value(v) for v in vs)]
    want = rng.choices(range(len(profile.attributes)), weights=profile.attributes)[0]
    for key in rng.sample(keys, min(want, len(keys))):
        values = [v for v in product.attributes[key] if usable_value(v)]
        out.append(Constraint(kind="attribute", key=key, value=values[rng.randrange(len(values))]))
    taken = exclude | {c.key for c in out}
    if product.sku_options and rng.random() < profile.sku:
        option = product.sku_options[sorted(product.sku_options)[rng.randrange(len(product.sku_options))]]
        pairs = [(k, v) for k, v in option.items() if k not in taken and usable_value(v)]
        if pairs:
            m = 2 if len(pairs) >= 2 and rng.random() < 0.4 else 1
            out += [Constraint(kind="sku", key=k, value=v) for k, v in rng.sample(pairs, m)]
    if product.service and rng.random() < profile.service:
        m = 2 if len(product.service) >= 2 and rng.random() < 0.2 else 1
        chosen = sorted(rng.sample(list(product.service), m), key=SERVICES.index)
        out += [Constraint(kind="service", value=s) for s in chosen]
    if product.price >= 2 and rng.random() < profile.price:
        out.append(price_constraint(product.price, rng))
    return out


def price_constraint(price: float, rng: random.Random) -> Constraint:
    """A whole-peso range around the true price, in one of the official shapes."""
    mode = rng.choices(list(PRICE_MODES), weights=list(PRICE_MODES.values()))[0]
    if mode == "greater than":
        return Constraint(kind="price", key=mode, low=max(1, math.floor(price * rng.uniform(0.3, 0.95))))
    if mode == "less than":
        return Constraint(kind="price", key=mode, high=math.ceil(price * rng.uniform(1.05, 2.0)))
    low = max(1, math.floor(price * rng.uniform(0.5, 0.95)))
    return Constraint(kind="price", key=mode, low=low, high=math.ceil(price * rng.uniform(1.05, 1.8)))


def make_voucher(total: float, voucher_type: str, rng: random.Random) -> Voucher | None:
    """ShoppingBench's voucher recipe around the gold basket's total.

    Threshold 10-90% of the total; a fixed face value of 10-50% of the
    threshold, or a 10-50% discount capped at 10-100% of the threshold; the
    budget is the price after the voucher rounded up plus up to 10%, kept
    below the total so the voucher is needed. None when it cannot be (a
    discount under one peso).
    """
    threshold = max(1, round(total * rng.uniform(0.1, 0.9)))
    if rng.random() < 0.5:
        face = max(1, round(threshold * rng.uniform(0.1, 0.5)))
        after = total - face
        fields: dict = {"discount_type": "fixed", "face_value": face}
    else:
        discount = rng.randint(10, 50) / 100
        cap = max(1, round(threshold * rng.uniform(0.1, 1.0)))
        after = max(total * (1 - discount), total - cap)
        fields = {"discount_type": "percentage", "discount": discount, "cap": cap}
    base = math.ceil(round(after, 2))
    budget = base + math.floor(base * rng.uniform(0.0, 0.10))
    if budget >= total:
        budget = max(base, math.ceil(total) - 1)
    if budget >= total:
        return None
    return Voucher(
        voucher_type=voucher_type, threshold=threshold, price_after_voucher=round(after, 2), budget=budget, **fields
    )
