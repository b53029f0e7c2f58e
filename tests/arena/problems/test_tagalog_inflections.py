"""Tagalog verbs inflected past what the word list holds ("tinatawag", "napapatong") are Tagalog words,
not names; Tagalog superlatives and ordinals ("pinakamaliit", "ikalawang") are the riddle's adjective and
rank. Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from arena.problems import tagalog
from tests.support.veto_cases import read_query, veto


@pytest.mark.parametrize(
    ("word", "root"),
    [("tinatawag", "tawag"), ("napapatong", "patong"), ("pinakamaliit", "maliit"), ("ipinagbili", "bili")],
)
def test_an_inflected_word_reaches_its_root(word, root):
    assert root in tagalog.roots(word)


def test_an_inflected_verb_is_no_name_and_a_brand_still_is():
    request = read_query("mug na may pangalan ng lungsod na tinatawag na City of Pines, Hanabishi")
    assert "tinatawag" not in request.whole.names and "hanabishi" in request.whole.names


ONE_ASK = [
    (
        "mug na may pangalan ng lungsod na tinatawag na City of Pines",
        "mug printed with the name of the city called the City of Pines",
    ),
    ("poster ng pinakamalaking planeta sa solar system", "poster of the largest planet in the solar system"),
    ("poster ng pangalawang pinakamahabang ilog sa mundo", "poster of the second longest river in the world"),
    # An ordinal of the story is no rank of the fact.
    (
        "My daughter is in third grade and loves maps, so: a poster of the largest ocean on Earth",
        "poster of the largest ocean on Earth",
    ),
]

TWO_ASKS = [
    ("poster ng pinakamaliit na planeta sa solar system", "poster of the largest planet in the solar system"),
    ("tumbler na may pangalan ng pinakamahabang ilog", "tumbler na may pangalan ng ikalawang pinakamahabang ilog"),
    ("tumbler with the name of the longest river", "tumbler with the name of the third longest river"),
]


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_one_riddle_in_tagalog_and_english(a, b):
    assert veto(a, b, "knowledge") is None


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_another_adjective_or_rank_is_another_fact(a, b):
    assert veto(a, b, "knowledge") is not None


@pytest.mark.parametrize(
    "query",
    ["kape na ground, isang kilo, wala pang ₱400", "ground coffee 1 kilo, wag lalagpas ng four hundred pesos"],
)
def test_a_tagalog_bound_not_to_pass_is_an_upper_bound(query):
    assert read_query(query).whole.prices == (("lt", 400.0, 0.0),)


def test_another_tagalog_bound_is_another_ask():
    assert veto("ground coffee 1 kilo, wala pang ₱400", "ground coffee 1 kilo, wala pang ₱500") is not None
    assert veto("ground coffee 1 kilo, wala pang ₱400", "ground coffee 1 kilo, under ₱400") is None
