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
    # Grands and halves, "north of" / "south of", a floor or ceiling said of the amount, a verb inside
    # "not ... a single peso more than", thousands split by a space before mAh, percent in Tagalog.
    ("product", "Air purifier, half a grand max", "Air purifier up to ₱500"),
    ("product", "Air purifier, a grand and a half max", "Air purifier up to ₱1,500"),
    ("product", "Air purifier, one and a half grand max", "Air purifier up to ₱1,500"),
    ("product", "Air purifier, two and a half thou max", "Air purifier up to ₱2,500"),
    ("product", "Trail running shoes, something north of ₱3,000", "Trail running shoes over ₱3,000"),
    ("product", "Desk lamp, south of ₱700", "Desk lamp under ₱700"),
    ("product", "Leather wallet; ₱800 is my floor", "Leather wallet, at least ₱800"),
    ("product", "Electric kettle, I'm not spending a single peso more than ₱1,100", "Electric kettle, ₱1,100 max"),
    ("product", "Power bank 20 000 mAh, white", "White power bank 20,000mAh"),
    (
        "voucher",
        "Earbuds, budget ₱1,500, voucher kinse porsyento off basta ₱800 pataas",
        "Earbuds, budget ₱1,500, voucher 15% off, min spend ₱800",
    ),
    # A model's "+" is its "Plus"; "2nd gen" is "second generation".
    ("product", "Clear case for Galaxy S24+", "Clear case for Galaxy S24 Plus"),
    ("product", "Apple Pencil 2nd gen", "Apple Pencil (second generation)"),
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
    # "ten" stays a spoken price's tens beside the teens as hundreds: "one ten pesos" is 110, not 10
    ("product", "Phone ring holder, one ten pesos only", "Phone ring holder, ₱120 only"),
    ("product", "Air purifier, half a grand max", "Air purifier, a grand max"),
    ("product", "Trail running shoes, something north of ₱3,000", "Trail running shoes, something south of ₱3,000"),
    ("product", "Leather wallet; ₱800 is my floor", "Leather wallet; ₱800 is my ceiling"),
    ("product", "Clear case for Galaxy S24+", "Clear case for Galaxy S24"),
    ("product", "Clear case for iPhone 15 Plus", "Clear case for iPhone 15"),
    ("product", "Apple Pencil 2nd gen", "Apple Pencil 1st gen"),
    ("product", "Black swimsuit, one-piece, size M", "Black swimsuit, two-piece, size M"),
    (
        "voucher",
        "Earbuds, budget ₱1,500, voucher kinse porsyento off basta ₱800 pataas",
        "Earbuds, budget ₱1,500, voucher kinse pesos off basta ₱800 pataas",
    ),
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
