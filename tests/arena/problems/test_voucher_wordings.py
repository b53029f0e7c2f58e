"""Voucher requests whose terms are copied number for number while the rest is said another way, money
off said without the word "voucher", a request and its voucher in one sentence ("... using a ₱150 off
voucher"), a brand that is also an English word, a pouch that is no bag, and pronouns that buy nothing.
Hand-written, none from a labelled pool; each twin beside its merge is still kept apart."""

from __future__ import annotations

import pytest

from arena.problems.clusters import cluster_problems
from arena.problems.official import parse_row
from tests.support.veto_cases import read_query, veto


def _clusters(*queries: tuple[str, str]) -> list[str]:
    problems = [
        parse_row({"id": f"q{k}", "query": query, "intent": intent}, query_only=True)
        for k, (intent, query) in enumerate(queries)
    ]
    of = cluster_problems(problems).cluster_of
    return [of[p.id] for p in problems]


KITCHEN = "Kitchenware: ₱250 off min ₱2,000, budget ₱2,600."
KITCHEN_TOLD = (
    "We just moved and the new kitchen is bare, so here goes: the coupon knocks ₱250 off once the cart is "
    "at ₱2k, and I won't go past 2,600 pesos on kitchenware."
)


def test_voucher_terms_copied_number_for_number_join_however_the_rest_is_told():
    # The wordings share few words (their meaning vectors are far apart); the terms are the same four numbers.
    first, second = _clusters(("voucher", KITCHEN), ("voucher", KITCHEN_TOLD))
    assert first == second


def test_the_product_said_only_in_a_story_joins_on_the_terms():
    # The request's sentences say "voucher" and numbers; the blender is in the story ("I have no blender").
    told, plain = _clusters(
        (
            "voucher",
            "Smoothie season na ko this summer, kaso wala koy blender. Naa koy voucher ₱100 off basta ₱1,000 "
            "minimum spend, and budget nako kay 1.5k max.",
        ),
        ("voucher", "Blender, ₱1,500 max budget, voucher ₱100 off min ₱1k"),
    )
    assert told == plain


def test_terms_copied_for_a_thing_the_other_never_names_stay_apart():
    shoes, jeans = _clusters(
        ("voucher", "10% off voucher. Max ₱100 discount. Budget 1,000. Shoes."),
        ("voucher", "10% off capped at ₱100, budget ₱1,000, women's mom jeans"),
    )
    assert shoes != jeans


def test_the_same_terms_for_another_product_stay_apart():
    kitchen, bedding = _clusters(("voucher", KITCHEN), ("voucher", "Bedding: ₱250 off min ₱2,000, budget ₱2,600."))
    assert kitchen != bedding


ONE_ASK = [
    (
        "voucher",
        "Fifty pesos off once the cart hits six hundred. Eight hundred pesos total. A yoga mat.",
        "Yoga mat, voucher ₱50 off with a ₱600 minimum, budget ₱800.",
    ),
    (
        "voucher",
        "I have a voucher. It's 150 off. Minimum spend is 1,200. I want wireless earbuds. 30-hour battery. "
        "Budget is 2,000.",
        "Buy wireless earbuds with a 30-hour battery using a ₱150 off voucher (min spend ₱1,200); budget ₱2,000.",
    ),
    (
        "voucher",
        "Rice cooker na Hanabishi sana, 1.8 liters, pang-karinderya. May voucher ako: ₱100 off basta ₱1,000 "
        "pataas. Budget ₱1,500.",
        "Hanabishi rice cooker 1.8L, ₱100 off voucher with ₱1,000 min spend, budget ₱1,500",
    ),
    (
        "voucher",
        "Free-shipping voucher (₱250 minimum), ₱450 budget, buying a phone tripod.",
        "Phone tripod, free shipping voucher with min ₱250, budget ₱450.",
    ),
    # The budget in the request's sentence on one side, in the voucher's on the other.
    (
        "voucher",
        "Electric kettle, budget ₱1,500, voucher 10% off capped at ₱120.",
        "electric kettle, up to 1.5k, voucher 10% off max 120",
    ),
]

