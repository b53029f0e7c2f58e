"""The trie-built alternations match what the plain alternations of the same words match: the gates built
with them decide the same on every query of every labelled pool and on the official tasks."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from arena.problems.patterns import alternation

DATA = Path(__file__).resolve().parents[2] / "support" / "data"


def test_a_trie_alternation_matches_what_the_plain_one_matches():
    rng = random.Random(7)
    letters = "abcn "
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(1, 6))).strip() or "a" for _ in range(300)})
    trie = re.compile(r"\b" + alternation(words) + r"\b")
    plain = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + r")\b")
    for _ in range(2000):
        text = "".join(rng.choice(letters + "xy") for _ in range(rng.randint(0, 30)))
        assert [m.span() for m in trie.finditer(text)] == [m.span() for m in plain.finditer(text)], text


def test_a_word_and_its_longer_form_both_match_the_longer_first():
    pattern = re.compile(alternation(["cien", "ciento", "mil"]) + r"\b")
    assert pattern.match("ciento cincuenta").group() == "ciento"
    assert pattern.match("cien pesos").group() == "cien"
    assert pattern.match("cientos") is None


def test_the_number_and_bound_gates_decide_as_before_on_every_pool_query():
    from arena.problems import asks, cebuano, chavacano, regional, tagalog

    # (the Tagalog tens were added in the seventeenth session: "tatlumpung onsa" had gone unread)
    literal_units = (
        "isa dalawa tatlo apat lima anim pito walo siyam sampu labin sandaan sanlibo daan raan libo "
        "dalawampu tatlumpu apatnapu limampu animnapu pitumpu walumpu siyamnapu"
    )
    number_words = {
        *cebuano.UNITS, *cebuano.TENS, *cebuano.WHOLE, *cebuano.HUNDRED, *cebuano.THOUSAND_AFTER,
        *regional.UNITS, *chavacano.UNITS, *chavacano.TENS, *chavacano.WHOLE,
    }  # fmt: skip
    number = re.compile(
        r"\b(?:" + "|".join(literal_units.split()) + r"|piso|piraso)|\b(?:" + "|".join(sorted(number_words)) + r")\b"
    )
    queries = [
        json.loads(line)[side]["query"].lower()
        for path in sorted(DATA.glob("cluster_pairs_*.jsonl"))
        for line in path.read_text().splitlines()
        for side in "ab"
    ]
    assert len(queries) > 10_000
    bound_words = "|".join(sorted({*cebuano.BOUND_CUE, *regional.BOUND_CUE, *chavacano.BOUND_CUE}))
    assert all(bool(asks._TAGALOG_NUMBER.search(q)) == bool(number.search(q)) for q in queries)
    assert sum(bool(asks._TAGALOG_NUMBER.search(q)) for q in queries) > 500
    bound = re.compile(
        r"\b(?:hanggang|hangang|mababa|bababa|baba|mura|kulang|hihigit|lalagpas|lalampas|lumagpas|lumampas|aabot|"
        r"umaabot|pababa|pataas|pinakamataas|porsyento|porsiyento|porsento|wala pang|wala pa sa|mas mababa|"
        # (the seventeenth session's "more than": "mahigit ₱1,500", "lampas sa 2k")
        r"mahigit|higit|lampas|lagpas|" + bound_words + r")\b"
    )
    assert all(bool(tagalog.BOUND_CUE.search(q)) == bool(bound.search(q)) for q in queries)
    assert sum(bool(tagalog.BOUND_CUE.search(q)) for q in queries) > 300


def test_the_price_gate_with_one_word_boundary_decides_as_the_one_with_many():
    from arena.problems.twins import _PRICEY

    before = re.compile(
        r"₱|\$|\bphp\b|\bpesos?\b|\bp ?\d|budget|\bpric|\bspend|\bcost|cheap|afford|expensive|\bpay\b|"
        r"\bmax\b|\bmin\b|\b(?:under|below|above|over)\b(?!-)|\bless than\b|\bmore than\b|\bhundred|thousand"
    )
    queries = [
        json.loads(line)[side]["query"].lower()
        for path in sorted(DATA.glob("cluster_pairs_*.jsonl"))
        for line in path.read_text().splitlines()
        for side in "ab"
    ]
    queries += ["a mini display", "paypal", "p 500", "over-the-top", "minimum", "pricey"]
    assert [bool(_PRICEY.search(q)) for q in queries] == [bool(before.search(q)) for q in queries]
