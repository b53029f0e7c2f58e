"""How shoppers write in chat, read as what they say: emoji and pictographs say nothing ("wireless earbuds
🎧 under ₱1,500"); Cebuano (Bisaya) mixed into English is the English it says (its frame words ask
nothing, its numerals, bounds and content words are numbers, bounds and English words); and the
shorthand of chats and deal forums stands for its words ("x4" is four pieces, "16in" 16 inches, "w/o SF"
free shipping, "°F" Fahrenheit, "AC" an aircon, a shop list's title "camping gear from 1 store:" names no
item, "most important: ..." asks nothing). A value changed in any of these is still another ask.
Hand-written, none from a labelled pool."""

from __future__ import annotations

import pytest

from arena.problems import tagalog
from arena.problems.asks import _normalised, plain
from tests.support.veto_cases import read_query, veto

# emoji
ONE_ASK = [
    ("Wireless earbuds 🎧 black, under ₱1,500", "black wireless earbuds below 1,500 pesos", "product"),
    ("Rice cooker 1.8L 🍚🍚, COD pls 🙏🏽", "1.8 liter rice cooker, cash on delivery", "product"),
    ("Running shoes for women 👟🏃‍♀️ size 7, under ₱3k", "women's running shoes size 7 below ₱3,000", "product"),
    (
        "Tent, sleeping bag and lantern from one shop ⛺🔦",
        "From one store: a tent, a lantern and a sleeping bag.",
        "shop",
    ),
    (
        "Air fryer 🍟 budget ₱3,000, ₱300 off voucher min spend ₱2,500 🎉",
        "Air fryer with a budget of ₱3,000 and a ₱300-off voucher for orders of at least ₱2,500",
        "voucher",
    ),
    (
        "🇵🇭 mug printed with the year the Philippines declared independence",
        "Mug printed with the year the Philippines declared independence",
        "knowledge",
    ),
    ("Phone case ✨ iPhone 13 ✨ clear, <₱300", "clear iPhone 13 phone case under ₱300", "product"),
]
TWO_ASKS = [
    ("Wireless earbuds 🎧 black, under ₱1,500", "Wireless earbuds 🎧 white, under ₱1,500", "product"),
    ("Rice cooker 1.8L 🍚 COD", "Rice cooker 1.0L 🍚 COD", "product"),
    ("Running shoes 👟 Nike size 7", "Running shoes 👟 Adidas size 7", "product"),
]
# Bisaya
ONE_ASK += [
    (
        "Electric kettle, 1.7 liters, under ₱1,200",
        "gusto nako og electric kettle nga 1.7L, ubos sa 1,200 ra palihug",
        "product",
    ),
    ("Stand fan, white, 16 inches, below ₱1,500", "naa bay stand fan nga puti? 16 inches, wala pa 1.5k", "product"),
    ("Black backpack for school, up to ₱900", "itom nga backpack para eskwela, hangtod 900 lang", "product"),
    (
        "Rice cooker 1.8L, cash on delivery, under ₱2,000",
        "rice cooker 1.8L, bayad pag-abot, ubos sa duha ka libo",
        "product",
    ),
    ("Bluetooth speaker, not more than ₱1,500", "bluetooth speaker, dili molapas sa ₱1,500", "product"),
    ("Yoga mat 6mm thick, purple", "yoga mat nga purple, 6mm kabaga", "product"),
    (
        "Hoodie size L printed with the year Jose Rizal was born",
        "hoodie size L, i-print ang tuig sa pagkatawo ni Jose Rizal",
        "knowledge",
    ),
    (
        "From one shop: a 4-person tent, a lantern and a sleeping bag",
        "isa ra ka shop: lantern, sleeping bag, ug tent para 4 ka tawo",
        "shop",
    ),
    ("electric fan, white, under ₱1,500", "guba na akong electric fan hehe. white, ubos sa 1,500", "product"),
]
TWO_ASKS += [
    ("stand fan nga puti, ubos sa 1,500", "stand fan nga itom, ubos sa 1,500", "product"),
    ("electric kettle, ubos sa 1,200 ra", "electric kettle, ubos sa 1,500 ra", "product"),
    ("backpack, hangtod 900 lang", "backpack, labaw sa 900", "product"),
    ("rice cooker, bayad pag-abot, ubos sa 2k", "rice cooker, free shipping, ubos sa 2k", "product"),
    ("unlan nga memory foam, ubos sa 800", "habol nga memory foam, ubos sa 800", "product"),
]
# shorthand
ONE_ASK += [
    ("LED bulb 9W x4, warm white", "4 pcs warm white LED bulbs, 9W", "product"),
    ("Asahi 16in stand fan, white", 'Asahi 16" stand fan in white', "product"),
    ("laptop backpack, gray, w/o SF", "gray laptop backpack with free shipping", "product"),
    ("thermos that keeps drinks at 60°C", "thermos that keeps drinks at 60 degrees Celsius", "product"),
    (
        "Jersey printed with the freezing point of water in °F",
        "jersey with the freezing point of water in Fahrenheit printed on it",
        "knowledge",
    ),
    ("inverter AC 1HP, under ₱25k", "1HP inverter aircon below ₱25,000", "product"),
    ("most important: Sony, then wireless, black, under ₱3,000", "Sony wireless headphones black under 3k", "product"),
    (
        "school supplies from one store: notebook, ballpen, ruler",
        "From one shop: a ruler, a ballpen and a notebook",
        "shop",
    ),
    (
        "home office setup, one seller: monitor stand, desk mat, LED desk lamp",
        "One seller, please: an LED desk lamp, a monitor stand and a desk mat.",
        "shop",
    ),
]
TWO_ASKS += [
    ("LED bulb 9W x4, warm white", "LED bulb 9W x6, warm white", "product"),
    ("Asahi 16in stand fan, white", "Asahi 18in stand fan, white", "product"),
    ("thermos that keeps drinks at 60°C", "thermos that keeps drinks at 80°C", "product"),
    (
        "school supplies from one store: notebook, ballpen, ruler",
        "school supplies from one store: notebook, ballpen, eraser",
        "shop",
    ),
    # a title that says what the items are is read as written
    (
        "Havaianas slippers for the family from one shop: men's 41-42, women's 37-38, kids' 29-30",
        "Ipanema slippers for the family from one shop: men's 41-42, women's 37-38, kids' 29-30",
        "shop",
    ),
    (
        "Nivea skincare from the same shop with ₱100 off on min ₱1,000, budget ₱1,300",
        "Cetaphil skincare from the same shop with ₱100 off on min ₱1,000, budget ₱1,300",
        "voucher",
    ),
    (
        "Matte red lipstick with ₱100 off on min ₱1,000, budget ₱1,200",
        "Glossy red lipstick with ₱100 off on min ₱1,000, budget ₱1,200",
        "voucher",
    ),
]