TWO_ASKS = [
    (
        "voucher",
        "Buy wireless earbuds with a 30-hour battery using a ₱150 off voucher (min spend ₱1,200); budget ₱2,000.",
        "Buy wireless earbuds with a 20-hour battery using a ₱150 off voucher (min spend ₱1,200); budget ₱2,000.",
    ),
    (
        "voucher",
        "Fifty pesos off once the cart hits six hundred. Eight hundred pesos total. A yoga mat.",
        "Fifty pesos off once the cart hits seven hundred. Eight hundred pesos total. A yoga mat.",
    ),
    # "using" opens the voucher's part only before the voucher: here it is the request's.
    (
        "voucher",
        "Buy a bike light for using on my scooter, with a ₱40 off voucher, min spend ₱400, budget ₱500",
        "Buy a bike light for using on my skateboard, with a ₱40 off voucher, min spend ₱400, budget ₱500",
    ),
    # Money off the shipping is a shipping voucher; the same numbers in other roles are another voucher.
    (
        "voucher",
        "Bath towel, budget ₱600, voucher ₱40 off shipping, min spend ₱400",
        "Bath towel, budget ₱600, voucher ₱40 off, min spend ₱400",
    ),
    (
        "voucher",
        "15% off voucher capped at ₱300, min spend ₱1,000, for a rice cooker, budget ₱2,500",
        "15% off voucher capped at ₱1,000, min spend ₱300, for a rice cooker, budget ₱2,500",
    ),
    (
        "voucher",
        "May ₱80 off voucher, min spend ₱800, isang tindahan lang; shampoo at conditioner, budget ₱1,000",
        "May ₱80 off voucher, min spend ₱800, kahit saang tindahan; shampoo at conditioner, budget ₱1,000",
    ),
    (
        "voucher",
        "Electric kettle, budget ₱1,500, voucher 10% off capped at ₱120.",
        "electric kettle, up to 1.8k, voucher 10% off max 120",
    ),
    # The shops the voucher holds for, said in the request's sentence, not the voucher's.
    (
        "voucher",
        "Pet supplies from the same shop with ₱70 off on min ₱700, budget ₱900.",
        "Pet supplies, fine to mix different stores, ₱70 off on ₱700 min, up to ₱900.",
    ),
    # A brand that is an English word, said first, reads as a word; the other brand as a name.
    ("product", "Shark na vacuum, 600W, under ₱5,000", "Dyson na vacuum, 600W, under ₱5,000"),
    ("product", "Dove na body wash 500ml below ₱300", "Palmolive na body wash 500ml below ₱300"),
    # A pouch is a small bag, not another word for one (nor for a backpack).
    ("product", "gray toiletry pouch for travel under ₱250", "gray backpack for travel under ₱250"),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_one_ask_said_two_ways(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_one_term_changed_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


def test_money_off_without_a_voucher_word_is_the_voucher_not_a_price():
    told = read_query(
        "Fifty pesos off once the cart hits six hundred. Eight hundred pesos total. A yoga mat.", "voucher"
    )
    assert told.voucher is not None and {50.0, 600.0} <= set(told.voucher[3])
    assert not {50.0, 600.0} & {value for _, value, _ in told.whole.prices}  # neither is the mat's price


def test_a_request_before_using_its_voucher_keeps_its_own_numbers():
    request = read_query("Buy a gaming headset with 7.1 surround using a ₱200 off voucher; budget ₱2,500.", "voucher")
    assert request.voucher is not None and 7.1 not in request.voucher[3]
    assert "headphone" in request.whole.words or "headset" in request.whole.words


def test_a_pronoun_buys_nothing():
    a = "From one shop: the tripod itself under ₱700, a phone clamp under ₱150 and a Bluetooth remote under ₱200."
    b = "Same shop: a Bluetooth remote (max ₱200), a phone clamp (max ₱150) and a tripod (max ₱700)."
    assert veto(a, b, "shop") is None
