"""A riddle's clue words read for what they are: an action is no thing the clue is about, two
dictionary words joined are no name, a temperature scale is a unit, the packaging is the purchase's,
and "May" mid-sentence is the month. (A scale's sign, "°F", is left to the request's
reading, which reads it as the scale: turned into the word in the clue too, it cost the development
pools two found pairs.)

Written by hand before the change (none taken from a labelled pool): each "one fact" pair was kept
apart by the clue-names rule (a name on one side against a "thing" on the other that was a verb, a
pack or a unit); each twin must stay apart."""

from __future__ import annotations

import pytest

from arena.problems import lexicon
from arena.problems.model import Intent, Problem
from arena.problems.twins import conflict, read_request


def _riddle(query: str):
    return read_request(Problem(id=query[:40], query=query, intent=Intent.knowledge, difficulty="easy"))


@pytest.mark.parametrize(
    ("word", "acted"),
    [("landed", True), ("fell", True), ("sank", True), ("crewed", True), ("won", True), ("men", False),
     ("stripes", False), ("flag", False), ("tower", False)],
)  # fmt: skip
def test_an_inflected_verb_is_told_from_an_inflected_noun(word: str, acted: bool) -> None:
    assert lexicon.verb_form(word) is acted


@pytest.mark.parametrize(
    ("word", "joined"),
    [("birthstone", True), ("keychain", True), ("crewneck", True), ("armstrong", False), ("xqzvbrt", False)],
)
def test_two_dictionary_words_written_as_one(word: str, joined: bool) -> None:
    assert lexicon.closed_compound(word) is joined


def test_a_joined_word_in_a_lower_case_riddle_is_no_name() -> None:
    clue = _riddle("silver ring with the birthstone for people born in june").clue
    assert clue is not None
    assert ("birthstone",) not in clue.names
    assert "birthstone" in clue.words


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a name against a description whose only "thing" is a verb ("crewed", "landed")
        ("A keychain with the year Neil Armstrong set foot on the Moon.",
         "A keychain with the year the first crewed lunar landing happened."),
        # the pack is the purchase's, not what the clue is about
        ("A pack of chocolates from the country shaped like a boot.",
         "Chocolates from that boot-shaped country in Europe."),
        # a scale's sign and its name
        ("A tumbler printed with the boiling point of water in °F.",
         "A tumbler printed with the boiling point of water in Fahrenheit."),
        ("A tumbler printed with the freezing point of water in degrees C.",
         "A tumbler printed with the freezing point of water in Celsius."),
    ],
)  # fmt: skip
def test_one_fact_said_two_ways_is_no_conflict(a: str, b: str) -> None:
    assert conflict(_riddle(a), _riddle(b)) is None


@pytest.mark.parametrize(
    ("a", "b", "rule"),
    [
        ("A tumbler printed with the boiling point of water in Fahrenheit.",
         "A tumbler printed with the boiling point of water in Celsius.", "scale"),
        ("A tumbler printed with the boiling point of water in °F.",
         "A tumbler printed with the boiling point of water in degrees C.", ""),
        ("Poster of the year the Berlin Wall fell.", "Poster of the year the Soviet Union collapsed.", "clue names"),
        ("Silver pendant with the birthstone of people born in April.",
         "Silver pendant with the birthstone of people born in May.", "clue names"),
        ("Silver pendant with the birthstone of people born in April.", "Silver pendant with the May birthstone.",
         "clue names"),
    ],
)  # fmt: skip
def test_twins_stay_apart(a: str, b: str, rule: str) -> None:
    why = conflict(_riddle(a), _riddle(b))
    assert why is not None and why.startswith(rule), why


def test_may_opening_a_question_asks_no_month() -> None:
    clue = _riddle("May I get a silver pendant with the April birthstone?").clue
    assert clue is not None
    assert ("may",) not in clue.names and ("april",) in clue.names
