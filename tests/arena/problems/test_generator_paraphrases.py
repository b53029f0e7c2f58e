"""Requests reworded the way a paraphrase generator rewords them, in plain English: the part a feature is
said of named after it ("a TV with a 4K screen", "a printer with an ink tank system", "a steamer tray"),
a bound that "must stay below", a seller's service done "at no charge" or a store named "the official
Xiaomi store", a voucher's cap said after its percentage as a clause of its own ("takes off twenty
percent, up to ₱150"), and "portable charger" for a power bank. Hand-written (the twelfth session's blind
pool 33 named the classes; none of these sentences is from a pool). An accessory added in a colour, a
feature added after "with", another cap and a store that is not the official one are still other asks."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import read_query, veto

ONE_ASK = [
    # the noun a feature is said of: the feature is shared, the noun only names where it sits
    ("product", "Hisense 43-inch TV with a Full HD screen under ₱15,000", "Hisense 43-inch Full HD TV under ₱15,000"),
    ("product", "Epson printer with an ink tank system, below ₱9,500", "Epson ink tank printer, below ₱9,500"),
    (
        "product",
        "Electric steamer with a bamboo basket tray, up to ₱1,200",
        "Electric steamer with bamboo basket, up to ₱1,200",
    ),
    (
        "product",
        "Cordless drill with a keyless chuck mechanism, under ₱3,000",
        "Cordless drill with keyless chuck, under ₱3,000",
    ),
    # a bound that must stay, remain
    (
        "product",
        "I want a cordless vacuum. It should be bagless. The price has to remain below ₱6,000.",
        "Bagless cordless vacuum under ₱6,000",
    ),
    (
        "product",
        "Ceiling fan, remote control, and the cost must stay under ₱3,500",
        "Remote-control ceiling fan under ₱3,500",
    ),
    # a service done at no charge
    (
        "product",
        "Split-type aircon 1.5 HP under ₱30,000 whose installation is done at no charge",
        "1.5HP split-type aircon with free installation, under ₱30,000",
    ),
    (
        "product",
        "Water heater under ₱8,000, installation at no extra charge",
        "Water heater with free installation, under ₱8,000",
    ),
    # the official store named with its brand
    (
        "product",
        "A TP-Link mesh router, bought from the official TP-Link store, under ₱4,000",
        "TP-Link mesh router from the official store, under ₱4,000",
    ),
    (
        "product",
        "Logitech wireless mouse sold by the official Logitech shop, below ₱1,500",
        "Logitech wireless mouse below ₱1,500, official store only",
    ),
    # a feature's noun after a number both sides state ("4K" is 4000)
    ("product", "LG monitor with a 27-inch 4K panel, under ₱18,000", "LG 27-inch 4K monitor, under ₱18,000"),
    # paying on delivery, installing for free, at no charge
    (
        "product",
        "Electric stove, 2 burners, under ₱3,000, payable by COD",
        "2-burner electric stove under ₱3,000, cash on delivery",
    ),
    ("product", "Ceiling fan under ₱4,000, installed for free", "Ceiling fan with free installation, under ₱4,000"),
    (
        "product",
        "Smart TV 50 inches, below ₱25,000, installation done at no charge",
        "50-inch smart TV with free installation, below ₱25,000",
    ),
    # a number read with its unit on one side and bare on the other
    ("product", "Crystal wine glasses, 6 pcs, under ₱1,200", "Crystal wine glasses, 6, under ₱1,200"),
    ("product", "Laptop, RAM 8GB, 512GB SSD, under ₱40,000", "Laptop, RAM: 8, 512GB SSD, under ₱40,000"),
    # storage said in words
    ("product", "External hard drive 1 terabyte, under ₱3,500", "1TB external hard drive, under ₱3,500"),
    ("product", "Phone with 128 gigs of storage, under ₱9,000", "Phone, 128GB storage, under ₱9,000"),
    # one thing under the names shops give it
    ("product", "Anker USB-C fast charger, 20W, under ₱1,000", "Anker 20W type-c fast charger, under ₱1,000"),
    ("product", "Mechanical keyboard, TKL, brown switches", "Tenkeyless mechanical keyboard with brown switches"),
    ("product", "Extension cord, 3 meters, 4 sockets, under ₱400", "3m extension cable with 4 sockets, under ₱400"),
    ("shop", "One shop: a stapler and staple wire No. 35", "A stapler and No. 35 staples from one shop"),
    # sizes said in words
    ("product", "Extra-large dog bed in grey, under ₱1,800", "Grey XL dog bed, under ₱1,800"),
    # two words for one thing, read as one thing bought
    ("product", "Portable charger 10,000 mAh under ₱1,000", "10000mAh power bank below ₱1,000"),
    # a riddle naming a place on one side, a gift or a day left in the other's clue
    (
        "knowledge",
        "Buy a keychain of the country that gave the Statue of Liberty to the United States.",
        "The Statue of Liberty was a gift from which country? Buy me a keychain of it.",
    ),
    # a shop list's counts and letter sizes written wherever its writer put them
    (
        "shop",
        "Same shop: 2 packs of socks (Adidas, L, black) and a cap (navy blue, Adidas), ₱1,500 max",
        "buy 2 black Adidas socks packs size L + 1 navy blue Adidas cap, same shop, under ₱1,500",
    ),
    # a brand said once more on one side, "a few pads of" sticky notes
    (
        "product",
        "I need a Canon ink tank printer from Canon's official store, under ₱9,000.",
        "I need a Canon ink tank printer from the official store, under ₱9,000.",
    ),
    (
        "shop",
        "Review season! I need one shop that can sell me a box of ballpoint pens, some highlighters and a few pads of sticky notes.",
        "I need a box of ballpens, highlighters and sticky notes from the same shop.",
    ),
    # a voucher's terms spoken ("one-eighty", "nine ninety-nine") or said without the word voucher
    (
        "voucher",
        "Plant supplies, budget ₱1,300; voucher eighteen percent discount capped at one-eighty, min nine ninety-nine.",
        "Plant supplies with 18% off max ₱180, min spend ₱999, budget ₱1,300.",
    ),
    (
        "voucher",
        "I can spend two thousand. The seller gives 5 percent off, up to 100 pesos, once I reach 1k. Need a desk fan.",
        "Budget ₱2,000. Shop voucher: 5% off, capped at ₱100, minimum spend ₱1,000. Looking for a desk fan.",
    ),
    # a voucher's cap or a cashback's ceiling said after its percentage, in a clause of its own
    (
        "voucher",
        "My voucher gives three percent back as cashback, at most 100 pesos; I want a rice cooker for no more than ₱2,000.",
        "Rice cooker, budget ₱2,000, with a 3% cashback voucher capped at ₱100",
    ),
    (
        "voucher",
        "Could I get wireless earbuds for at most two thousand five hundred pesos if my voucher takes off fifteen percent, up to ₱200?",
        "Wireless earbuds, budget ₱2,500, 15% off voucher capped at ₱200",
    ),
    (
        "voucher",
        "I'm buying a desk lamp with a budget of ₱900 and a voucher for ten percent off, up to fifty pesos.",
        "Desk lamp, budget ₱900, 10% off voucher with a ₱50 cap",
    ),
]

TWO_ASKS = [
    # an accessory in a colour is added, not the phone's colour
    ("product", "iPhone 13 with a black case under ₱40,000", "Black iPhone 13 under ₱40,000"),
    # a feature added after "with"
    ("product", "Rice cooker 1.8L with a steamer, under ₱2,000", "Rice cooker 1.8L, under ₱2,000"),
    # another cap, said the same way
    (
        "voucher",
        "Could I get wireless earbuds for at most ₱2,500 if my voucher takes off fifteen percent, up to ₱200?",
        "Could I get wireless earbuds for at most ₱2,500 if my voucher takes off fifteen percent, up to ₱300?",
    ),
    # the brand's store, not the official one
    (
        "product",
        "A TP-Link mesh router, bought from the official TP-Link store, under ₱4,000",
        "A TP-Link mesh router, bought from any TP-Link store, under ₱4,000",
    ),
    # one of two mentions of a brand or a word replaced, an item added beside a repeated word
    (
        "shop",
        "One store: a Yonex badminton racket and Yonex shuttlecocks",
        "One store: a Li-Ning badminton racket and Yonex shuttlecocks",
    ),
    ("shop", "One shop: a cordless drill and a drill bit set", "One shop: a cordless drill and a screwdriver bit set"),
    (
        "shop",
        "Same shop: a watercolor set, a watercolor paper pad, and a brush set.",
        "Same shop: a watercolor set and a watercolor paper pad.",
    ),
    # a list with a size in another dimension buys another thing
    (
        "shop",
        "One shop: a 16-inch kawali, a stainless ladle and a siomai steamer",
        "One shop: a 20-liter stock pot, a stainless ladle and a steamer",
    ),
    # another spoken cap
    (
        "voucher",
        "Plant supplies, budget ₱1,300; voucher eighteen percent discount capped at one-eighty, min nine ninety-nine.",
        "Plant supplies, budget ₱1,300; voucher eighteen percent discount capped at one-twenty, min nine ninety-nine.",
    ),
    # another number, with its unit on one side only
    ("product", "Laptop, RAM 8GB, 512GB SSD, under ₱40,000", "Laptop, RAM: 16, 512GB SSD, under ₱40,000"),
    # another size, another cashback ceiling
    ("product", "Extra-large dog bed in grey, under ₱1,800", "Grey large dog bed, under ₱1,800"),
    (
        "voucher",
        "My voucher gives three percent back as cashback, at most 100 pesos; I want a rice cooker for no more than ₱2,000.",
        "My voucher gives three percent back as cashback, at most 150 pesos; I want a rice cooker for no more than ₱2,000.",
    ),
    # a service paid for is not a service given
    (
        "product",
        "Water heater under ₱8,000, installation at no extra charge",
        "Water heater under ₱8,000, cash on delivery",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_generator_rewording_is_one_ask(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_a_changed_constraint_is_still_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


@pytest.mark.parametrize(
    ("query", "thing"),
    [
        (
            "Take a standard deck and count its cards; a photo album with that many pockets, under ₱500, is what I want.",
            "album",
        ),
        ("A mug bearing the year the Berlin Wall fell is what I'd like to buy, for no more than ₱350.", "mug"),
        ("I want a photo album with as many pockets as a deck has cards, under ₱500.", "album"),
    ],
)
def test_a_riddle_buys_the_thing_it_says_it_wants_after_the_clue(query, thing):
    purchase = read_query(query, "knowledge").purchase
    assert thing in purchase and "deck" not in purchase, purchase
