"""The analyzer gives the tokens Lucene's English analyzer gives (the official index's).

The expected tokens were produced by Lucene itself (pyserini 1.0.0's default analyzer, in
benchmarks/search_fidelity.py's --install environment) and committed; no JVM runs here.
"""

from __future__ import annotations

import json

import pytest

from arena.shop import lucene_bm25
from arena.shop.lucene_analysis import analyze, words
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "support" / "fixtures" / "lucene_english_tokens.json"


def lucene_cases() -> list[dict]:
    return json.loads(FIXTURE.read_text())


def test_every_shipped_text_analyzes_as_lucene_does():
    cases = lucene_cases()
    assert len(cases) > 150
    wrong = [(c["text"], analyze(c["text"]), c["tokens"]) for c in cases if analyze(c["text"]) != c["tokens"]]
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # Porter, not Snowball's English stemmer (which gives grey, universal, 2pcs, buy).
        ("grey universal 2pcs buy", ["grei", "univers", "2pc", "bui"]),
        # Martin Porter's own departures, which Lucene keeps: -bli -> -ble, -logi -> -log.
        ("possibly anthropology", ["possibl", "anthropolog"]),
        # One- and two-letter words are never stemmed ("us" stays, Snowball porter gives "u").
        ("us", ["us"]),
        # UAX#29 keeps these whole; the possessive goes, in any case and with a curly quote.
        ("int:xl 3.5mm i'm 2.4GHz MEN'S women’s", ["int:xl", "3.5mm", "i'm", "2.4ghz", "men", "women"]),
        ("the it's and", []),  # stop words, after the possessive filter
        ("RTX-4090 foo_bar", ["rtx", "4090", "foo_bar"]),
    ],
)
def test_the_cases_that_tell_lucene_from_the_old_analyzer(text, tokens):
    assert analyze(text) == tokens


def test_long_tokens_are_cut_as_standard_tokenizer_cuts_them():
    assert words("a" * 600) == ["a" * 255, "a" * 255, "a" * 90]


def test_one_byte_length_norms_are_lucenes():
    # Exact below 40, then 4 significant bits: 40 and 41 share a norm, 42 starts the next.
    assert [lucene_bm25.norm_to_length(lucene_bm25.length_to_norm(n)) for n in (0, 23, 39, 41, 43, 44)] == [
        0, 23, 39, 40, 42, 44,
    ]  # fmt: skip
    assert lucene_bm25.length_to_norm(2**31 - 1) == 255
    lengths = list(range(0, 5000, 7))
    norms = [lucene_bm25.length_to_norm(n) for n in lengths]
    assert norms == sorted(norms)  # monotonic
    assert list(lucene_bm25.norms(lengths)) == norms
