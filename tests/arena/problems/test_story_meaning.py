"""A request whose thing bought is named only in the story beside it ("Our rice cooker broke this
morning. Please find a 1.8 liter one below ₱2,000.") means that thing: its meaning vector reads the
story's words, so it joins its plain rewording, and a request for another thing on the same values
stays apart. A shop list keeps its items' words alone (a story beside a list pulled two lists
together). Hand-written for the nineteenth session (the missed pairs' causes on the development pools
showed the class: "no candidate" beside a story); none of these sentences is from a pool."""

from __future__ import annotations

import pytest

from arena.problems.clusters import cluster_problems
from arena.problems.official import parse_row
from tests.support.veto_cases import read_query

ROWS = [
    ("product", "Our rice cooker broke this morning. Please find a 1.8 liter one below ₱2,000."),
    ("product", "1.8L rice cooker under ₱2,000."),
    ("product", "1.8L electric kettle under ₱2,000."),
    ("product", "My son outgrew his school shoes again. Black, size 5, under ₱900, please."),
    ("product", "Black school shoes for kids, size 5, below ₱900."),
    ("product", "Black school bag for kids, size 5, below ₱900."),
    (
        "voucher",
        "My wife has wanted a stand mixer for ages. I have ₱300 off when I spend ₱3,000, and can pay up to ₱5,000.",
    ),
    ("voucher", "Stand mixer, ₱300 off voucher on a ₱3,000 minimum, budget ₱5,000."),
    ("voucher", "Hand blender, ₱300 off voucher on a ₱3,000 minimum, budget ₱5,000."),
]


def test_a_request_named_in_its_story_joins_its_rewording_and_not_another_thing():
    problems = [parse_row({"id": f"s{k}", "intent": i, "query": q}, query_only=True) for k, (i, q) in enumerate(ROWS)]
    clustering = cluster_problems(problems)
    groups = sorted(sorted(m) for m in clustering.members().values())
    assert groups == [["s0", "s1"], ["s2"], ["s3", "s4"], ["s5"], ["s6", "s7"], ["s8"]]


@pytest.mark.parametrize(
    ("intent", "query", "named"), [(i, q, "cooker") for i, q in ROWS[:1]] + [(ROWS[6][0], ROWS[6][1], "mixer")]
)
def test_the_meaning_text_reads_the_story_that_names_the_thing(intent, query, named):
    assert named in read_query(query, intent).text.split()


def test_a_request_that_names_its_thing_reads_its_own_words_only():
    read = read_query("My phone fell in the sink yesterday. I need a waterproof phone case under ₱400.", "product")
    assert "sink" not in read.text.split()  # the request names the case: the story's sink is not read
    listed = read_query("We just moved in! From one shop: a broom, a dustpan and a mop.", "shop")
    assert "move" not in listed.text.split()


def test_a_question_asked_back_leaves_the_ask_to_the_sentence_before_it():
    """Added in the twentieth session: "which one is that?" was read as the whole request."""
    asked = read_query(
        "my daughter wants a poster of the tallest mountain in the world. what is it called?", "knowledge"
    )
    assert {"poster", "mountain"} <= set(asked.text.split())
    plain = read_query("a poster of the world's tallest mountain for my daughter", "knowledge")
    river = read_query("my daughter wants a poster of the longest river in the world. what is it called?", "knowledge")
    problems = [
        parse_row({"id": f"q{k}", "intent": "knowledge", "query": r}, query_only=True)
        for k, r in enumerate(
            [
                "my daughter wants a poster of the tallest mountain in the world. what is it called?",
                "a poster of the world's tallest mountain for my daughter",
                "my daughter wants a poster of the longest river in the world. what is it called?",
            ]
        )
    ]
    groups = sorted(sorted(m) for m in cluster_problems(problems).members().values())
    assert groups == [["q0", "q1"], ["q2"]], (plain.text, river.text)


@pytest.mark.parametrize(
    "query",
    [
        "We adopted a kitten last week. Now I need a covered litter box under ₱900.",
        "I still need a covered litter box, under ₱900.",
        "We don't have a covered litter box yet. Under ₱900 please.",
        "Already tried two shops. Covered litter box, below ₱900.",
    ],
)
def test_a_story_time_word_is_no_part_of_what_is_asked(query):
    """Added in the twentieth session: "Now I need a filter for it" read as "now filter"."""
    words = read_query(query, "product").text.split()
    assert "litter" in words and not {"now", "still", "yet", "already"} & set(words)
