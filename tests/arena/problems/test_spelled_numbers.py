"""Numbers written in words. A price range written in words ("between five hundred and one thousand two hundred pesos"): the
"and" of "between ... and ..." parts two amounts; text2num alone glues them into one ("501200").
British "and" inside one amount ("one hundred and fifty") stays one. A riddle's number in words is
its number in digits ("entry twenty-five" / "number 25"). Hand-written for the sixteenth
session (pool 67 showed the class; none of these sentences is from a pool)."""

from __future__ import annotations

import pytest

from arena.problems.asks import _digits
from tests.support.veto_cases import veto

READ = [
    ("priced between five hundred and one thousand two hundred pesos", "priced between 500 and 1200 pesos"),
    ("between one hundred fifty and four hundred pesos", "between 150 and 400 pesos"),
    ("between fifty and one hundred pesos", "between 50 and 100 pesos"),
    ("between eight hundred and one thousand pesos", "between 800 and 1000 pesos"),
    ("between one hundred and fifty and three hundred pesos", "between 150 and 300 pesos"),
    ("anywhere between two thousand and two thousand five hundred", "anywhere between 2000 and 2500"),
    # one amount, and a range already in digits, as before
    ("one thousand and two hundred pesos", "1200 pesos"),
    ("between ₱500 and ₱1,200", "between ₱500 and ₱1200"),
]


@pytest.mark.parametrize(("text", "read"), READ)
def test_a_range_in_words_is_two_amounts(text, read):
    assert " ".join(_digits(text).split()) == read


def test_a_range_in_words_is_the_range_in_digits():
    assert (
        veto(
            "Imarflex electric kettle, 1.7L, stainless, priced from 500 to 1,200 PHP.",
            "Stainless Imarflex electric kettle of 1.7 litres priced between five hundred and one thousand two "
            "hundred pesos.",
        )
        is None
    )
    assert (
        veto(
            "Ceramic plant pot, 8 inches, matte white, from ₱150 to ₱400.",
            "A matte white ceramic plant pot, eight inches, between one hundred fifty and four hundred pesos.",
        )
        is None
    )


def test_another_range_in_words_is_another_ask():
    assert (
        veto(
            "Ceramic plant pot, 8 inches, matte white, from ₱150 to ₱400.",
            "A matte white ceramic plant pot, eight inches, between one hundred fifty and five hundred pesos.",
        )
        is not None
    )


def _riddle(a: str, b: str) -> str | None:
    return veto(a, b, "knowledge")


def test_a_riddles_number_in_words_is_the_number():
    assert (
        _riddle(
            "A poster of the element with atomic number 26, A3 size.",
            "A3 poster of the element whose atomic number is twenty-six.",
        )
        is None
    )
    assert (
        _riddle(
            "Which Pokémon is number 133 in the National Pokédex? A plush toy of it.",
            "A plush toy of the Pokémon listed as entry one hundred thirty-three in the National Pokédex.",
        )
        is None
    )


def test_another_number_in_words_is_another_riddle():
    assert (
        _riddle(
            "A poster of the element with atomic number 26, A3 size.",
            "A3 poster of the element whose atomic number is twenty-nine.",
        )
        is not None
    )
