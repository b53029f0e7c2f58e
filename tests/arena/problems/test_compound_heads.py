"""What a request buys, read as WordNet's two-word things (arena/problems/heads.py, ``_compound``): a
"hand towel" is not a "bath towel", a "wok" is not a "frying pan", and a "blow dryer" is a "hair dryer".
Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import read_query, veto


def _conflict(a: str, b: str, intent: str = "product") -> str | None:
    return veto(a, b, intent)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Cotton bath towel, white, under ₱300", "Cotton hand towel, white, under ₱300"),
        (
            "Stainless steel saucepan with lid, 18 cm, below ₱900",
            "Stainless steel frying pan with lid, 18 cm, below ₱900",
        ),
        (
            "A cast iron wok for a gas stove, 32 cm, under ₱1,500",
            "A cast iron frying pan for a gas stove, 32 cm, under ₱1,500",
        ),
    ],
)
def test_two_things_named_by_compounds_are_two_asks(a, b):
    assert _conflict(a, b) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Wooden chopping board, large, under ₱500", "large wooden cutting board below ₱500"),
        ("Blow dryer 1800W under ₱1,000", "1800 watt hair dryer, below 1,000 pesos"),
        ("Cotton bath towel, white, under ₱300", "White towel for the bath, cotton, below 300 pesos"),
    ],
)
def test_one_thing_named_by_a_compound_or_its_synonym_is_one_ask(a, b):
    assert _conflict(a, b) is None


def test_a_thing_whose_name_ends_like_an_adjective_is_still_bought():
    # "cable" and "table" end in "-able" as "rechargeable" does; WordNet reads them first as things.
    heads = read_query("One shop: an HDMI cable, a USB hub and a laptop stand.", "shop").whole.heads
    assert heads == ("cable", "hub", "stand")
    assert _conflict("Foldable study table, white, under ₱1,500", "Foldable study chair, white, under ₱1,500")
    assert _conflict("USB rechargeable desk fan under ₱600", "desk fan, rechargeable via USB, below 600 pesos") is None
