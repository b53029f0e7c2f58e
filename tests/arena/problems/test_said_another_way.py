"""One ask said another way by a shopper retyping a spec: a measure labelled on one side only ("4GB RAM,
64GB storage" / "4GB/64GB"), a count with its unit beside a bare one in a voucher task ("2 pcs" / "two"),
a Visayan word for the one the parcel is for ("my utod in Bacolod City"), Tagalog's linker "ay" ("ang
number ay ...": it held already). A measure labelled another way on both sides ("64GB RAM" / "64GB storage") is another
ask. Hand-written for the sixteenth session (the development pools showed the classes; none of these
sentences is from a pool)."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

ONE_ASK = [
    (
        "product",
        "Samsung tablet, 10 inch, 4GB RAM, 64GB storage, under ₱9,000",
        'SAMSUNG TABLET 10" 4GB/64GB, MAX ₱9,000',
    ),
    ("product", "Power bank 20000mAh capacity, 22.5W output, under ₱1,200", "20000mAh 22.5W power bank below ₱1,200"),
    (
        "voucher",
        "Two cotton tees, size L, budget ₱600, free shipping voucher min spend ₱300",
        "Client: 2 pcs cotton tees, size L. Budget ₱600. Free shipping voucher, min spend ₱300.",
    ),
    (
        "product",
        "INSULATED TUMBLER 20OZ WHITE, MAX ₱500, FOR MY BROTHER IN BACOLOD CITY",
        "Insulated tumbler, 20oz, white, under ₱500, for my utod in Bacolod City.",
    ),
    (
        "knowledge",
        "white jersey, size M, ang number ay ilang araw sa isang linggo, below ₱450",
        "Jersey po. White. Size M. Number: ilang araw meron sa isang linggo. Below 450.",
    ),
]

TWO_ASKS = [
    (
        "product",
        "Samsung tablet, 10 inch, 64GB RAM, below ₱8,000",
        "Samsung tablet, 10 inch, 64GB storage, below ₱8,000",
    ),
    (
        "voucher",
        "Two cotton tees, size L, budget ₱600, free shipping voucher min spend ₱300",
        "Client: 3 pcs cotton tees, size L. Budget ₱600. Free shipping voucher, min spend ₱300.",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_spec_retyped_is_one_ask(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_another_role_or_count_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


# A request's words said in another order with one word replaced (twins.py's bag rule).
_COMMON = "stainless steel cutlery dishwasher safe gift box twelve pieces silver".split()


def test_a_plain_word_replaced_in_a_reordered_request_keeps_only_the_pair_apart():
    from arena.problems.twins import PAIR_ONLY, _bag_conflict

    found = _bag_conflict([*_COMMON, "spoon"], ["fork", *reversed(_COMMON)])
    assert found is not None and found.startswith(PAIR_ONLY)


def test_a_name_replaced_in_a_reordered_request_binds():
    from arena.problems.twins import PAIR_ONLY, _bag_conflict

    found = _bag_conflict([*_COMMON, "tramontina"], ["zwilling", *reversed(_COMMON)])
    assert found is not None and not found.startswith(PAIR_ONLY)


def test_a_plain_feature_asked_with_with_keeps_only_the_pair_apart():
    from arena.problems.twins import PAIR_ONLY

    found = veto(
        "Ceramic coffee mug, 350 ml, white, under ₱300", "White ceramic coffee mug, 350 ml, with a lid, under ₱300"
    )
    assert found is not None and found.startswith(PAIR_ONLY) and "asks more" in found
