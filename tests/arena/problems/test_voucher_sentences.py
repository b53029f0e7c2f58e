"""A voucher task whose amounts the two sides say in other sentences: the budget said beside the
coupon ("I can go up to 4k. Coupon ..."), the cap said as "though never more than three hundred"
after the discount, the budget said as "my cap is 1.2k". The same amounts, read into the terms on one
side and the bounds on the other, are one ask; one amount changed, or one bound turned around, is
another. Hand-written for the sixteenth session (pool 67 showed the class; none is from a pool)."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

RICE_COOKER = (
    "Need a rice cooker and a food steamer. I can go up to 4k. The coupon works on everything: spend over two "
    "thousand five hundred and it takes 12 percent off, though never more than three hundred."
)

ONE_ASK = [
    (
        "Wanted: a rice cooker plus a food steamer. I'll spend 4k at most. There's a coupon I can use on anything: "
        "once my cart tops two thousand five hundred pesos, it takes away 12 percent, though never more than three "
        "hundred.",
        "A rice cooker and a food steamer, ₱4,000 or less. Coupon on all products: above ₱2,500 it takes off 12%, "
        "capped at ₱300.",
    ),
    (
        "Looking for a sunscreen and a face wash. My budget is only 1200, but I have a voucher: it applies to all "
        "products, valid only when the total exceeds 800, 20% off with a cap of 150.",
        "Buying two skincare items: a face wash and a sunscreen. My cap is 1.2k. Voucher: twenty percent off on all "
        "products if my total is over eight hundred, with one hundred fifty pesos as the maximum deduction.",
    ),
    (
        RICE_COOKER,
        "A rice cooker and a food steamer, ₱4,000 or less. Coupon on all products: above ₱2,500 it takes off 12%, "
        "capped at ₱300.",
    ),
    (
        "Two things: a sunscreen and a face wash. My cap is 1.2k. Voucher: 20 percent off everything over eight "
        "hundred, at most ₱150 off.",
        "Sunscreen and a face wash, budget ₱1,200, voucher 20% off all products above ₱800, capped at ₱150.",
    ),
]

TWO_ASKS = [
    (
        RICE_COOKER,
        "A rice cooker and a food steamer, ₱4,000 or less. Coupon on all products: above ₱2,500 it takes off 12%, "
        "capped at ₱350.",
    ),
    (
        RICE_COOKER,
        "A rice cooker and a food steamer, ₱4,500 or less. Coupon on all products: above ₱2,500 it takes off 12%, "
        "capped at ₱300.",
    ),
    (
        "₱150 off voucher, min spend ₱1,000, for a rice cooker of at least ₱1,200",
        "₱150 off voucher, min spend ₱1,000, for a rice cooker of up to ₱1,200",
    ),
]


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_the_same_amounts_in_other_sentences_are_one_ask(a, b):
    assert veto(a, b, "voucher") is None


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_another_amount_or_direction_is_another_ask(a, b):
    assert veto(a, b, "voucher") is not None