# accents, contractions, riddles in Taglish and Bisaya
ONE_ASK += [
    ("L'Oréal black hair dye, 5 boxes", "5 boxes of L'Oreal black hair dye", "product"),
    (
        "Tumbler printed with the number of rays of the sun on the Philippine flag",
        "tumbler nga naka-print ang pila ka rays sa adlaw sa flag sa Pilipinas",
        "knowledge",
    ),
    (
        "Mug printed with the year humans first walked on the Moon",
        "My lola still talks about the Moon landing. She'll love a mug printed with the year humans first walked on the Moon!",
        "knowledge",
    ),
    (
        "wireless mouse, budget ₱800, 8% cashback max ₱80",
        "naa koy 8% cashback voucher up to ₱80, gusto nako og wireless mouse, ₱800 budget",
        "voucher",
    ),
]
ONE_ASK += [
    (
        "Framed map of the largest island in the Philippines",
        "yung pinakamalaking isla sa pinas, framed map nun ang gusto ko",
        "knowledge",
    ),
    (
        "sari-sari store restock, one supplier: 24 cans sardines, 12 pcs pancit canton",
        "isang supplier: sardinas 24 lata, pancit canton 12 pcs",
        "shop",
    ),
]
ONE_ASK += [
    ("Electric kettle with auto shut-off, 1.7L", "1.7 liter electric kettle, automatic shut-off", "product"),
    (
        "From one shop: potato chips, a 1.5L soda and microwave popcorn",
        "Game night with the whole family this Saturday! From one shop: potato chips, a 1.5L soda and microwave popcorn.",
        "shop",
    ),
]
ONE_ASK += [
    (
        "From one shop: broom, dustpan, mop.",
        "From one shop: broom, dustpan, mop. Excited to clean the new house!",
        "shop",
    ),
]
# Typos in the words a constraint is read from: a class value, a service's words, a synonym's.
ONE_ASK += [
    (
        "bluetoth speaker, stainles steel, from the offical store",
        "Bluetooth speaker in stainless steel, official store",
        "product",
    ),
    ("rice cooker with free shiping and warrenty", "rice cooker with warranty and free shipping", "product"),
    ("electric fan, cash on delivry", "electric fan, cash on delivery", "product"),
]
TWO_ASKS += [
    ("bluetoth speaker from the offical store", "bluetooth speaker with free shipping", "product"),
    ("3-seater sofa, gray fabric", "gray fabric sweater", "product"),
]
# A list title's names and wares, and an exclamation that adds or insists, are the request's.
TWO_ASKS += [
    (
        "Nintendo Switch accessories, one shop: carrying case, screen protector, grip",
        "PS5 accessories, one shop: carrying case, screen protector, grip",
        "shop",
    ),
    (
        "Stroller essentials from one store: rain cover, cup holder, hook",
        "Bike essentials from one store: rain cover, cup holder, hook",
        "shop",
    ),
    (
        "From one shop: broom, dustpan, mop. Plus a pail!",
        "From one shop: broom, dustpan, mop. Excited to clean the new house!",
        "shop",
    ),
]
TWO_ASKS += [
    (
        "Buy a throw pillow shaped like the national fruit of the Philippines.",
        "Keychain na hugis national fruit ng Pilipinas",
        "knowledge",
    ),
]


