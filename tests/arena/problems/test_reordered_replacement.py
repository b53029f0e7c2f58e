"""The veto's reordered-request rule (twins._bag_conflict): a list said in another order with one word
left over on each side is another ask only when the two words are two values (names, or two things
WordNet knows as two), not what a rewording leaves over (a count with its unit, an adjective, a Tagalog
word, a word said once more). Hand-written pairs, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto


def _conflict(a: str, b: str, intent: str = "shop") -> str | None:
    return veto(a, b, intent)


TWO_ASKS = [
    (
        "One store: 6 stainless teaspoons, a bamboo cutting board, and a glass salad bowl.",
        "glass salad bowl, bamboo cutting board and 6 stainless forks, one store",
    ),
    (
        "Same shop: a Stanley tumbler, a silicone straw set and a bottle brush.",
        "bottle brush + silicone straw set + Yeti tumbler, same shop",
    ),
    (
        "From one seller: black printer ink, one ream of A4 bond paper, and a stapler.",
        "a pair of scissors, one ream of A4 bond paper and black printer ink, from one seller",
    ),
]

ONE_ASK = [
    (
        "Same seller: 3 white undershirts and 6 pairs of black socks.",
        "black socks, six pairs, and white undershirts x3 - same seller",
    ),
    (
        "For my new laptop, one shop: a sleeve, a wireless mouse and a USB hub.",
        "wireless mouse, USB hub at sleeve para sa laptop ko, iisang shop",
    ),
    (
        "Para sa aso ko, same shop: dog shampoo 500ml, a rubber chew toy, and a leash.",
        "a leash, a rubber chew toy and 500 ml dog shampoo, all from the same shop",
    ),
]


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_one_thing_replaced_in_a_reordered_list_is_another_ask(a, b):
    assert _conflict(a, b) is not None


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_a_reordered_list_with_only_rewording_left_over_is_one_ask(a, b):
    assert _conflict(a, b) is None
