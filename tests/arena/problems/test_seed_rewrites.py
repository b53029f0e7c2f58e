"""A benchmark's seed task beside the same task as a shopper retypes it: what the item is for said in a
purpose phrase ("for our sari-sari store", "for my home bakery business"), a typo in a short word or in a
colour ("frsh", "yelow"), a word written with or without its hyphen ("wifi" / "Wi-Fi"), an acronym said
out ("SSD" / "solid state drive"), a size said "about ... tall". Hand-written
for the fifteenth session (pool 59 named the classes; none of these sentences is from a pool). A
benchmark's voucher task states its rules as a numbered list, which the shopper says in a sentence: a
fraction off ("knocks off a fifth of the total"), the budget said as what the shopper is capped at; the
list's numbers are no terms. An item
bought for the thing the seed names ("a replacement filter for my air purifier", "original ink bottles
for my printer"), another word one letter away that is a word of its own ("hard case" / "card case") and
another acronym ("HDD" / "SSD") are still other asks."""

from __future__ import annotations

import pytest

from arena.problems.clusters import cluster_problems
from arena.problems.official import parse_row
from tests.support.veto_cases import veto

ONE_ASK = [
    # what it is for, said in a purpose phrase the seed does not have
    (
        "product",
        "Acrylic price tag holders, pack of 20, for our sari-sari store, under ₱300",
        "Acrylic price tag holders, pack of 20, under ₱300",
    ),
    (
        "product",
        "Silicone baking mat, 40 x 30 cm, for my home bakery business",
        "Silicone baking mat 40 x 30 cm",
    ),
    (
        "product",
        "Round wall clock, 30 cm, silent sweep, for our school faculty room, under ₱600",
        "Silent-sweep round wall clock 30cm below ₱600",
    ),
    # a typo in a short word, and in a colour
    ("product", "USB flash drive 64GB, metal casing, frsh stock", "USB flash drive 64GB, metal casing, fresh stock"),
    ("product", "Kids raincoat, yelow, size 6, under ₱500", "Yellow kids raincoat size 6 under ₱500"),
    ("product", "Plain tee, whte, size M, cotton, under ₱250", "White cotton plain tee in size M, below ₱250"),
    # a word with and without its hyphen
    ("product", "Inkjet printer with wifi, under ₱6,000", "Inkjet printer with Wi-Fi, under ₱6,000"),
    # an acronym said out in full
    (
        "product",
        "Laptop with a 512GB SSD and 16GB RAM, under ₱40,000",
        "Laptop with a 512GB solid state drive and 16GB RAM, under ₱40,000",
    ),
    # a size said "about ... tall": the size is what is asked
    ("product", "A white ceramic vase about 30 cm tall, under ₱700", "White ceramic vase, 30cm, below ₱700"),
    # a pack, a set or a pair that holds the count it names: how many, not another thing (these held
    # on the session start too; pool 59's pairs failed with other words replaced beside the pack)
    ("product", "Diapers, size L, a pack of 60", "60 size L diapers in a pack"),
    (
        "shop",
        "One shop: a pack of 6 microfiber cloths, a spray bottle and a squeegee",
        "Same shop: 6 microfiber cloths in a pack, a squeegee, a spray bottle",
    ),
    # a notebook's leaves (no verb), the installation the shopper needs done, a count said as "make up"
    ("product", "A5 dotted notebook, 80 leaves, under ₱150", "80-leaf A5 dotted notebook below ₱150"),
    (
        "product",
        "Split-type aircon 1HP, inverter, with installation service, under ₱25,000",
        "I want a 1HP inverter split-type aircon, below ₱25,000. I also need it installed for me.",
    ),
    (
        "knowledge",
        "How many keys are there on a standard piano? I would like to purchase a wall clock from Seiko with this "
        "many minute marks.",
        "How many keys make up a standard piano? I would like to purchase a Seiko wall clock with this number of "
        "minute marks.",
    ),
]

