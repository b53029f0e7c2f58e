"""Tagalog numbers as Taglish requests write prices and counts (arena/problems/tagalog.py, ``numerals``),
and what the veto makes of them. Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from arena.problems.tagalog import numerals
from tests.support.veto_cases import veto


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("below siyam na raang piso", "below 900 pesos"),
        ("hanggang walong daang piso lang", "hanggang 800 pesos lang"),
        ("mas mababa sa apat na raan at limampung piso", "mas mababa sa 450 pesos"),
        ("isang libo't dalawang daan", "1200"),
        ("sanlibo't limang daan", "1500"),
        ("dalawang libong piso", "2000 pesos"),
        ("dalawampu't limang piraso", "25 pieces"),
        ("labing-dalawang kandila", "12 kandila"),
        ("tatlong pack na medyas", "3 pack na medyas"),
        # "one shop" is no count, in either language; an English word that is a Tagalog numeral is
        # read as one only in a Tagalog sentence.
        ("isang shop lang po", "isang shop lang po"),
        ("lima beans 1 kg", "lima beans 1 kg"),
        ("kailangan ko ng lima na tuwalya", "kailangan ko ng 5 na tuwalya"),
    ],
)
def test_tagalog_numbers_read_as_digits(text, read):
    assert numerals(text) == read


def _conflict(a: str, b: str, intent: str = "product") -> str | None:
    return veto(a, b, intent)


def test_a_price_said_in_tagalog_is_the_price_in_digits():
    assert (
        _conflict("Rice cooker, 1.8L, below ₱1,500", "rice cooker na 1.8 liters, below sanlibo't limang daang piso")
        is None
    )


def test_another_price_said_in_tagalog_is_another_ask():
    assert (
        _conflict("Rice cooker, 1.8L, below ₱1,500", "rice cooker na 1.8 liters, below dalawang libong piso")
        is not None
    )


def test_a_count_said_in_tagalog_is_the_count():
    assert (
        _conflict("Scented candles, 12 pieces, vanilla", "vanilla na scented candles, labing-dalawang piraso") is None
    )
    assert _conflict("Scented candles, 12 pieces, vanilla", "vanilla na scented candles, sampung piraso") is not None
