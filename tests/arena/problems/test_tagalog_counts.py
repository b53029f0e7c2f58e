"""Tagalog words for what riddles count and what small businesses buy (arena/problems/tagalog.py's
glossary): a riddle asked in Taglish is the English riddle, a stall's supplies named in Tagalog are the
same supplies, and one of them swapped for another is still another ask. Hand-written, none from a
labelled pool."""

from __future__ import annotations

import pytest

from arena.problems.clusters import cluster_problems
from arena.problems.official import parse_row
from tests.support.veto_cases import veto


def _joined(a: str, b: str, intent: str) -> bool:
    rows = [parse_row({"id": f"t{k}", "query": q, "intent": intent}, query_only=True) for k, q in enumerate((a, b))]
    of = cluster_problems(rows).cluster_of
    return of["t0"] == of["t1"]


ONE_ASK = [
    (
        "knowledge",
        "Mug na puti, naka-print ang bilang ng kwerdas ng gitara, below ₱200",
        "White mug printed with the number of strings on a guitar, under ₱200",
    ),
    (
        "knowledge",
        "itim na cap, burda ang bilang ng araw sa isang linggo, hanggang ₱250",
        "black cap embroidered with the number of days in a week, up to ₱250",
    ),
    (
        "knowledge",
        "Jersey na pula, size L, ang number sa likod ay ilang oras sa isang araw, below ₱500",
        "Red jersey size L with the number of hours in a day on the back, under ₱500",
    ),
    (
        "product",
        "digital na timbangan, 30kg, stainless, below ₱1,200",
        "30kg digital weighing scale, stainless, under ₱1,200",
    ),
]

TWO_ASKS = [
    (
        "product",
        "Busina para sa tricycle, 12V, below ₱600",
        "Gulong para sa tricycle, 12V, below ₱600",
    ),
    (
        "knowledge",
        "mug na naka-print ang bilang ng buto ng isang adult na tao, below ₱180",
        "mug na naka-print ang bilang ng ngipin ng isang adult na tao, below ₱180",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_request_in_tagalog_words_joins_its_english_wording(intent, a, b):
    assert veto(a, b, intent) is None
    assert _joined(a, b, intent)


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_one_tagalog_thing_swapped_for_another_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


def test_a_word_of_two_common_meanings_is_not_glossed_as_one():
    from arena.problems.tagalog import GLOSSARY

    # paa: foot or leg; letra: letter or lyrics; gulong: wheel or tire.
    assert not {"paa", "letra", "gulong"} & set(GLOSSARY)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Pa-search naman ng white mug na naka-print yung number of bones in the adult human body, below ₱350",
            "White mug printed with the number of bones in the adult human body, under ₱350",
        ),
        (
            "Iron-on patch printed with the year the Philippine flag was first raised, under ₱150",
            "Patch na iron-on, below ₱150, printed with the year the Philippine flag was first raised",
        ),
    ],
)
def test_words_joined_by_a_hyphen_open_a_riddle_without_naming_anything(a, b):
    assert veto(a, b, "knowledge") is None
