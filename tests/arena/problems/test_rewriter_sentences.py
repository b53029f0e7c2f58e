"""Requests a rewriting model writes when told to share as few words as possible with its seed: a bound
said as what is ruled out ("paying ₱1,500 or more is out of the question", "anything at or above 12k is
ruled out"), a bound one peso off ("not more than 499" for "below 500"), a verb where the seed has an
adjective ("backed by a warranty", "works on induction", "rated for a 25 sqm room"), a service said as
when the money changes hands ("payment will be made on delivery", "delivered free"), units and things
named in full ("six quarts", "milliampere-hours", "AA cells", "a head-mounted flashlight"), and the
bound said of every item. Hand-written for the fourteenth session (pool 47 named the classes; none of
these sentences is from a pool). Another bound, another size, another service, another thing and
another brand are still other asks."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

ONE_ASK = [
    # a lower bound ruled out is an upper bound
    (
        "product",
        "A Lenovo wireless keyboard is wanted; paying ₱1,500 or more is out of the question.",
        "Lenovo wireless keyboard under ₱1,500",
    ),
    (
        "product",
        "Xiaomi robot vacuum, anything priced at or above 12k is ruled out",
        "Xiaomi robot vacuum below ₱12,000",
    ),
    (
        "product",
        "A Nike gym bag in black; a price of two thousand pesos or more is not acceptable.",
        "Black Nike gym bag under ₱2,000",
    ),
    (
        "shop",
        "From one store: a dish rack, a cutting board and a knife set, with no single item costing ₱700 or more.",
        "One store: dish rack, cutting board, knife set, each under ₱700",
    ),
    # a bound one peso off: "not more than 499" is what "below 500" means in pesos
    ("product", "Baseus car charger, black, not more than 499 pesos", "Black Baseus car charger below ₱500"),
    (
        "knowledge",
        "A cap with the name of the Philippines' Summer Capital, not more than ₱299",
        "Cap printed with the name of the Summer Capital of the Philippines, under ₱300",
    ),
    # a verb where the seed has an adjective or a noun
    (
        "product",
        "Makita impact driver with two batteries, backed by a one-year warranty, under 5k",
        "Makita impact driver, 2 batteries, 1-year warranty, under ₱5,000",
    ),
    ("product", "A wok that works on induction, 32 cm, below ₱1,500", "Induction-compatible 32cm wok under ₱1,500"),
    ("product", "Induction-ready 32 cm wok under ₱1,500", "32cm wok that works on induction, below ₱1,500"),
    (
        "product",
        "A Sharp air purifier rated for a 25 sqm room, under ₱9,000",
        "Sharp air purifier for a 25 sqm room below ₱9,000",
    ),
    ("product", "Cast iron skillet measuring 26 cm, under ₱1,200", "26 cm cast iron skillet below ₱1,200"),
    (
        "product",
        "Black+Decker 18V hedge trimmer with two batteries and a warranty, under ₱5,500",
        "Black+Decker 18V hedge trimmer, two batteries, under ₱5,500, backed by a warranty",
    ),
    (
        "shop",
        "One shop: a grey laptop backpack that fits a 15.6-inch laptop, a mouse pad and a USB hub",
        "A USB hub, a mouse pad and a grey 15.6-inch laptop backpack, all from one shop",
    ),
    (
        "product",
        "Non-stick frying pan, 24 cm, induction-ready, under ₱900",
        "A non-stick frying pan measuring 24 cm that is induction compatible, under ₱900",
    ),
    (
        "product",
        "An Imarflex air purifier for a 20 sqm bedroom with a HEPA filter, under ₱7,000",
        "An Imarflex air purifier with HEPA filtration rated for a 20 sqm bedroom, under ₱7,000",
    ),
    # a service said as when the money changes hands, or as how the parcel comes
    (
        "product",
        "Canon inkjet printer under ₱4,000. Payment will be made on delivery.",
        "Canon inkjet printer under ₱4,000, cash on delivery",
    ),
    (
        "product",
        "Yonex badminton racket under ₱2,000, payment COD",
        "Yonex badminton racket under ₱2,000, cash on delivery",
    ),
    (
        "product",
        "A Uratex foam mattress, single size, under ₱3,000, delivered free",
        "Uratex single foam mattress below ₱3,000 with free shipping",
    ),
    (
        "voucher",
        "A pair of flip-flops with a delivery-fee waiver coupon that needs ₱200 spent, budget ₱500",
        "Flip-flops with a free shipping voucher, min spend ₱200, budget ₱500",
    ),
    # units and things named in full
    ("product", "Instant pot, 6 quarts, stainless, under ₱5,000", "Stainless instant pot 6qt below ₱5,000"),
    (
        "product",
        "An Anker power bank of twenty thousand milliampere-hours, under ₱2,500",
        "Anker 20000mAh power bank under ₱2,500",
    ),
    (
        "product",
        "A smartwatch with an AMOLED screen, black, under ₱3,000",
        "Black smartwatch with AMOLED display below ₱3,000",
    ),
    (
        "product",
        "Panasonic AA rechargeable cells, 4 pieces, under ₱800",
        "Panasonic rechargeable AA batteries, 4 pcs, below ₱800",
    ),
    ("product", "Portable battery pack by Romoss, 10000mAh, under ₱900", "Romoss 10000mAh power bank below ₱900"),
    ("product", "A rechargeable headlamp under ₱400", "A rechargeable head-mounted flashlight below ₱400"),
    ("product", "Microfibre bath towel, grey, under ₱500", "Grey microfiber bath towel below ₱500"),
    # the bound said of every item
    (
        "shop",
        "Every item under ₱300: a lunch box, a tumbler and a pencil case, all from one shop",
        "From one shop, each below ₱300: pencil case, tumbler, lunch box",
    ),
    # what the buyer had before, and what the list's things are, are no constraint
    (
        "product",
        "My kettle broke this morning. A replacement is needed: a Hanabishi electric kettle, 1.7 L, under ₱1,000.",
        "Hanabishi 1.7L electric kettle below ₱1,000",
    ),
    (
        "product",
        "My old plastic lunch box cracked last week. I'm after a Lock&Lock lunch box, 1 litre, under ₱600.",
        "Lock&Lock 1L lunch box below ₱600",
    ),
    (
        "shop",
        "One store should supply three baby items: a feeding bottle, a bib and a teether.",
        "Feeding bottle, bib and teether from the same store",
    ),
    # a capacity in cubic feet, an ability, the brand's outlet, "per" for "each"
    (
        "product",
        "A two-door inverter refrigerator, 7 cu ft or more, under ₱20,000",
        "An inverter refrigerator with two doors and at least 7 cubic feet, below ₱20,000",
    ),
    (
        "product",
        "A Dyson cordless vacuum that must be able to mop, under ₱25,000",
        "A Dyson cordless vacuum that can mop, under ₱25,000",
    ),
    (
        "product",
        "Samsung 45W charger sold by the brand's flagship outlet, under ₱1,500",
        "Samsung 45W charger from the official store, under ₱1,500",
    ),
    (
        "knowledge",
        "A jersey printed with the number of players per team on a volleyball court",
        "A jersey printed with the number of players each team has on a volleyball court",
    ),
    # a first order's voucher ("new" is no condition of the thing), one as "a"
    (
        "voucher",
        "Selfie stick with a first-time-customer coupon of ₱60 off at ₱300 spent, budget ₱450",
        "Selfie stick, new-user voucher ₱60 off min spend ₱300, budget ₱450",
    ),
    (
        "shop",
        "One store: a badminton racket, a tube of shuttlecocks and grip tape",
        "One store: badminton racket, shuttlecocks (1 tube), grip tape",
    ),
    # the brand preferred said beside the one passed over; a service said not to be a must; a bound refused
    (
        "product",
        "A 1.5L rice cooker, Kyowa instead of Hanabishi this time, under ₱1,500",
        "Kyowa rice cooker, 1.5 L, below ₱1,500",
    ),
    (
        "product",
        "Bluetooth speaker, Marshall over Bose any day, under ₱9,000",
        "Marshall Bluetooth speaker below ₱9,000",
    ),
    ("product", "Wireless earbuds, not Soundcore, QCY lang, under ₱1,500", "QCY wireless earbuds under ₱1,500"),
    ("product", "Xiaomi air fryer under ₱3,500; cash on delivery is not a must", "Xiaomi air fryer under ₱3,500"),
    ("product", "A Casio G-Shock watch; 8k and up, I'll pass.", "Casio G-Shock watch under ₱8,000"),
    ("product", "Leather belt, brown; anything below ₱900 is a no for me", "Brown leather belt, ₱900 or more"),
    ("product", "Compact umbrella, black; skip anything ₱400 and up", "Black compact umbrella under ₱400"),
    ("product", "ICC-certified full-face helmet, size M, under ₱3,000", "ICC full-face helmet, size M, ₱2,999 max"),
    ("product", "Dyson fan; ₱20k is already too much for me", "Dyson fan under ₱20,000"),
    # the old one's size asked again; paying at the doorstep; the brand someone only uses
    (
        "product",
        "Kyowa rice cooker please. My old 1.8L one broke, so same capacity. Under ₱2,000.",
        "Kyowa 1.8L rice cooker below ₱2,000",
    ),
    (
        "product",
        "Realme C55 phone under ₱9,000. I'll pay in cash at the doorstep.",
        "Realme C55 phone under ₱9,000, cash on delivery",
    ),
    ("product", "My wife only uses Dove. A body wash, 1 litre, under ₱500.", "Dove body wash 1L under ₱500"),
    (
        "product",
        "Kids' raincoat, size M, under ₱600. My son wants it in yellow.",
        "Yellow kids' raincoat, size M, under ₱600",
    ),
    # a label asked and answered
    (
        "product",
        "Laptop stand, aluminium. Shipping? On the seller. Under ₱900.",
        "Aluminium laptop stand under ₱900 with free shipping",
    ),
    # a voucher's budget said as its ceiling
    (
        "voucher",
        "A Xiaomi electric toothbrush with a ₱100 off coupon on orders of ₱1,000 or more; ₱2,000 is the ceiling.",
        "Xiaomi electric toothbrush, ₱100 off voucher with ₱1,000 min spend, budget ₱2,000",
    ),
]

TWO_ASKS = [
    (
        "product",
        "Kids' raincoat, size M, under ₱600. My son wants it in yellow.",
        "Kids' raincoat, size M, under ₱600. My son wants it in green.",
    ),
    (
        "product",
        "My wife only uses Dove. A body wash, 1 litre, under ₱500.",
        "My wife only uses Palmolive. A body wash, 1 litre, under ₱500.",
    ),
    (
        "product",
        "Kyowa rice cooker please. My old 1.8L one broke, so same capacity. Under ₱2,000.",
        "Kyowa rice cooker please. My old 1.8L one broke, so a bigger one, 2.2L. Under ₱2,000.",
    ),
    (
        "product",
        "A 1.5L rice cooker, Kyowa instead of Hanabishi this time, under ₱1,500",
        "A 1.5L rice cooker, Hanabishi instead of Kyowa this time, under ₱1,500",
    ),
    (
        "product",
        "Bluetooth speaker, Marshall over Bose any day, under ₱9,000",
        "Bluetooth speaker, Bose over Marshall any day, under ₱9,000",
    ),
    (
        "product",
        "Wireless earbuds, not Soundcore, QCY lang, under ₱1,500",
        "Wireless earbuds, not QCY, Soundcore lang, under ₱1,500",
    ),
    (
        "product",
        "Xiaomi air fryer under ₱3,500; cash on delivery is a must",
        "Xiaomi air fryer under ₱3,500; cash on delivery is not a must",
    ),
    (
        "shop",
        "One store: a badminton racket, 2 tubes of shuttlecocks and grip tape",
        "One store: badminton racket, shuttlecocks (3 tubes), grip tape",
    ),
    (
        "product",
        "A two-door inverter refrigerator, 7 cu ft or more, under ₱20,000",
        "A two-door inverter refrigerator, 9 cubic feet or more, under ₱20,000",
    ),
    (
        "product",
        "Samsung 45W charger sold by the brand's flagship outlet, under ₱1,500",
        "Samsung 45W charger with free shipping, under ₱1,500",
    ),
    (
        "product",
        "A Lenovo wireless keyboard is wanted; paying ₱1,500 or more is out of the question.",
        "Lenovo wireless keyboard under ₱2,000",
    ),
    (
        "product",
        "Xiaomi robot vacuum, anything priced at or above 12k is ruled out",
        "Xiaomi robot vacuum over ₱12,000",
    ),
    ("product", "Baseus car charger, black, not more than 499 pesos", "Black Baseus car charger below ₱600"),
    (
        "knowledge",
        "A cap with the name of the Philippines' Summer Capital, not more than ₱299",
        "A cap with the name of the Philippines' Summer Capital, not more than ₱399",
    ),
    (
        "product",
        "Makita impact driver with two batteries, backed by a one-year warranty, under 5k",
        "Makita impact driver with two batteries, backed by a two-year warranty, under 5k",
    ),
    (
        "product",
        "A wok that works on induction, 32 cm, below ₱1,500",
        "A wok that works on induction, 36 cm, below ₱1,500",
    ),
    (
        "product",
        "Canon inkjet printer under ₱4,000. Payment will be made on delivery.",
        "Canon inkjet printer under ₱4,000. Delivery must be free.",
    ),
    (
        "product",
        "Yonex badminton racket under ₱2,000, payment COD",
        "Yonex badminton racket under ₱2,000, free shipping",
    ),
    ("product", "Instant pot, 6 quarts, stainless, under ₱5,000", "Instant pot, 8 quarts, stainless, under ₱5,000"),
    (
        "product",
        "A smartwatch with an AMOLED screen, black, under ₱3,000",
        "A smartwatch with an LCD screen, black, under ₱3,000",
    ),
    ("product", "Panasonic AA rechargeable cells, 4 pieces", "Panasonic AAA rechargeable cells, 4 pieces"),
    (
        "shop",
        "Every item under ₱300: a lunch box, a tumbler and a pencil case, all from one shop",
        "Under ₱300 in total: a lunch box, a tumbler and a pencil case, all from one shop",
    ),
    (
        "product",
        "An adjustable bike helmet, white, with LED light, under ₱1,500",
        "An adjustable motorcycle helmet, white, with LED light, under ₱1,500",
    ),
    (
        "product",
        "Pigeon anti-colic feeding bottles, 2 pack, 240 ml, from the official store",
        "Avent anti-colic feeding bottles, 2 pack, 240 ml, from the official store",
    ),
    (
        "voucher",
        "A robot vacuum bought with a ₱300 cashback voucher at ₱3,000 spent, budget ₱10,000",
        "A stick vacuum bought with a ₱300 cashback voucher at ₱3,000 spent, budget ₱10,000",
    ),
    (
        "knowledge",
        "XL jersey printed with the number Michael Jordan wore for the Chicago Bulls",
        "XL shorts printed with the number Michael Jordan wore for the Chicago Bulls",
    ),
    (
        "product",
        "My old plastic lunch box cracked last week. I'm after a Lock&Lock lunch box, 1 litre, under ₱600.",
        "My old plastic lunch box cracked last week. I'm after a Lock&Lock lunch box, 2 litres, under ₱600.",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_rewriters_sentence_is_one_ask(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_another_constraint_in_such_sentences_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None
