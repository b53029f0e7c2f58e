"""Two kinds of one ware are two products where the shopping synonyms keep them in two groups, whatever
WordNet calls them: a backpack is a bag to WordNet but not what a shopper asking for a messenger bag
wants; earphones and headphones share a WordNet synset. One word said another way ("sneakers" /
"shoes", "sofa" / "couch", "ANC" / "noise-cancelling") stays one ask. Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

TWO_ASKS = [
    (
        "product",
        "grey waterproof laptop backpack, fits 15.6 inch, under ₱1,500",
        "grey waterproof laptop messenger bag, fits 15.6 inch, under ₱1,500",
    ),
    ("product", "black canvas backpack for school, below ₱900", "black canvas sling bag for school, below ₱900"),
    (
        "product",
        "JBL wireless earphones, black, with mic, under ₱3,000",
        "JBL wireless headphones, black, with mic, under ₱3,000",
    ),
    ("product", "Razer gaming headset, wired, under ₱4,000", "Razer gaming earphones, wired, under ₱4,000"),
]

ONE_ASK = [
    (
        "product",
        "Soundcore earbuds, white, with ANC, under ₱1,500",
        "Soundcore earbuds, white, noise-cancelling, under ₱1,500",
    ),
    ("product", "grey fabric sofa, 3-seater, below ₱15,000", "3-seater grey fabric couch, below ₱15,000"),
    ("product", "Nike running shoes, men's size 9, under ₱5,000", "men's Nike running sneakers, size 9, under ₱5,000"),
]


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_two_kinds_of_one_ware_are_two_asks(intent, a, b):
    assert veto(a, b, intent) is not None


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_packing_and_synonyms_are_one_ask(intent, a, b):
    assert veto(a, b, intent) is None
