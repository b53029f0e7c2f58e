"""Small talk beside a request is context, whatever language it is said in; a request fragment is not.

Written before the rule that must pass them (issue 31, blind pool 4's chit-chat class at recall 0.556):
the sentences are ones shoppers write, English and Taglish, none taken from a labelled pool.
"""

from __future__ import annotations

import pytest

from arena.problems.asks import split_request

SMALL_TALK = [
    "Grabe ang init ngayon haha.",
    "Salamat po!",
    "Good morning po!",
    "Hello there!",
    "Thanks so much, you're the best.",
    "Wish me luck!",
    "Sobrang excited na ako!",
    "You're a lifesaver.",
    "Ang dami ng kalat sa bahay namin.",
    "Trying something new this year, haha.",
    "Hi! Hope your day is going well.",
    "Excited na kami sa bakasyon!",
]

FRAGMENTS = [
    "Stainless steel.",
    "Green, please.",
    "Waterproof too.",
    "Size M.",
    "Free shipping.",
    "Must be from the same shop.",
    "Below ₱500.",
    "Hanap ako ng electric fan.",
    "Kailangan ko ng rice cooker.",
    "Rice cooker ang bibilhin ko.",
    "Cotton lang.",
    "Wireless.",
    "For my dad.",
]

REQUEST = "I need a wall-mounted 16-inch fan with remote control, under ₱1,800."


@pytest.mark.parametrize("talk", SMALL_TALK)
def test_small_talk_beside_a_request_is_context(talk):
    request, _ = split_request(f"{talk} {REQUEST}")
    assert request == (REQUEST,), request


@pytest.mark.parametrize("talk", SMALL_TALK)
def test_small_talk_after_a_request_is_context(talk):
    request, _ = split_request(f"{REQUEST} {talk}")
    assert request == (REQUEST,), request


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_a_request_fragment_is_never_context(fragment):
    request, _ = split_request(f"Looking for a rice cooker. {fragment}")
    assert fragment in request, request


def test_a_story_clause_before_so_is_context():
    request, _ = split_request("My cat keeps destroying the sofa so please show me a cat scratching post, 80cm tall.")
    assert request == ("please show me a cat scratching post, 80cm tall.",), request


def test_a_lone_sentence_is_kept_whatever_it_reads_like():
    assert split_request("Salamat po!")[0] == ("Salamat po!",)


@pytest.mark.parametrize("talk", ["Merry Christmas in advance!", "Happy holidays po!", "Congrats to me haha."])
def test_season_greetings_are_context(talk):
    assert split_request(f"{REQUEST} {talk}")[0] == (REQUEST,)
