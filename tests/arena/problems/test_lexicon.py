"""What two words are to each other, from WordNet: hand-written pairs a shopper's rewording or a
twin's replacement uses (issue 31), none taken from a labelled pool."""

from __future__ import annotations

import pytest

from arena.problems import lexicon
from arena.problems.clusters import cluster_problems
from arena.problems.official import parse_row

ONE_MEANING = [
    ("sneakers", "shoes"),  # a sneaker is a shoe
    ("backpack", "bag"),
    ("tv", "television"),
    ("born", "birth"),  # a verb and its noun
    ("complete", "finish"),
    ("trousers", "jeans"),
    ("founded", "established"),
    ("skillet", "pan"),
]
TWO_THINGS = [
    ("mouse", "keyboard"),
    ("basketball", "volleyball"),
    ("quilt", "sheet"),
    ("mug", "teapot"),
    ("jacket", "shorts"),
    ("apron", "towel"),
    ("light", "sound"),
    ("installation", "warranty"),
]


@pytest.mark.parametrize(("a", "b"), ONE_MEANING)
def test_a_rewording_is_one_meaning(a, b):
    assert lexicon.relation(a, b) == "same"
    assert lexicon.relation(b, a) == "same"


@pytest.mark.parametrize(("a", "b"), TWO_THINGS)
def test_a_replacement_is_two_things(a, b):
    assert lexicon.relation(a, b) == "other"


def test_a_word_wordnet_lacks_is_unknown_not_other():
    assert lexicon.relation("powerbank", "charger") == "unknown"
    assert lexicon.relation("hanap", "find") == "unknown"


def test_kinds_of_one_thing_and_measures():
    assert lexicon.kinds_of_one("light", "sound")
    assert not lexicon.kinds_of_one("record", "award")
    assert lexicon.thing("apron") and not lexicon.thing("kilometer") and not lexicon.thing("found")


def test_wares_are_nouns_first_whose_early_readings_a_shop_sells():
    # "teaspoon" is first a measure, then the spoon; "wear" and "lock" are verbs first.
    assert lexicon.ware("teaspoon") and not lexicon.thing("teaspoon")
    assert lexicon.ware("fork") and lexicon.ware("apron")
    assert not lexicon.ware("wear") and not lexicon.ware("lock") and not lexicon.ware("clean")


def test_clustering_without_wordnet_fails_loudly_with_the_install_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_WORDNET_DIR", str(tmp_path))
    lexicon._files.cache_clear()
    try:
        problem = parse_row(
            {"id": "p1", "query": "Find a red mug under 300 pesos.", "intent": "product"}, query_only=True
        )
        with pytest.raises(lexicon.LexiconMissing, match="apt-get install wordnet-base"):
            cluster_problems([problem])
    finally:
        lexicon._files.cache_clear()