TWO_ASKS = [
    # something bought for the thing the other side buys
    ("product", "A replacement filter for my Sharp air purifier, under ₱1,500", "A Sharp air purifier, under ₱1,500"),
    (
        "product",
        "Original ink bottles for my Epson L3210 printer, from the official store",
        "Epson L3210 printer from the official store",
    ),
    ("product", "Phone case, clear, for my iPhone 15, under ₱300", "Phone case, clear, for my iPhone 14, under ₱300"),
    # one letter away, and a word of its own
    ("product", "Hard case for Nintendo Switch, black, under ₱600", "Card case for Nintendo Switch, black, under ₱600"),
    ("product", "Kids raincoat, yellow, size 6, under ₱500", "Kids raincoat, yellow, size 8, under ₱500"),
    ("product", "Kids raincoat, yelow, size 6, under ₱500", "Kids raincoat, blue, size 6, under ₱500"),
    ("product", "Plain tee, whte, size M, cotton, under ₱250", "Plain tee, white, size M, polyester, under ₱250"),
    # another acronym, another thing spelled out
    ("product", "2TB external HDD, USB 3.0, under ₱4,000", "2TB external SSD, USB 3.0, under ₱4,000"),
    (
        "product",
        "Laptop with a 512GB SSD and 16GB RAM, under ₱40,000",
        "Laptop with a 512GB hard disk drive and 16GB RAM, under ₱40,000",
    ),
    # a set that holds no count is the set bought
    ("product", "Stainless kitchen knife set, 5 pieces, under ₱900", "Stainless kitchen knife, under ₱900"),
    # another count of leaves; a riddle asking another count
    ("product", "A5 dotted notebook, 80 leaves, under ₱150", "A5 dotted notebook, 100 leaves, under ₱150"),
    (
        "knowledge",
        "How many keys make up a standard piano? I would like to purchase a Seiko wall clock with this number of "
        "minute marks.",
        "How many strings make up a standard guitar? I would like to purchase a Seiko wall clock with this number "
        "of minute marks.",
    ),
    # a size and "about" a size apart
    ("product", "A white ceramic vase about 30 cm tall, under ₱700", "White ceramic vase, 40cm, below ₱700"),
]


def rules(ask: str, budget: int, threshold: int, discount: str) -> str:
    """A voucher task as the benchmark writes it: the ask, then the budget and the numbered rules."""
    return (
        f"{ask}\n\nMy budget is only `{budget}`, but I have a voucher with the following rules:\n"
        "1. The voucher applies to all products.\n"
        f"2. It is valid only when the total price of the products exceeds `{threshold}`.\n3. {discount}"
    )


PITCHER = "I'm looking for a 2L glass pitcher."
BOARD = "I'm looking for a bamboo cutting board."
TENTH = "It provides a percentage discount of `10%` with a cap of `200`."

VOUCHER_ONE_ASK = [
    (
        rules(PITCHER, 900, 500, "It provides a percentage discount of `20%` with a cap of `100`."),
        "2L glass pitcher, budget ₱900. My coupon knocks off a fifth of the total, ₱100 at most, on anything, "
        "once I spend over ₱500.",
    ),
    (
        rules(BOARD, 3000, 1500, TENTH),
        "Bamboo cutting board please. I'm capped at 3k overall. Voucher: 10% off up to ₱200 when the cart passes "
        "₱1,500, any product.",
    ),
    (
        rules(BOARD, 3000, 1500, TENTH),
        "Bamboo cutting board, budget 3k. My coupon takes off a tenth of the price, never more than ₱200, any "
        "product, once the basket is over ₱1,500.",
    ),
]

VOUCHER_ONE_ASK += [
    # a percent of the product's ("70% isopropyl alcohol", "100% cotton") is no voucher's term
    (
        rules(
            "I'm looking for a box of 100 face masks and a 1L bottle of isopropyl alcohol, 70 percent solution.",
            600,
            300,
            "It provides a fixed discount of `30`.",
        ),
        "Face masks, box of 100, plus a 1L bottle of 70% isopropyl alcohol. Budget ₱600. I have ₱30 off on any "
        "product once the order is more than ₱300.",
    ),
    (
        rules(
            "I'm looking for a 4-pack of white cotton bath towels.",
            1100,
            700,
            "It provides a percentage discount of `10%` with a cap of `80`.",
        ),
        "White 100% cotton bath towels, 4 in a pack. Budget ₱1,100. Voucher is 10% off (₱80 cap), any product, "
        "needs a total above ₱700.",
    ),
]

