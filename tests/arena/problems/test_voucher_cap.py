"""A voucher with no cap is a term of its own (twins._NO_CAP, asks._VOUCHER_CUE): beside a capped one it
is another voucher, and "no cap" is never the thing bought. Hand-written, none from a labelled pool."""

from __future__ import annotations

from tests.support.veto_cases import veto


def _conflict(a: str, b: str) -> str | None:
    return veto(a, b, "voucher")


def test_no_cap_beside_a_cap_is_another_voucher():
    assert (
        _conflict(
            "An air fryer with a 12% off voucher, no cap, min spend ₱2,500; budget ₱4,000.",
            "An air fryer with a 12% off voucher capped at ₱300, min spend ₱2,500; budget ₱4,000.",
        )
        is not None
    )


def test_no_cap_said_two_ways_is_one_voucher():
    assert (
        _conflict(
            "air fryer, 12% off voucher walang maximum, min spend 2.5k, budget 4k",
            "An air fryer with a 12% off voucher, no cap, min spend ₱2,500; budget ₱4,000.",
        )
        is None
    )


def test_no_cap_in_the_sentence_naming_the_product_is_no_head():
    assert (
        _conflict(
            "12% off voucher with no cap for a Dyson V8 vacuum", "Dyson V8 vacuum, 12% discount voucher walang maximum"
        )
        is None
    )
