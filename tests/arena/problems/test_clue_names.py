"""A riddle's clue names (arena/problems/clues.py): a size letter is no name, a name is said by the
form derived from it ("Spain" / "the Spanish"), the shop's own country is said as "our" ("our flag" / "the Philippine flag"), and a name replaced by
another is still another ask.
Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto


def _conflict(a: str, b: str) -> str | None:
    return veto(a, b, "knowledge")


ONE_ASK = [
    (
        "A cap, size L, embroidered with the number of rings on the Olympic flag.",
        "L-size cap embroidered with how many rings the Olympic flag has",
    ),
    (
        "Shirt printed with the number of planets in the solar system, size M, white",
        "white tshirt, medium, print the number of planets in our solar system",
    ),
    (
        "A mug with the year Spain sold the Philippines to America.",
        "Mug printed with the year the Spanish sold the Philippines to the Americans.",
    ),
    # the shop's own country said as "our" (sixteenth session)
    (
        "How many stars are on the Philippine flag? I'd like a jersey with that number, size M.",
        "Jersey, size M, printed with the number of stars on our flag.",
    ),
    (
        "Which bird is the national bird of the Philippines? I want a mug printed with it, under ₱300.",
        "A mug printed with our national bird, under ₱300.",
    ),
    (
        "How many rays does the sun on the PH flag have? A tumbler with that number, 20 oz.",
        "20 oz tumbler printed with the number of rays of the sun on our flag.",
    ),
    (
        "A cap embroidered with the name of the first president of the Philippines.",
        "Cap with our first president's name embroidered.",
    ),
    (
        "Shirt printed with the name of our country's longest river, size L",
        "Size L shirt printed with the name of the longest river in the Philippines",
    ),
    # another name of one country
    (
        "Which country gave the Statue of Liberty to the United States? A cookbook of its cuisine, under ₱900.",
        "Cookbook, below ₱900, of the cuisine of the country that gave America the Statue of Liberty.",
    ),
]

TWO_ASKS = [
    (
        "A flag of the country that colonized Indonesia.",
        "A flag of the country that colonized Vietnam.",
    ),
    (
        "A hoodie, size M, printed with the year the Berlin Wall fell.",
        "A hoodie, size M, printed with the year the Titanic sank.",
    ),
    (
        "A mug printed with our national bird, under ₱300.",
        "A mug printed with the national bird of Indonesia, under ₱300.",
    ),
    (
        "How many stars are on the Philippine flag? A jersey with that number, size M.",
        "How many stars are on the flag of Vietnam? A jersey with that number, size M.",
    ),
    (
        "A phone case printed with the number of stars on our flag.",
        "A phone case printed with the number of stars on the US flag.",
    ),
]


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_a_reworded_clue_is_one_ask(a, b):
    assert _conflict(a, b) is None


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_a_replaced_name_is_another_ask(a, b):
    assert _conflict(a, b) is not None