VOUCHER_TWO_ASKS = [
    (
        rules(PITCHER, 900, 500, "It provides a percentage discount of `25%` with a cap of `100`."),
        "2L glass pitcher, budget ₱900. My coupon knocks off a fifth of the total, ₱100 at most, on anything, "
        "once I spend over ₱500.",
    ),
    (
        rules(BOARD, 4000, 1500, TENTH),
        "Bamboo cutting board please. I'm capped at 3k overall. Voucher: 10% off up to ₱200 when the cart passes "
        "₱1,500, any product.",
    ),
    (
        rules(BOARD, 3000, 1500, TENTH),
        "Bamboo cutting board please. Budget 3k. Voucher: 10% off, capped at ₱300, when the cart passes ₱1,500, "
        "any product.",
    ),
    (
        rules(
            "I'm looking for a 4-pack of white cotton bath towels.",
            1100,
            700,
            "It provides a percentage discount of `10%` with a cap of `80`.",
        ),
        "White 100% cotton bath towels, 4 in a pack. Budget ₱1,100. Voucher is ₱80 off, any product, needs a total "
        "above ₱700.",
    ),
]


@pytest.mark.parametrize(("a", "b"), VOUCHER_ONE_ASK)
def test_a_voucher_task_retyped_is_one_ask(a, b):
    assert veto(a, b, "voucher") is None


@pytest.mark.parametrize(("a", "b"), VOUCHER_TWO_ASKS)
def test_another_term_beside_a_retyped_voucher_task_is_another_ask(a, b):
    assert veto(a, b, "voucher") is not None


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_retyped_seed_is_one_ask(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_another_constraint_beside_a_retyped_seed_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None


# A phrase of plain words one side adds ("..., for lunches at the construction site") keeps that pair
# apart, but not the rewording out of the cluster its seed and another rewording form; a copy edited
# into another ask (another number of layers) still binds against every member.
LUNCH_BOX = "Stainless steel lunch box, 2 layers, 1.2 L, leak-proof, under ₱600"
LUNCH_BOX_REWORDED = "Leak-proof stainless steel lunch box, 2 layers, 1.2 litres, below ₱600"
LUNCH_BOX_STORY = "Stainless steel lunch box, 2 layers, 1.2 L, leak-proof, under ₱600, lunches at the construction site"
LUNCH_BOX_TWIN = "Stainless steel lunch box, 3 layers, 1.2 L, leak-proof, under ₱600"


def test_a_phrase_added_keeps_its_pair_apart_but_binds_no_cluster():
    from arena.problems.twins import PAIR_ONLY

    assert (veto(LUNCH_BOX, LUNCH_BOX_STORY) or "").startswith(PAIR_ONLY)
    assert veto(LUNCH_BOX_REWORDED, LUNCH_BOX_STORY) is None
    assert veto(LUNCH_BOX, LUNCH_BOX_REWORDED) is None
    texts = [LUNCH_BOX, LUNCH_BOX_REWORDED, LUNCH_BOX_STORY, LUNCH_BOX_TWIN]
    problems = [
        parse_row({"id": f"p{k}", "query": q, "intent": "product"}, query_only=True) for k, q in enumerate(texts)
    ]
    cluster_of = cluster_problems(problems).cluster_of
    assert cluster_of["p0"] == cluster_of["p1"] == cluster_of["p2"]
    assert cluster_of["p3"] != cluster_of["p0"]


def test_a_near_copy_with_a_phrase_added_binds():
    # At PHRASE_BINDS of the sentence kept or more, a phrase added is one copy edited.
    found = veto(
        "Stainless steel lunch box with 2 layers, 1.2 L capacity, leak-proof lid, BPA-free, under ₱600, COD",
        "Stainless steel lunch box with 2 layers, 1.2 L capacity, leak-proof lid, BPA-free, insulated carry bag, "
        "under ₱600, COD",
    )
    assert found is not None and found.startswith("edited")