@pytest.mark.parametrize(("a", "b", "intent"), ONE_ASK)
def test_one_ask_in_chat_writing_reads_as_one(a, b, intent):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("a", "b", "intent"), TWO_ASKS)
def test_a_value_changed_in_chat_writing_is_another_ask(a, b, intent):
    assert veto(a, b, intent) is not None


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("lima ka gatos pesos", "500 pesos"),
        ("duha ka libo ug lima ka gatos", "2500"),
        ("singko mil", "5000"),
        ("dos mil kinyentos", "2500"),
        ("ubos sa 800", "under 800"),
        ("wala pa 1k", "under 1000"),
        ("dili moubos sa 2k", "at least 2000"),
        ("hangtod ₱4,500 ra", "up to 4500"),
    ],
)
def test_bisaya_numerals_and_bounds_are_read(said, read):
    assert read in _normalised(said)


def test_an_english_word_that_looks_bisaya_stays_a_word():
    # "mil" starts no number ("6 mil" is a thickness); "man", "pod", "mi" are English words a request
    # names things with ("men's watch", "coffee pod", "Mi Band"), never frame words.
    assert " 6 mil " in _normalised("6 mil plastic sheet")
    assert not {"man", "pod", "mi", "sad"} & tagalog.FRAME
    assert veto("coffee pod machine, black", "coffee capsule machine, black") is not None


def test_an_emoji_is_read_as_nothing_and_the_words_around_it_stay():
    request = read_query("hair dryer💇‍♀️ foldable, pink 🩷 under ₱1,500")
    assert not [w for w in request.whole.words if not w.isascii()]
    assert {"dryer", "foldable", "pink"} <= set(request.whole.words)


def test_plain_keeps_currency_signs_bounds_degrees_and_letters_of_any_script():
    assert plain("≤ ₱800 🔥") == "≤ ₱800  "
    assert plain("40°C ñ é ₱ Ж") == "40°C n e ₱ Ж"
    assert plain("1️⃣ pack") == "1 pack"
    assert plain("plain ascii") == "plain ascii"
