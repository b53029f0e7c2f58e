"""The veto's rules that read WordNet and the shopper's languages (issue 31, fifth session), each on
hand-written pairs that none of the labelled pools holds: what must stay two asks, and what is one."""

from __future__ import annotations

import pytest

from arena.problems.official import parse_row
from arena.problems.twins import conflict, read_request


def _conflict(a: str, b: str, intent: str) -> str | None:
    read = [
        read_request(parse_row({"id": f"p{k}", "query": q, "intent": intent}, query_only=True))
        for k, q in enumerate((a, b))
    ]
    return conflict(read[0], read[1])


TWO_ASKS = [
    ("shop", "Same shop: a yoga mat and a foam roller.", "Same shop: a yoga mat, a foam roller and a jump rope."),
    (
        "voucher",
        "₱150 cashback voucher, min ₱1,000, budget ₱1,500, a desk fan",
        "₱150 off voucher, min ₱1,000, budget ₱1,500, a desk fan",
    ),
    (
        "voucher",
        "₱50 off voucher, no minimum spend, budget ₱300, a phone case",
        "₱50 off voucher, min spend ₱200, budget ₱300, a phone case",
    ),
    (
        "product",
        "Wireless mouse, black, under ₱700, free shipping",
        "I need a black keyboard that's wireless, below seven hundred pesos, ships free",
    ),
    (
        "voucher",
        "Good day po. I would like to buy Acer laptops using a ₱500-off voucher on a minimum of ₱20,000; budget ₱25,000. Thank you.",
        "Good day po. I would like to buy Asus laptops using a ₱500-off voucher on a minimum of ₱20,000; budget ₱25,000. Thank you.",
    ),
    (
        "knowledge",
        "A pendant engraved with the melting point of gold in Celsius.",
        "A pendant engraved with the melting point of silver in Celsius.",
    ),
    ("product", "A refurbished DSLR camera body under ₱25,000", "A brand new DSLR camera body under ₱25,000"),
    (
        "product",
        "Split-type aircon 1.5HP with free installation, under ₱30,000",
        "1.5HP split type aircon with a 3-year warranty, below ₱30,000",
    ),
]

ONE_ASK = [
    (
        "product",
        "Hanap ako ng wireless earbuds na black, basta below ₱1,500 lang po.",
        "Looking for black wireless earbuds under ₱1,500.",
    ),
    ("shop", "Camping weekend: a tent and a lantern, same shop.", "Same shop: a lantern and a tent."),
    (
        "product",
        "Grabe ang traffic kanina haha. Anyway, a 65W GaN charger under ₱1,800 please.",
        "A 65W GaN charger under ₱1,800.",
    ),
    ("product", "Running sneakers, size 42, under ₱3,000", "Running shoes in size 42 below three thousand pesos"),
    ("product", "A 2TB external drive, under three and a half thousand pesos", "2TB external drive below ₱3,500"),
    (
        "voucher",
        "25% off voucher up to ₱200, min ₱800, budget ₱1,000, a bath towel set",
        "a quarter-off voucher (max ₱200, min ₱800), budget ₱1,000, a bath towel set",
    ),
    # Taglish: Tagalog's content words read as English, its function words frame the ask
    (
        "shop",
        "isang shop lang: kawali na non-stick, kutsilyo, at tuwalya",
        "one shop: a non-stick pan, a knife and a towel",
    ),
    ("product", "pula na payong, automatic, below ₱400", "red automatic umbrella under ₱400"),
    (
        "product",
        "Grabe ang init dito kaya kailangan ko ng electric fan na 16 inch, below 1k",
        "16 inch electric fan under ₱1,000",
    ),
    # a list's label names its purpose, not a thing bought
    (
        "shop",
        "Picnic day: a cooler bag, a picnic mat and paper plates, same shop",
        "Same shop: paper plates, a picnic mat, a cooler bag",
    ),
]
TWO_ASKS_TAGLISH = [
    ("product", "pula na payong, automatic, below ₱400", "itim na payong, automatic, below ₱400"),
    ("shop", "isang shop lang: kawali at kutsilyo", "isang shop lang: kawali, kutsilyo at tuwalya"),
]


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS + TWO_ASKS_TAGLISH)
def test_two_asks_stay_apart(intent, a, b):
    assert _conflict(a, b, intent) is not None
    assert _conflict(b, a, intent) is not None


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_one_ask_reworded_has_no_conflict(intent, a, b):
    assert _conflict(a, b, intent) is None
    assert _conflict(b, a, intent) is None
