"""A riddle's clue may describe its answer in colours and materials ("our national flower, the small
white fragrant one", "the metal whose symbol is Ag"): those words say the fact, which the clue rule
compares, not the colour or material of the thing bought. A rewording that describes the answer
otherwise (or names it) is the same ask. A colour or material said of the thing bought ("a white mug
printed with ...") is still a constraint the other side lacks, and a Taglish or Chavacano riddle,
whose purchase is read less surely ("mug negro", "puting mug"), keeps the old rule.
Hand-written for the nineteenth session (the missed pairs' causes on the development pools showed
the class: colour or material / none between riddles); none of these sentences is from a pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

ONE_ASK = [
    (
        "Buy a keychain shaped like our national flower, the small white fragrant one.",
        "I'd like a keychain in the shape of the Philippines' national flower, the sampaguita.",
    ),
    (
        "Find a jigsaw puzzle, 1000 pieces, of the white marble tomb Shah Jahan had built in Agra.",
        "I want a 1000-piece jigsaw of the mausoleum that Shah Jahan built for his wife in Agra.",
    ),
    (
        "I need a size 7 ring made of the yellow metal whose chemical symbol is Au.",
        "A size 7 ring in the metal that has the chemical symbol Au.",
    ),
    (
        "Get me a poster of the red planet, fourth from the sun, A3 size.",
        "Looking for an A3 poster of the fourth planet from the sun.",
    ),
    (
        "A bracelet of the metal with the symbol Ag on the periodic table, below ₱1,200.",
        "Bracelet made of the element whose symbol is Ag, under ₱1,200.",
    ),
]

TWO_ASKS = [
    (
        "Buy a white mug printed with the year the Berlin Wall fell.",
        "Buy a mug printed with the year the Berlin Wall fell.",
    ),
    (
        "A black cap embroidered with the number of players on a basketball team.",
        "I want a cap embroidered with how many players a basketball team has on the court.",
    ),
    (
        "Buy a wooden keychain shaped like the national bird.",
        "I'd like a keychain shaped like the Philippine eagle, our national bird.",
    ),
    (
        "Nais ko ng puting mug na may taon kung kailan bumagsak ang Berlin Wall.",
        "Nais ko ng mug na may nakasulat na taon ng pagbagsak ng Berlin Wall.",
    ),
    (
        "Quiere yo compra un mug negro con el año cuando ya cae el Berlin Wall.",
        "Tiene ba kamo mug con el año del caida del Berlin Wall?",
    ),
]


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_a_colour_or_material_of_the_clue_is_no_constraint_of_the_purchase(a, b):
    assert veto(a, b, "knowledge") is None


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_a_colour_or_material_of_the_thing_bought_is_still_one(a, b):
    assert veto(a, b, "knowledge") is not None
