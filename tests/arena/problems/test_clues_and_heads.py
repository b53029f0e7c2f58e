"""The veto's readings of what a request asks beyond its values (branch guard3): the fact a query-only
riddle asks (arena/problems/clues.py), what a request buys (arena/problems/heads.py), a capitalised
brand replaced and a voucher request's amounts. Cases written for these tests, not taken from a pool."""

from __future__ import annotations

import pytest

from arena.problems.official import parse_row
from arena.problems.twins import _lemma, _not_a_head, conflict, read_request


def _veto(a: str, b: str, intent: str = "product") -> str | None:
    """Why the veto keeps two query-only requests apart, or None."""
    first, second = (
        read_request(parse_row({"id": k, "query": q, "intent": intent}, query_only=True))
        for k, q in (("a", a), ("b", b))
    )
    return conflict(first, second)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a rank replaced
        (
            "a mug printed with the name of the first woman in space",
            "a mug printed with the name of the second woman in space",
        ),
        # a name replaced by something of the other's own
        ("a poster of the tallest building in Dubai", "a poster of the tallest building in the world"),
        # another kind of answer
        (
            "a cap printed with the year the Eiffel Tower opened",
            "a cap printed with the name of the Eiffel Tower's architect",
        ),
        # clues about other things, one product
        (
            "a tote bag printed with the year the Titanic sank",
            "a tote bag printed with the year the first iPhone came out",
        ),
        # another product for one clue
        ("a mug printed with the year the Berlin Wall fell", "a phone case printed with the year the Berlin Wall fell"),
    ],
)
def test_riddles_asking_another_fact_or_product_are_twins(a, b):
    assert _veto(a, b, "knowledge") is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("a poster of the tallest building in Dubai", "Poster please: Dubai's tallest building."),
        (
            "a mug printed with the name of the first woman in space",
            "Who was the first woman to go to space? I want a mug with her name on it",
        ),
        (
            "Buy a cap with the year Apollo 11 landed on the moon",
            "Which year did Apollo 11 land on the moon? Get me a cap with that year",
        ),
    ],
)
def test_reworded_riddles_are_not_twins(a, b):
    assert _veto(a, b, "knowledge") is None


def test_head_nouns_are_what_is_bought():
    heads = [
        read_request(parse_row({"id": "x", "query": q, "intent": "product"}, query_only=True)).whole.heads
        for q in ("men's black leather wallet, bifold", "Stainless steel water fountain 2.5L for cats")
    ]
    # "water fountain" is one thing WordNet names with two words (test_compound_heads.py)
    assert heads == [(_lemma("wallet"),), ("water_fountain",)]
    assert _not_a_head("black", "black") and _not_a_head("size", "size")


def test_a_product_noun_replaced_beside_shared_attributes_is_a_twin():
    assert _veto("men's black leather wallet", "black leather belt for men") is not None
    # A rewording that keeps the noun, or names it with a synonym, is not.
    assert _veto("white wireless earbuds", "earbuds, cordless, in white") is None


def test_a_shop_item_replaced_is_a_twin_and_a_reordered_list_is_not():
    source = "one shop with a yoga mat, a foam roller and resistance bands"
    assert _veto(source, "one shop with a yoga mat, a water bottle and resistance bands", "shop") is not None
    assert _veto(source, "resistance bands, a foam roller and a yoga mat from one store", "shop") is None


def test_a_capitalised_brand_replaced_is_a_twin_whatever_the_dictionary_says():
    # "carnation" is an English word (a flower): only its capital marks it as a brand.
    assert _veto("Alaska condensed milk 300ml", "condensed milk 300ml from Carnation") is not None
    # One side capitalising a word the other writes in lower case is no name replaced.
    assert _veto("a USB desk fan, white", "white usb desk fan") is None


def test_voucher_amounts_are_compared_whichever_sentence_states_them():
    a = "Budget ₱900 with ₱50 off min ₱500: a desk fan"
    assert _veto(a, "Desk fan. I can spend up to ₱1,000. Voucher: ₱50 off orders of ₱500 and up.", "voucher")
    assert _veto(a, "Desk fan. I can spend up to ₱900. Voucher: ₱50 off orders of ₱500 and up.", "voucher") is None
