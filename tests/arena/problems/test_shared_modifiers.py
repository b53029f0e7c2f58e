"""A word both requests say is a modifier they share, never the other side's name for the thing bought
(heads.py, ``heads_conflict``): "bluetooth speaker" / "bluetooth earphones" are two products however
close "bluetooth" reads to "earphone". Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto


def _conflict(a: str, b: str, intent: str = "product") -> str | None:
    return veto(a, b, intent)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Sony waterproof bluetooth speaker, under ₱4,000.", "Sony na bluetooth earphones, waterproof, below 4k"),
        ("USB-C fast charging power bank, 10000mAh, under ₱1,200", "USB-C fast charging cable, 1 meter, under ₱1,200"),
    ],
)
def test_a_thing_replaced_beside_a_shared_modifier_is_another_ask(a, b):
    assert _conflict(a, b) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Sony waterproof bluetooth speaker, under ₱4,000.", "waterproof Sony bluetooth speaker na below 4k"),
        ("white wireless earbuds under ₱1,500", "earbuds, wireless, white, below 1.5k"),
    ],
)
def test_the_same_thing_beside_shared_modifiers_is_one_ask(a, b):
    assert _conflict(a, b) is None


def test_a_thing_named_only_in_the_vouchers_sentence_is_compared():
    a = "use a ₱200 off voucher (min ₱2,000) on a Hanabishi electric fan, budget ₱3k"
    assert (
        _conflict(a, "use a ₱200 off voucher (min ₱2,000) on a Hanabishi flat iron, budget ₱3k", "voucher") is not None
    )
    assert _conflict(a, "Hanabishi electric fan, with my ₱200 off voucher on min ₱2,000, budget 3k", "voucher") is None
