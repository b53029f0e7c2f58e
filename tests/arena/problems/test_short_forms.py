"""Short forms typed on a phone ("blk", "sz", "bt"), bounds written as signs ("≤ ₱800", "(<₱600)") and
Tagalog bounds ("hanggang 1,200", "mas mababa sa ₱2,500", "500 pataas") read as the words they stand
for. Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import read_query, veto

_read = read_query
_conflict = veto


ONE_ASK = [
    ("Black hoodie size L under ₱900", "blk hoodie sz L below 900 pesos"),
    ("Waterproof bluetooth speaker under ₱2,000", "waterproof bt speaker (<₱2,000)"),
    ("Desk lamp at most ₱800", "desk lamp ≤ ₱800"),
    ("Electric kettle, up to ₱1,200", "electric kettle hanggang 1,200 lang"),
    ("Rice cooker under ₱2,500", "rice cooker na mas mababa sa ₱2,500"),
]

TWO_ASKS = [
    ("Desk lamp ≤ ₱800", "desk lamp ≥ ₱800"),
    ("electric kettle hanggang 1,200 lang", "electric kettle hanggang 1,500 lang"),
    ("blk hoodie sz L", "wht hoodie sz L"),
]


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_a_short_form_or_a_sign_is_the_word_it_stands_for(a, b):
    assert _conflict(a, b) is None


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_another_value_in_short_form_is_another_ask(a, b):
    assert _conflict(a, b) is not None


def test_a_bound_sign_and_a_tagalog_bound_are_price_bounds():
    assert [p[:2] for p in _read("desk lamp (<₱600)").whole.prices] == [("lt", 600.0)]
    assert [p[:2] for p in _read("desk lamp 500 pataas").whole.prices] == [("gt", 500.0)]
    assert _read("bt speaker").whole.names == ()


def test_not_lower_than_in_tagalog_is_at_least():
    assert [p[:2] for p in _read("power bank, hindi bababa sa 2k").whole.prices] == [("gt", 2000.0)]
    assert _conflict("power bank, hindi lalagpas ng 2k", "power bank, hindi bababa sa 2k") is not None
