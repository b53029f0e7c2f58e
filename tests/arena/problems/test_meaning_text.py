"""What the meaning vector reads (twins._meaning_text): the things asked for, wherever the request
names them, without the vocabulary every voucher request shares or Tagalog's frame words. Hand-written,
none from a labelled pool."""

from __future__ import annotations

import pytest

from arena.problems.meaning import static_embedder
from arena.problems.official import parse_row
from arena.problems.twins import read_request


def _text(query: str, intent: str) -> str:
    return read_request(parse_row({"id": "p", "query": query, "intent": intent}, query_only=True)).text


def _cosine(a: str, b: str, intent: str) -> float:
    va, vb = static_embedder(128).embed([_text(a, intent), _text(b, intent)])
    return float(va @ vb)


def test_a_product_named_in_the_voucher_sentence_is_read():
    text = _text(
        "Nissin cup noodles from one store, voucher less forty pesos for orders ₱400 up, ₱500 lang budget ko.",
        "voucher",
    )
    assert {"nissin", "noodle"} <= set(text.split())


@pytest.mark.parametrize(
    "query",
    [
        "₱40 off min ₱400, budget ₱500, same shop, Nissin cup noodles.",
        "Nissin cup noodles, one shop; voucher: 10% discount, max ₱40, minimum spend ₱400; total budget ₱500.",
    ],
)
def test_a_vouchers_terms_are_no_part_of_the_meaning(query):
    words = set(_text(query, "voucher").split())
    assert words and words.isdisjoint({"voucher", "off", "percent", "discount", "min", "minimum", "budget", "max"})


def test_one_voucher_ask_said_two_ways_reads_alike():
    a = "₱40 off min ₱400, budget ₱500, same shop, Nissin cup noodles."
    b = "Nissin cup noodles from one store, voucher less forty pesos for orders ₱400 up, ₱500 lang budget ko."
    assert _cosine(a, b, "voucher") >= 0.65


def test_a_cap_bought_is_not_a_vouchers_cap():
    assert "cap" in _text("A black baseball cap with a ₱50 off voucher, min ₱300, budget ₱400.", "voucher").split()


def test_tagalog_frame_words_are_no_part_of_the_meaning():
    words = set(
        _text("meron ba kayong bluetooth speaker na kulay itim sana, paano ko magagamit yung COD", "product").split()
    )
    assert {"bluetooth", "speaker", "black"} <= words
    assert words.isdisjoint({"kayong", "kulay", "sana", "paano", "magagamit"})
