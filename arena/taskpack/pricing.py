"""Prices for rebuilt gold products.

The real prices are gone with the real catalog; what survives is what the tasks
say about them. A price must fall inside every range any task puts on the
product, and a voucher task's basket must meet its budget rule. Voucher rows
carry ``price_after_voucher``, the total the task author computed *after* the
discount, so the intended pre-discount total can be recovered exactly and split
over the basket: the official answer then meets the budget the way the task
meant it to (in 232 of the 250 official voucher tasks only with the voucher).
Totals are handled in integer cents so a split never drifts by float rounding.
"""

from __future__ import annotations

import math
import random

from arena.problems.model import Voucher
from arena.scoring.outcome import budget_met, discounted_total

INF = math.inf
_MIN_PRICE_CENTS = 100  # an unconstrained listing costs at least 1 peso


def intended_total(voucher: Voucher) -> float | None:
    """The pre-discount basket total that gives ``price_after_voucher``, or None if the row has none.

    A percentage voucher's discount is ``max(total * (1 - d), total - cap)``, so
    the total is ``pav / (1 - d)`` while the cap does not bind, else ``pav + cap``;
    the candidate that reproduces ``pav`` is the intended one. A total below the
    threshold means the voucher was not used and ``pav`` is the total itself.
    """
    pav = voucher.price_after_voucher
    if pav is None:
        return None
    candidates: list[float] = []
    if voucher.discount_type == "fixed" and voucher.face_value is not None:
        candidates.append(pav + voucher.face_value)
    elif voucher.discount_type == "percentage" and voucher.discount is not None:
        if voucher.discount < 1:
            candidates.append(pav / (1 - voucher.discount))
        if voucher.cap is not None:
            candidates.append(pav + voucher.cap)
    for total in candidates:
        if total >= voucher.threshold and abs(discounted_total(total, voucher) - pav) <= 0.01:
            return total
    return pav


def cents_bounds(low: float, high: float) -> tuple[int, int | None]:
    """A product's price range in whole cents; ``None`` is unbounded above."""
    hi = None if high == INF else math.floor(round(high * 100, 6))
    lo = math.ceil(round(low * 100, 6))
    if hi is None or hi >= _MIN_PRICE_CENTS:
        lo = max(lo, _MIN_PRICE_CENTS)
    return lo, hi


def basket_total(
    voucher: Voucher, low_cents: int, high_cents: int | None, preferred: float | None, shops: set[str]
) -> int | None:
    """A basket total in cents inside [low, high] that passes the scorer's budget rule.

    The intended total comes first; failing that, the cheapest total that passes
    (the rule's valid totals are "<= budget" plus, when the voucher applies, an
    interval starting at the threshold, so checking ``low`` and ``max(low,
    threshold)`` finds one whenever one exists).
    """
    candidates: list[int] = []
    if preferred is not None:
        p = round(preferred * 100)
        candidates += [p, p - 1, p + 1]
    candidates += [low_cents, max(low_cents, math.ceil(voucher.threshold * 100))]
    for cents in candidates:
        inside = low_cents <= cents and (high_cents is None or cents <= high_cents)
        if inside and budget_met(cents / 100, shops, voucher):
            return cents
    return None


def split_total(total: int, bounds: list[tuple[int, int | None]], weights: list[float]) -> list[int]:
    """Split ``total`` cents over items, each inside its bounds, roughly in proportion to ``weights``
    (typical prices of the items' categories, so a phone case does not cost more than the phone)."""
    alloc = [lo for lo, _ in bounds]
    rest = total - sum(alloc)
    if rest < 0:
        raise ValueError(f"total {total} is below the items' minimum {sum(alloc)}")
    while rest > 0:
        slack = [INF if hi is None else hi - a for a, (_, hi) in zip(alloc, bounds, strict=True)]
        active = [i for i, s in enumerate(slack) if s > 0]
        if not active:
            raise ValueError(f"total {total} is above the items' maximum")
        wsum = sum(weights[i] for i in active)
        given = 0
        for i in active:
            take = int(min(rest * weights[i] / wsum, slack[i]))
            alloc[i] += take
            given += take
        rest -= given
        if given == 0:  # less than one cent per item left: hand it out cent by cent
            for i in active:
                if rest == 0:
                    break
                alloc[i] += 1
                rest -= 1
    return alloc


def pick_price(rng: random.Random, low: float, high: float, typical: float) -> float:
    """A plausible price inside [low, high]: whole pesos when the range allows, else cents."""
    lo, hi = cents_bounds(low, high)
    if hi is not None and lo > hi:
        raise ValueError(f"no price in cents fits [{low:g}, {high:g}]")
    if hi is None:
        base = lo / 100 * rng.uniform(1.05, 1.6) if lo > _MIN_PRICE_CENTS else typical * math.exp(rng.gauss(0, 0.35))
        raw = max(base, lo / 100)
    else:
        raw = (lo + (hi - lo) * rng.uniform(0.15, 0.85)) / 100
    for candidate in (float(round(raw)), round(raw, 2)):
        cents = round(candidate * 100)
        if cents >= lo and (hi is None or cents <= hi):
            return candidate
    return lo / 100
