"""Price bounds, discounts and services said in ways the number readers missed: "not one centavo over
₱900" is at most ₱900, a price of ₱1,499.99 is below ₱1,500, "twelve-fifty max" and "three fifty lang"
are spoken prices, an amount and up refused ("2k pataas ayoko na", "₱500 or more is a no for me") is
the most the buyer pays, "₱1,000 is the ceiling" is at most and "the floor" at least, "a fifth off" is
20 percent, and "the shipping fee should be ₱0" is free shipping. Hand-written (the eleventh session's
attack pool named the classes; none of these sentences is from a pool); a floor against a ceiling, an
amount and up accepted, another fraction, and a shipping fee paid are still other asks."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

ONE_ASK = [
    ("product", "Hair dryer 1200W, not one centavo over ₱900", "Hair dryer 1200W, ₱900 max"),
    ("product", "Desk organiser, not a single peso more than 400", "Desk organiser, up to ₱400"),
    ("product", "Wireless earbuds, no more than ₱2,999.99", "Wireless earbuds below ₱3,000"),
    ("product", "Twelve-fifty max for a 20L dry bag, orange", "Orange 20L dry bag, up to ₱1,250"),
    ("product", "Tripod for a phone, three fifty lang", "Phone tripod, ₱350 only"),
    ("product", "Gaming mouse, RGB, 2k pataas ayoko na", "RGB gaming mouse, below ₱2,000"),
    ("product", "Yoga mat 6mm; anything ₱800 or more is a no for me", "6mm yoga mat under ₱800"),
    ("product", "Bamboo cutting board, ₱600 is the ceiling", "Bamboo cutting board, ₱600 max"),
    (
        "voucher",
        "Cordless drill, budget ₱3,000, voucher takes a fifth off up to ₱400",
        "Cordless drill, budget ₱3,000, voucher 20% off capped at ₱400",
    ),
    (
        "product",
        "Mechanical keyboard, brown switches, and the shipping fee should be ₱0",
        "Mechanical keyboard with brown switches, free shipping",
    ),
    # A decimal comma before "k" ("1,5k") and thousands split by a space after the sign ("₱1 500").
    ("product", "Cordless drill under 2,5k", "Cordless drill under ₱2,500"),
    ("product", "Rice cooker under ₱1 500", "Rice cooker under ₱1,500"),
    # A thousands comma before a glued unit: "10,000mAh" is 10000 mAh, not 0.
    ("product", "Anker power bank 10,000mAh, black", "Black Anker power bank, 10000 mAh"),
    (
        "product",
        "Xiaomi power bank 20,000mAh; anything two thousand or more is a no for me",
        "Xiaomi 20000mAh power bank under ₱2,000",
    ),
]

TWO_ASKS = [
    ("product", "Bamboo cutting board, ₱600 is the ceiling", "Bamboo cutting board, ₱600 is the floor"),
    ("product", "Gaming mouse, RGB, 2k pataas ayoko na", "Gaming mouse, RGB, 2k pataas okay lang"),
    ("product", "Hair dryer 1200W, not one centavo over ₱900", "Hair dryer 1200W, not one centavo over ₱1,200"),
    ("product", "Anker power bank 10,000mAh, black", "Anker power bank 20,000mAh, black"),
    ("product", "Cordless drill under 2,5k", "Cordless drill under ₱2,000"),
    (
        "voucher",
        "Cordless drill, budget ₱3,000, voucher takes a fifth off up to ₱400",
        "Cordless drill, budget ₱3,000, voucher takes a tenth off up to ₱400",
    ),
    (
        "product",
        "Mechanical keyboard, brown switches, and the shipping fee should be ₱0",
        "Mechanical keyboard, brown switches, and the shipping fee should be ₱50",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_bound_said_otherwise_is_the_same_bound(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_another_bound_or_term_is_still_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None
