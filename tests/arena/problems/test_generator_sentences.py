"""Requests a paraphrase generator writes as sentences of their own: a service said as what it costs or
when the buyer pays ("shipping should cost me nothing", "I'll pay in cash once the parcel arrives",
"setting it up must come at no additional cost"), a bound said as "the most I can spend", a riddle's
price and its fact said in other words ("below three hundred pesos", "set foot on the Moon", "the year
... should appear on a mug"), a size in the voucher's own sentence, and "four-person" for "for four
people". Hand-written (the thirteenth session's pool 39 named the classes; none of these sentences is
from a pool). Another service, another bound, another fact, another size and a thing made for the thing
asked ("a mattress topper", "a laptop stand") are still other asks."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import read_query, veto

ONE_ASK = [
    # a service said as a sentence of its own
    (
        "product",
        "Shipping should cost me nothing. I want a Philips steam iron below ₱2,500.",
        "Philips steam iron under ₱2,500 with free shipping",
    ),
    (
        "product",
        "A Tefal frying pan, 28 cm, under 1,800 pesos. Delivery without any fee.",
        "Tefal 28cm frying pan under ₱1,800, free delivery",
    ),
    (
        "product",
        "Carrier 1HP window aircon under ₱20,000; setting it up must come at no additional cost.",
        "Carrier 1HP window aircon under ₱20,000 with free installation",
    ),
    (
        "product",
        "Rubber shoes for running, Adidas, size 8, below 3k. I'll pay in cash once the package arrives.",
        "Adidas running shoes size 8 under ₱3,000, cash on delivery",
    ),
    (
        "product",
        "The seller has to deliver without charging anything: a Lenovo wireless mouse under ₱700.",
        "Lenovo wireless mouse under ₱700 with free shipping",
    ),
    # a service made free after it: that service, and no free shipping
    (
        "product",
        "Inverter washing machine under ₱18,000, installation free of charge",
        "Inverter washing machine under ₱18,000 with free installation",
    ),
    # a participle saying how the thing works ends its name
    (
        "product",
        "A gaming monitor refreshing at 165 Hz, 27 inches, by AOC, below ₱12,000",
        "AOC 27-inch gaming monitor running at 165Hz under ₱12,000",
    ),
    # a bound said as the most that may be spent
    ("product", "An air fryer from Dowell; 4k is the most I can spend.", "Dowell air fryer under ₱4,000"),
    ("product", "Xiaomi smart band, and ₱2,000 is my limit", "Xiaomi smart band for ₱2,000 or less"),
    # what is measured, named after "of"; one year written out; a tent for so many people
    (
        "product",
        "Samsung tablet with 128 gigabytes of storage, under twenty thousand pesos",
        "128GB Samsung tablet under ₱20,000",
    ),
    ("product", "Rice cooker with a one-year warranty, under ₱1,500", "Rice cooker, 1-year warranty, below ₱1,500"),
    ("product", "A 6-person dome tent below ₱5,000", "A dome tent for six people, under ₱5,000"),
    # "finished in", "use it on", "source it": how the sentence is strung, nothing asked
    ("product", "Stand mixer finished in matte black, under ₱7,000", "Matte black stand mixer under ₱7,000"),
    (
        "voucher",
        "I have a ₱100 off voucher for orders of ₱1,000 or more and I'd like to use it on a blender; budget ₱1,800.",
        "Buy a blender with a ₱100-off voucher, minimum spend ₱1,000, budget ₱1,800",
    ),
    (
        "shop",
        "Source it all from one store: a whiteboard, a box of markers and an eraser.",
        "From a single shop, buy a whiteboard, a box of markers and an eraser.",
    ),
    # the size of what is bought, said in the voucher's sentence, is no term of the voucher
    (
        "voucher",
        "My voucher takes ₱50 off orders of ₱500 or more, and I want a 2 kg bag of dog food with it, spending at most ₱700.",
        "Buy a 2kg bag of dog food with a ₱50-off voucher (min spend ₱500); budget ₱700.",
    ),
    # a conditional ending in "I'll take it", a ceiling said first, paying when it reaches the door
    (
        "product",
        "If there's a Kyowa electric kettle of 1.7 liters below ₱1,200, I'll take it.",
        "Kyowa 1.7L electric kettle under ₱1,200",
    ),
    ("product", "My ceiling is 3k: a Baseus power bank, 20000mAh.", "Baseus 20000mAh power bank under ₱3,000"),
    (
        "shop",
        "My limit for the three is ₱2,500, all from one shop: a wok, a ladle and a chopping board.",
        "From one shop, a wok, a ladle and a chopping board, ₱2,500 at most in total.",
    ),
    (
        "product",
        "A Hanabishi stand fan under ₱1,500, and I only pay in cash when it reaches my door.",
        "Hanabishi stand fan under ₱1,500, cash on delivery",
    ),
    (
        "product",
        "A Coleman cooler under ₱4,000 where I pay nothing for delivery.",
        "Coleman cooler under ₱4,000 with free shipping",
    ),
    # counts in dozens, the thing pointed back at, a dimension named before its value
    (
        "shop",
        "From one store: crayons in a box of two dozen, a sketchpad, and the easel itself.",
        "From one store, a 24-crayon box, a sketchpad and an easel.",
    ),
    (
        "product",
        "A garden hose whose length is twenty metres, under ₱1,000",
        "20m garden hose under ₱1,000",
    ),
    # a voucher's terms as a generator says them
    (
        "voucher",
        "Can I use a voucher giving ₱80 off regardless of how much I spend on a hair dryer under ₱1,500?",
        "Buy a hair dryer under ₱1,500 with an ₱80-off voucher, no minimum spend",
    ),
    (
        "voucher",
        "A rice dispenser under ₱2,000 with a voucher that waives the shipping fee from ₱500 of spending.",
        "Buy a rice dispenser under ₱2,000 using a free-shipping voucher with a ₱500 minimum spend",
    ),
    (
        "voucher",
        "A keyboard for gaming under ₱2,200 that pays back 5 percent when I use ShopeePay.",
        "Gaming keyboard under ₱2,200 with 5% cashback via ShopeePay",
    ),
    # a value named by what it is ("whose wood is oak"), a half said in words, a ceiling "of" an amount
    (
        "product",
        "A study table whose wood is narra and whose colour is brown, under ₱9,000",
        "Brown narra study table under ₱9,000",
    ),
    (
        "product",
        "An electric kettle whose capacity is one and a half litres, below ₱900",
        "1.5L electric kettle under ₱900",
    ),
    ("product", "With a ceiling of 12k, a Canon inkjet printer", "Canon inkjet printer under ₱12,000"),
    # a voucher said working ("knocks off", "kicks in once"), a bound "less than" beside it
    (
        "voucher",
        "A voucher knocking ₱200 off orders of 2k or more, used on a steam iron costing less than ₱2,800.",
        "Buy a steam iron under ₱2,800 with a ₱200-off voucher, minimum spend ₱2,000",
    ),
    (
        "voucher",
        "A ₱75 discount kicks in once I spend ₱750; with it I want a pillow set below ₱1,000.",
        "Buy a pillow set under ₱1,000 using a ₱75-off voucher with a ₱750 minimum spend",
    ),
    # sent back free, paid back, never more than
    (
        "product",
        "Adidas slides, size 10, below ₱2,000, that I can send back without paying for the return.",
        "Adidas slides size 10 under ₱2,000 with free returns",
    ),
    (
        "product",
        "Is there a Logitech webcam under ₱3,000 that pays back 3 percent when I pay with Maya?",
        "Logitech webcam under ₱3,000 with 3% cashback via Maya",
    ),
    (
        "voucher",
        "My ceiling for a toaster is ₱1,500; the voucher cuts 15 percent, but never more than ₱120.",
        "Buy a toaster under ₱1,500 with a 15% off voucher capped at ₱120",
    ),
    # shipping on the seller, not a centavo for the courier, setup at no extra, the brand's own shop
    (
        "product",
        "Dyson cordless vacuum under ₱25,000. The shipping should be on the seller.",
        "Dyson cordless vacuum under ₱25,000, free shipping",
    ),
    (
        "product",
        "Asus router below ₱4,000; I'm not paying a centavo for the courier.",
        "Asus router under ₱4,000 with free shipping",
    ),
    (
        "product",
        "Condura chest freezer under ₱16,000. Setup shouldn't cost extra.",
        "Condura chest freezer under ₱16,000 with free installation",
    ),
    (
        "product",
        "Buy it from Lenovo's own shop: a Lenovo IdeaPad under ₱35,000.",
        "Lenovo IdeaPad under ₱35,000 from the official store",
    ),
    # a bound said in a sentence that opens like a story
    (
        "product",
        "Electric fan, 16 inches. I won't go over two thousand pesos.",
        "16-inch electric fan under ₱2,000",
    ),
    # a bound for the whole list, said or not
    (
        "shop",
        "A kettle, a toaster and a mug from one shop, under ₱3,000 in total.",
        "From one shop: kettle, toaster, mug, below ₱3,000.",
    ),
    # a word said with "un-" in a request typed in lower case: a word, no name
    (
        "knowledge",
        "A pack of unscented candles, one for each continent, under ₱300.",
        "Is there a pack of candles without any scent holding as many candles as the world has continents, below ₱300?",
    ),
    # a riddle's price in words, its fact in other words, the thing it goes on named last
    (
        "knowledge",
        "Below three hundred pesos: a mug with the year the Titanic sank on it.",
        "Find a mug printed with the year the Titanic sank, priced under ₱300.",
    ),
    (
        "knowledge",
        "A poster of the first person who set foot on the Moon, under ₱400.",
        "Find a poster of the first person to walk on the Moon, below four hundred pesos.",
    ),
    (
        "knowledge",
        "The year the Berlin Wall fell should appear on a ceramic mug costing under ₱350.",
        "Find a ceramic mug printed with the year the Berlin Wall fell, under ₱350.",
    ),
    (
        "knowledge",
        "A number candle whose digit is how many legs a spider has, under ₱120.",
        "Number candle showing how many legs a spider has, below ₱120.",
    ),
]

TWO_ASKS = [
    # a thing made for the thing asked
    ("product", "Foam mattress, single size, under ₱6,000", "Foam mattress topper, single size, under ₱6,000"),
    ("product", "Aluminum laptop under ₱40,000", "Aluminum laptop stand under ₱40,000"),
    # another service, said as sentences
    (
        "product",
        "Philips steam iron below ₱2,500. Shipping should cost me nothing.",
        "Philips steam iron below ₱2,500. I'll pay in cash once the package arrives.",
    ),
    # a service made free is not shipping made free
    (
        "product",
        "Inverter washing machine under ₱18,000, installation free of charge",
        "Inverter washing machine under ₱18,000, free installation and free shipping",
    ),
    # another most that may be spent
    (
        "product",
        "An air fryer from Dowell; 4k is the most I can spend.",
        "An air fryer from Dowell; 5k is the most I can spend.",
    ),
    # another term, the size still the product's
    (
        "voucher",
        "My voucher takes ₱50 off orders of ₱500 or more, and I want a 2 kg bag of dog food with it, spending at most ₱700.",
        "My voucher takes ₱80 off orders of ₱500 or more, and I want a 2 kg bag of dog food with it, spending at most ₱700.",
    ),
    # another ceiling said first, another count in dozens, a minimum where the other has none
    ("product", "My ceiling is 3k: a Baseus power bank, 20000mAh.", "My ceiling is 4k: a Baseus power bank, 20000mAh."),
    (
        "shop",
        "From one store: crayons in a box of two dozen, a sketchpad, and an easel.",
        "From one store: crayons in a box of one dozen, a sketchpad, and an easel.",
    ),
    (
        "voucher",
        "Can I use a voucher giving ₱80 off regardless of how much I spend on a hair dryer under ₱1,500?",
        "Can I use a voucher giving ₱80 off once I spend ₱1,000 on a hair dryer under ₱1,500?",
    ),
    # another thing under the same voucher said working, another ceiling "of"
    (
        "voucher",
        "A voucher knocking ₱200 off orders of 2k or more, used on a steam iron costing less than ₱2,800.",
        "A voucher knocking ₱200 off orders of 2k or more, used on a garment steamer costing less than ₱2,800.",
    ),
    ("product", "With a ceiling of 12k, a Canon inkjet printer", "With a ceiling of 15k, a Canon inkjet printer"),
    # a floor said as the least expected, a brand corrected to the other one
    (
        "product",
        "A Sony soundbar; ₱8,000 is the most I'll spend.",
        "A Sony soundbar; ₱8,000 is the least I expect to pay for a real one.",
    ),
    (
        "product",
        "A Xiaomi air purifier — scratch that — Sharp, under ₱9,000.",
        "A Sharp air purifier — scratch that — Xiaomi, under ₱9,000.",
    ),
    # a bound for each item against one for the whole list
    (
        "shop",
        "From one shop: a desk lamp, a desk organizer and a mouse pad, each under ₱500.",
        "From one shop: a desk lamp, a desk organizer and a mouse pad, all three together under ₱500.",
    ),
    ("product", "Two white bath towels under ₱400 each", "Two white bath towels under ₱400 for the pair"),
    # another warranty, written out
    (
        "product",
        "Rice cooker with a one-year warranty, under ₱1,500",
        "Rice cooker with a two-year warranty, under ₱1,500",
    ),
    # another fact, the same price in the same words
    (
        "knowledge",
        "Keychain engraved with how many bones an adult human has, below ₱150.",
        "Keychain engraved with how many teeth an adult human has, below ₱150.",
    ),
    (
        "knowledge",
        "A poster of the first person who set foot on the Moon, under ₱400.",
        "A poster of the first person who orbited the Earth, under ₱400.",
    ),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_generator_sentence_is_one_ask(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_another_constraint_in_such_sentences_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


@pytest.mark.parametrize(
    ("query", "thing"),
    [
        ("The year the Berlin Wall fell should appear on a ceramic mug costing under ₱350.", "mug"),
        ("The author of Florante at Laura should be the subject of a bookmark set under ₱90.", "bookmark"),
        ("Whoever painted the Mona Lisa: their name should be printed on a tote bag, under ₱250.", "tote"),
    ],
)
def test_a_riddle_buys_the_thing_its_answer_is_put_on(query, thing):
    purchase = read_query(query, "knowledge").purchase
    assert thing in purchase, purchase


def test_a_riddles_price_is_no_part_of_its_fact():
    words = [
        set(read_query(q, "knowledge").clue.words)  # type: ignore[union-attr]
        for q in (
            "Find a mug printed with the year the Titanic sank, priced under ₱1,200.",
            "Below twelve hundred pesos: a mug with the year the Titanic sank on it.",
        )
    ]
    assert words[0] == words[1] or words[0] ^ words[1] <= {"mug"}, words
    assert "1200" in words[0] and not {"1", "200", "twelve", "hundred", "below"} & (words[0] | words[1])
