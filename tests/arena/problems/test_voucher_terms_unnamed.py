"""A voucher problem states its terms whether or not it says "voucher": "air fryer, budget 3k, ₱300 off
min spend ₱2,500" is the voucher request "air fryer, budget ₱3,000, with a ₱300-off voucher for orders of
₱2,500 or more", never a price bound of ₱300. Tagalog's linker glued to a word ("pinakamalaking") is
that word, and "ang target ko" names no thing. Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import read_query, veto

ONE_ASK = [
    (
        "air fryer, budget 3k, ₱300 off min spend ₱2,500",
        "I want an air fryer with a budget of ₱3,000 and a ₱300-off voucher for orders of ₱2,500 or more",
    ),
    ("desk lamp, ₱800 budget, 10% off capped at ₱50", "Desk lamp within ₱800 using my 10% off voucher (max ₱50)"),
    ("rain boots, budget ₱1,200, cashback 5% max ₱40", "rain boots, ₱1,200 budget, voucher: 5% cashback up to ₱40"),
]

TWO_ASKS = [
    ("air fryer, budget 3k, ₱300 off min spend ₱2,500", "air fryer, budget 3k, ₱200 off min spend ₱2,500"),
    ("desk lamp, ₱800 budget, 10% off capped at ₱50", "desk lamp, ₱800 budget, 10% off capped at ₱80"),
    ("rain boots, budget ₱1,200, cashback 5% max ₱40", "rain boots, budget ₱1,500, cashback 5% max ₱40"),
    (
        "10% off capped ₱300, bibili ng rattan sofa, budget 9k",
        "10% off capped ₱300, rattan na dining table ang target ko, budget 9k",
    ),
]


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_voucher_terms_said_without_the_word_are_the_voucher(a, b):
    assert veto(a, b, "voucher") is None


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_another_unnamed_term_is_another_voucher(a, b):
    assert veto(a, b, "voucher") is not None


def test_the_terms_are_no_price_bound_of_the_request():
    request = read_query("air fryer, budget 3k, ₱300 off min spend ₱2,500", "voucher")
    assert request.voucher is not None and 300.0 in request.voucher[3]
    # outside a voucher problem the same words are the request's own (no voucher is assumed)
    assert read_query("air fryer, ₱300 off min spend ₱2,500", "product").voucher is None


def test_a_tagalog_linker_glued_to_a_word_is_the_word():
    assert "big" in read_query("tumbler na may pangalan ng pinakamalaking planeta", "knowledge").whole.words
    assert "target" not in read_query("rattan na dining table ang target ko", "product").whole.words


STACKED = [
    # one ask: the free shipping is a second voucher in both
    (
        "backpack, budget ₱1,200, ₱150 off min ₱999, stacked w/ free ship",
        "Backpack within ₱1,200: I have a ₱150-off voucher for ₱999 and up, plus a free shipping voucher",
        None,
    ),
    # two asks: one stacks a free-shipping voucher, the other does not
    (
        "desk fan, budget ₱1,500, ₱100-off voucher (min ₱999) stacked with a free shipping voucher",
        "desk fan, budget ₱1,500, ₱100-off voucher (min ₱999)",
        "apart",
    ),
    # money off the shipping is a shipping voucher's
    (
        "rain jacket, ₱40 off shipping voucher, budget ₱600",
        "rain jacket, free shipping voucher up to ₱40, budget ₱600",
        None,
    ),
]


@pytest.mark.parametrize(("a", "b", "verdict"), STACKED)
def test_a_stacked_free_shipping_voucher_is_a_second_benefit(a, b, verdict):
    found = veto(a, b, "voucher")
    assert (found is None) if verdict is None else (found is not None), found
