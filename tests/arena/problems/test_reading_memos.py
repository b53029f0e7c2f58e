"""A large pool's clustering empties the readers' memo tables once its requests are read (the peak that
follows is ~40 MB lower at 100k): the readings made after are the readings made before, the one-entry
tables (the dictionary's files, the compound nouns) are kept, and the freed heap is handed back."""

from __future__ import annotations

from arena.problems import clusters, heads, lexicon, twins
from arena.problems.official import parse_row
from arena.problems.twins import conflict, read_request

QUERIES = [
    ("product", "Looking for a stainless steel water bottle, 750 ml, under ₱300."),
    ("product", "Is there a 750ml bottle in stainless steel? I don't want to spend three hundred pesos or more."),
    ("shop", "From one shop: a yoga mat, a 1 liter water bottle and resistance bands."),
    ("knowledge", "Buy a mug printed with the year the Berlin Wall fell."),
    ("voucher", "Rice cooker, ₱100 off voucher on a ₱1,000 minimum, budget ₱1,500."),
]


def read_all():
    problems = [
        parse_row({"id": f"m{k}", "intent": i, "query": q}, query_only=True) for k, (i, q) in enumerate(QUERIES)
    ]
    return [read_request(p) for p in problems]


def test_the_readings_after_the_memos_are_emptied_are_the_readings_before():
    before = read_all()
    verdicts = [conflict(before[0], other) for other in before[1:]]
    assert lexicon.same_common_reading.cache_info().currsize > 0 or twins._respelt.cache_info().currsize > 0
    clusters._empty_reading_memos()
    assert twins._respelt.cache_info().currsize == 0
    assert lexicon.same_common_reading.cache_info().currsize == 0
    assert heads._detail.cache_info().currsize == 0
    assert lexicon._compounds.cache_info().currsize == 1  # the two-word nouns stay loaded
    after = read_all()
    assert after == before
    assert [conflict(after[0], other) for other in after[1:]] == verdicts
