"""A riddle's clue with one thing swapped for another is another fact asked (arena/problems/clues.py,
the swap): "the number of legs of a spider" / "of an ant". A thing may be a kind of the other to
WordNet (a ukulele is a guitar, a tooth a bone) and still have its own answer. A rewording reshapes the
clue, an acronym may be said out, a synonym or the purchase's terms may change: none of these is a
swap. And "T-shirt" is no name. Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto


def _conflict(a: str, b: str) -> str | None:
    return veto(a, b, "knowledge")


TWO_ASKS = [
    (
        "A black mug printed with the number of legs of a spider, under ₱200",
        "A black mug printed with the number of legs of an ant, under ₱200",
    ),
    (
        "white cap embroidered with the number of strings on a violin, below 300 pesos",
        "white cap embroidered with the number of strings on a cello, below 300 pesos",
    ),
    (
        # One a kind of the other to WordNet: still two answers.
        "tote bag printed with the number of strings on a standard guitar's neck, max ₱250",
        "tote bag printed with the number of strings on a ukulele's neck, max ₱250",
    ),
    (
        "Poster with the number of teeth in an adult mouth, COD",
        "Poster with the number of bones in an adult mouth, COD",
    ),
    (
        "A medium shirt printed with how many moons Mars has",
        "A medium shirt printed with how many moons Jupiter has",
    ),
]

ONE_ASK = [
    (
        "A cap printed with the number of players on a basketball team, under ₱350",
        "A cap printed with the number of players on a basketball squad, under ₱350",
    ),
    (
        # The purchase's terms said another way, around an unchanged clue.
        "Keychain shaped like the national bird of the Philippines, metal, cash on delivery, less than ₱150",
        "Philippine national bird keychain, metal, COD, below ₱150",
    ),
    (
        "A jersey printed with the year the Philippines first hosted the Southeast Asian Games",
        "A jersey printed with the year the Philippines first hosted the SEA Games",
    ),
    (
        "Yellow T-shirt, size M, printed with the number of stars on the Philippine flag",
        "yellow medium tee printed with how many stars the Philippine flag has",
    ),
    (
        "A pack of pencils with as many pencils as there are planets in the solar system",
        "Pencils. Quantity = the number of planets in the solar system.",
    ),
]


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_one_thing_of_the_clue_swapped_is_another_fact(a, b):
    assert _conflict(a, b) is not None


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_a_synonym_an_acronym_said_out_or_the_terms_reworded_are_the_same_fact(a, b):
    assert _conflict(a, b) is None


def test_a_letter_before_a_hyphen_is_a_shape_not_a_name():
    # "T-shirt" capitalised inside a sentence is no name the other side must state.
    assert (
        _conflict(
            "Printed T-shirt, size L, with the number of rings on the Olympic flag",
            "printed tee, large, with how many rings the Olympic flag has",
        )
        is None
    )


def test_people_said_more_or_less_precisely_are_one_a_thing_and_its_kind_are_two():
    from arena.problems.twins import _distinct_things

    # "the first man" / "the first person" on the moon: one fact (a swap needs two things).
    assert not _distinct_things("man", "person") and not _distinct_things("kid", "child")
    # A kind of another thing has its own answer: strings of a ukulele, teeth of an adult.
    assert _distinct_things("guitar", "ukulele") and _distinct_things("bone", "tooth")
    # Synonyms and words of one meaning never are.
    assert not _distinct_things("country", "nation") and not _distinct_things("movie", "film")
