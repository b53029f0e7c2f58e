"""Services said the way Filipino shoppers say them rather than by their names: paying the rider in cash
is cash on delivery ("cash ko na lang iaabot sa rider", "bayad cash sa rider", "I'll pay the courier"), the
seller shouldering the shipping is free shipping ("sagot ng seller ang shipping", "the seller covers
shipping"), a brand's flagship shop is its official store; and a value ruled out with who does not want it between ("ayaw niya ng
itim", "ayaw ni misis ng pink"); prices spoken after a bound ("hindi lalagpas ng nine ninety-nine",
"isang libo't kalahati"), an amount and up the buyer cannot afford (the most they pay), a gift "for her"
or "for him", and how headphones sit ("over-ear" / "on-ear"). Hand-written, none from a labelled pool; a buyer shouldering the
shipping, no service at all, or the value wanted instead, is still another ask."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

ONE_ASK = [
    (
        "product",
        "Rice cooker 1.8L, under ₱2,000, COD",
        "Rice cooker 1.8L, under ₱2,000, cash ko na lang iaabot sa rider",
    ),
    (
        "product",
        "White monobloc chair, under ₱500, cash on delivery",
        "White monobloc chair, under ₱500, bayad cash sa rider",
    ),
    ("product", "Desk lamp, LED, under ₱600, COD", "Desk lamp, LED, under ₱600, I'll pay the courier when it comes"),
    (
        "product",
        "Electric kettle 1.7L, under ₱900, free shipping",
        "Electric kettle 1.7L, under ₱900, dapat sagot ng seller ang shipping",
    ),
    (
        "product",
        "Stand fan 16 inch, under ₱1,500, the seller covers shipping",
        "Stand fan 16 inch, under ₱1,500, free shipping",
    ),
    ("product", "Nivea body lotion 400ml from the official store", "Nivea body lotion 400ml, flagship shop only"),
    ("product", "Phone tripod 1.7m, black, ₱999 max", "Black phone tripod 1.7m, hindi lalagpas ng nine ninety-nine."),
    ("product", "USB desk fan, 8 inch, below ₱1,500", "USB desk fan, 8 pulgada, wag lalagpas ng isang libo't kalahati"),
    ("product", "Philips air fryer 4.1L, black, SF sagot ni seller", "Philips air fryer 4.1L, black, free shipping"),
    (
        "product",
        "2-in-1 robot vacuum and mop, ₱12k pataas, lampas na sa kaya ko",
        "2-in-1 robot vacuum and mop, below ₱12,000",
    ),
    (
        "product",
        "Carrier 1.5HP window-type inverter aircon, under ₱28,000",
        "Carrier aircon, window type, inverter, 1.5 HP. Yung ₱28k pataas, hindi ko na afford.",
    ),
]

TWO_ASKS = [
    ("product", "Rice cooker 1.8L, under ₱2,000, cash ko na lang iaabot sa rider", "Rice cooker 1.8L, under ₱2,000"),
    (
        "product",
        "Electric kettle 1.7L, under ₱900, dapat sagot ng seller ang shipping",
        "Electric kettle 1.7L, under ₱900, ako na ang sasagot sa shipping",
    ),
    ("product", "Nivea body lotion 400ml, Nivea flagship shop only", "Nivea body lotion 400ml, any shop"),
    (
        "product",
        "leather crossbody bag para kay misis, ayaw niya ng itim, below ₱1,500",
        "leather crossbody bag para kay misis, gusto niya ng itim, below ₱1,500",
    ),
    ("product", "umbrella, automatic, ayaw ni misis ng pink, under ₱400", "umbrella, automatic, pink, under ₱400"),
    ("product", "Phone tripod 1.7m, black, under three fifty.", "Phone tripod 1.7m, black, under three ninety."),
    (
        "product",
        "75% mechanical keyboard, hot-swappable, ₱3,000 and up is already too much",
        "75% mechanical keyboard, hot-swappable, ₱3,000 and up only, I want a premium one",
    ),
    (
        "product",
        "Perfume gift set for her, 100ml EDP, under ₱2,500",
        "Perfume gift set for him, 100ml EDP, under ₱2,500",
    ),
    ("product", "Sony wireless headphones, over-ear, black", "Sony wireless headphones, on-ear, black"),
    # Return shipping is no shipping; who installs; cash to the rider refused; an amount and up that is fine.
    (
        "product",
        "Philips air fryer, black, the seller covers shipping",
        "Philips air fryer, black, the seller covers return shipping",
    ),
    (
        "product",
        "Carrier window aircon 1HP, below ₱25k, sila na ang magkakabit",
        "Carrier window aircon 1HP, below ₱25k, ako na ang magkakabit",
    ),
    (
        "product",
        "Electric kettle 1.7L, below ₱1,000, cash sa rider",
        "Electric kettle 1.7L, below ₱1,000, bayad ko na via GCash, hindi cash sa rider",
    ),
    (
        "product",
        "Gaming chair with footrest, ₱8k pataas okay lang",
        "Gaming chair with footrest, ₱8k pataas hindi ko na kaya",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_service_said_by_what_it_means_is_that_service(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_the_service_or_its_absence_is_still_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


def test_every_service_phrase_holds_a_key_of_the_cheap_scan():
    # mark_services looks for its phrases only where the one-pass key scan finds one of their words.
    from arena.problems.asks import _SERVICE_KEY, _SERVICE_LOOKUP

    assert [phrase for phrase, _ in _SERVICE_LOOKUP if not _SERVICE_KEY.search(phrase)] == []
