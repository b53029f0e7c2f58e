"""Requests dictated to a phone (speech to text): hesitations ("uhm", "hmm") ask nothing and are no
names, and a run-on sentence that holds both the voucher and the sizes still states the sizes. A size
changed is still another ask. Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from arena.problems.asks import plain
from tests.support.veto_cases import read_query, veto


def test_hesitations_go_and_words_that_hold_them_stay():
    assert plain("Uhm. gloves hmm, ahh the ehh thing").split() == [".", "gloves", ",", "the", "thing"]
    # Not a hesitation: inside a word, hyphenated, or another word.
    assert plain("um-brella humm umbrella ahead Uhmann").split() == ["um-brella", "humm", "umbrella", "ahead", "Uhmann"]


def test_a_hesitation_is_no_name():
    assert read_query("uhm electric fan na stand type sixteen inches below fifteen hundred").whole.names == ()


ONE_ASK = [
    (
        "product",
        "uhm electric fan yung stand type sixteen inches hmm below one thousand five hundred pesos",
        "16-inch stand electric fan under ₱1,500",
    ),
    (
        "voucher",
        "uhm gloves na disposable isang box one hundred pieces twenty five pesos off voucher basta two fifty "
        "pataas three hundred budget",
        "₱25 off with ₱250 min spend, buying 1 box (100 pcs) disposable gloves, budget ₱300",
    ),
]

TWO_ASKS = [
    (
        "product",
        "uhm electric fan stand type sixteen inches below fifteen hundred",
        "uhm electric fan stand type eighteen inches below fifteen hundred",
    ),
    (
        "voucher",
        "uhm gloves na disposable isang box fifty pieces twenty five pesos off voucher basta two fifty pataas three "
        "hundred budget",
        "₱25 off with ₱250 min spend, buying 1 box (100 pcs) disposable gloves, budget ₱300",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_dictated_request_is_its_typed_wording(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_a_size_changed_in_a_dictated_request_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None
