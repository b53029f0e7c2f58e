"""Requests relayed by a personal shopper or a shop's agent ("My client wants ...", "Order for Ma'am
Joy: ..."), sizes said in another unit system and rounded ("14-inch" / "35.6 cm"), and values ruled out in
Taglish ("basta hindi red") or as "anything but". Hand-written, none from a labelled pool; a value or a
brand changed is still another ask."""

from __future__ import annotations

import pytest

from arena.problems.asks import plain
from tests.support.veto_cases import read_query, veto


def test_who_the_request_is_relayed_for_is_not_what_it_buys():
    assert "joy" not in plain("Order for Ma'am Joy: dishwashing liquid 1 L").lower()
    assert "client" not in plain("My client is looking for a rice cooker").lower()
    assert "customer" not in plain("Customer's request: a rice cooker").lower()
    # A riddle's titled names are its clue.
    assert "Isaac" in plain("a mug with the year Sir Isaac Newton was born")
    assert "Universe" in plain("the first Miss Universe from Asia")
    assert read_query("Order for Tita Nena: Kyowa rice cooker 1 L under ₱1,000").whole.names == ("kyowa",)


ONE_ASK = [
    ("product", "My client wants a 16-inch stand fan, white, under ₱1,800.", "16 inch white stand fan below ₱1,800"),
    ("product", "Order for Ma'am Joy: Kyowa rice cooker, 1 L, below ₱1,000.", "Kyowa rice cooker 1 liter under ₱1,000"),
    (
        "knowledge",
        "Customer is asking for a mug printed with the year the Berlin Wall fell.",
        "Mug printed with the year the Berlin Wall fell.",
    ),
    # Converted and rounded: 14 in is 35.56 cm, 9 in 22.86 cm, 5 lb 2.27 kg.
    (
        "product",
        "Laptop sleeve for a 14-inch laptop, black, under ₱600",
        "black laptop sleeve, fits a 35.6 cm laptop, under ₱600",
    ),
    ("product", "Round cake pan, 9 inches, non-stick, under ₱400", "non-stick round cake pan 23 cm below ₱400"),
    ("product", "5 lb bag of dry dog food under ₱900", "2.3 kg bag of dry dog food under ₱900"),
    (
        "product",
        "Automatic umbrella, any colour except red, under ₱400",
        "automatic umbrella basta hindi red, below ₱400",
    ),
    ("product", "For Sir Paolo: Xiaomi power bank 20000 mAh under ₱1,500", "Xiaomi power bank 20000mAh below ₱1,500"),
    (
        "product",
        "Gym bag, any colour, no green please, under ₱900",
        "gym bag, kahit anong kulay basta hindi green, below ₱900",
    ),
    ("product", "Arabica coffee beans, half a kilo, under ₱600", "500 g arabica coffee beans below ₱600"),
    ("product", "kalahating litro na fish sauce, under ₱90", "fish sauce 500 ml below ₱90"),
    (
        "product",
        "Bluetooth speaker, waterproof, hindi na kailangan ng COD",
        "waterproof Bluetooth speaker, no need for cash on delivery",
    ),
    ("product", "Keychron K2 mechanical keyboard, will pay online", "Keychron K2 mechanical keyboard, no COD"),
]

TWO_ASKS = [
    (
        "product",
        "Laptop sleeve for a 14-inch laptop, black, under ₱600",
        "Laptop sleeve for a 15.6-inch laptop, black, under ₱600",
    ),
    (
        "product",
        "black laptop sleeve, fits a 35.6 cm laptop, under ₱600",
        "black laptop sleeve, fits a 39.6 cm laptop, under ₱600",
    ),
    # Two metric sizes a little apart are two sizes: only a converted one is rounded.
    ("product", "round cake pan 20 cm, non-stick, under ₱400", "round cake pan 20.5 cm, non-stick, under ₱400"),
    ("product", "automatic umbrella basta hindi red, below ₱400", "automatic umbrella, red lang, below ₱400"),
    ("product", "phone case, anything but pink, under ₱200", "phone case, pink, under ₱200"),
    (
        "product",
        "Order for Ma'am Joy: Kyowa rice cooker 1 L under ₱1,000",
        "Order for Ma'am Joy: Hanabishi rice cooker 1 L under ₱1,000",
    ),
    # A title and a name that are a home brand or an engraving, not who the request is for.
    ("product", "Tito Jun's longganisa 1 kg under ₱350", "Ate Lorna's longganisa 1 kg under ₱350"),
    ("product", "Keychain engraved 'Ate Mel', brass, under ₱150", "Keychain engraved 'Kuya Mel', brass, under ₱150"),
    ("product", "Gym bag, any colour basta hindi green, under ₱900", "Gym bag, any colour, under ₱900"),
    (
        "product",
        "Bluetooth speaker, waterproof, di na kailangan ng COD",
        "Bluetooth speaker, waterproof, kailangan ng COD",
    ),
    (
        "knowledge",
        "Customer wants a mug printed with the year Sir Isaac Newton was born",
        "Customer wants a mug printed with the year Sir Isaac Newton died",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_one_ask_relayed_or_converted(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_one_value_changed_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None
