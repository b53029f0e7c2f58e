"""What the seller adds (returns, gift wrap, installments, fast delivery, installation, assembly,
warranty) is a service, and one the shopper declines is none asked (arena/problems/asks.py,
``mark_services``). Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto


def _conflict(a: str, b: str, intent: str = "product") -> str | None:
    return veto(a, b, intent)


TWO_ASKS = [
    ("Bluetooth speaker under ₱2,000 with free returns", "Bluetooth speaker under ₱2,000"),
    ("Ceramic mug set, gift-wrapped, below ₱600", "Ceramic mug set below ₱600"),
    ("Standing desk with assembly service, under ₱9,000", "Standing desk under ₱9,000, we'll assemble it ourselves"),
    ("Rice cooker 1.8L, COD", "Rice cooker 1.8L, no COD"),
    ("Laptop with 0% installment, under ₱40,000", "Laptop under ₱40,000"),
    ("Aircon 1.5HP with free installation under ₱30,000", "1.5HP aircon under ₱30,000, no installation needed"),
    ("Electric fan, express delivery, under ₱1,500", "Electric fan under ₱1,500"),
]

ONE_ASK = [
    (
        "Inverter aircon 1HP with free installation, under ₱28,000",
        "1hp inverter aircon, free install included, below 28k",
    ),
    ("Casio calculator, free shipping, under ₱1,300", "casio calculator, yung libre ang shipping, below 1300"),
    ("Aircon 1.5HP under ₱30,000, no installation needed", "1.5 HP aircon below 30k"),
    ("Air purifier with no installation fee, below ₱8,000", "Air purifier below ₱8,000 with free installation"),
    ("Bookshelf, 5 tiers, under ₱2,500; I'll assemble it myself", "5-tier bookshelf under ₱2,500"),
    ("Wall clock, gift wrapped, under ₱700", "Gift-wrapped wall clock below 700 pesos"),
]


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_an_extra_asked_on_one_side_only_is_another_ask(a, b):
    assert _conflict(a, b) is not None


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_a_declined_extra_is_none_asked_and_an_extra_reworded_is_one(a, b):
    assert _conflict(a, b) is None


def test_a_service_said_beside_the_vouchers_terms_is_the_requests():
    lazmall_in_request = "A stand mixer from LazMall stores, ₱300 off voucher on min ₱3,000, budget ₱4,000."
    lazmall_in_voucher = "Stand mixer please. Budget ₱4,000. Voucher: ₱300 off, min spend ₱3,000, LazMall stores only."
    assert _conflict(lazmall_in_request, lazmall_in_voucher, "voucher") is None
    anywhere = "Stand mixer please. Budget ₱4,000. Voucher: ₱300 off, min spend ₱3,000."
    assert _conflict(lazmall_in_request, anywhere, "voucher") is not None


def test_a_free_shipping_voucher_is_not_the_free_shipping_service():
    a = "free shipping voucher min spend ₱499, a skincare set, total max ₱900"
    b = "skincare set, FS voucher na 499 minimum, hanggang 900 pesos lang total"
    assert _conflict(a, b, "voucher") is None
