"""A shop list beside the same list told with its context: a label naming what the things are for
("Camping stuff", "school supplies"), who they are for ("For my Tita in Batangas, ..."), the kind of
shop ("from one baby store"), small talk ("hay naku", "we need a proper home for them"), an item named
with the other side's word as its detail ("a lanyard for ID cards" / "an ID lanyard holder"), or an item
named in a word the guard cannot read, items set apart by slashes. None of these is one more thing bought. Hand-written for the
sixteenth session (the dev pools named the classes; none of these sentences is from a pool). A list
with one more item beside its things, said as a near copy or reworded, is still another ask, and so is
one item replaced where the only word the two share is one said of every item ("baby wipes, baby powder"
/ "baby wipes, baby lotion")."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

ONE_ASK = [
    # a label: what the things are for
    (
        "Camping stuff, one seller: a 2-person tent, a sleeping bag and a headlamp.",
        "From one shop: a headlamp, a sleeping bag, and a tent for two.",
    ),
    (
        "Baking supplies from one store. Bread flour 1kg. Instant yeast, 3 sachets. A 9-inch loaf pan.",
        "Same store: a 9-inch loaf pan, 1kg bread flour and 3 sachets of instant yeast.",
    ),
    # who the things are for, in a phrase of its own
    (
        "For my Tita in Batangas, all from one store: a 5L water dispenser, 6 drinking glasses and a serving tray.",
        "One store: serving tray, 6 drinking glasses, water dispenser 5 liters.",
    ),
    (
        "For my Honda Click, one shop: an oil filter, a spark plug and a drive belt.",
        "Same shop: a spark plug, a drive belt and an oil filter.",
    ),
    # Taglish: "para sa" (for) and "pang" (for a use) open the purpose
    (
        "para sa bakery ko, isang shop lang: piping bags, a turntable at offset spatula",
        "One shop: a cake turntable, an offset spatula and piping bags.",
    ),
    (
        "isang shop lang, pang coffee shop: 12oz paper cups, lids at stirrers",
        "From one shop: 12 oz paper cups, cup lids and coffee stirrers.",
    ),
    # the kind of shop
    (
        "From one baby store: baby wipes, a feeding bottle and a bib.",
        "Same shop: a bib, baby wipes and a feeding bottle.",
    ),
    (
        "From one shop: a leash, a dog bowl and a dog bed.",
        "Customer wants a dog bed, a dog bowl and a leash, from a single pet store.",
    ),
    (
        "Hiking stuff, one seller only. A 30L daypack. Trekking poles, 1 pair. A headlamp.",
        "From one seller: trekking poles (a pair), a headlamp and a 30-liter daypack.",
    ),
    # small talk around the list
    (
        "Hay naku, the kids broke everything again. One shop please: 6 melamine bowls, 6 plastic cups and a jug.",
        "Same seller: a jug, 6 plastic cups and 6 melamine bowls.",
    ),
    # an item named with the other side's word as its detail
    (
        "One shop: a lanyard for ID cards, a clipboard and a stapler.",
        "Same store: clipboard, stapler, and an ID lanyard holder.",
    ),
    # items set apart by slashes
    (
        "Same shop: bath towel / hand towel / bath mat",
        "One seller: a bath mat, a hand towel and a bath towel.",
    ),
]

TWO_ASKS = [
    # one more item, a near copy
    (
        "One shop: a 2-person tent, a sleeping bag and a headlamp.",
        "One shop: a 2-person tent, a sleeping bag, a headlamp and a camping stove.",
    ),
    # one more item, reworded
    (
        "Camping stuff, one seller: a 2-person tent and a sleeping bag.",
        "From one shop: a headlamp, a sleeping bag, and a tent for two.",
    ),
    (
        "For my Tita in Batangas, all from one store: a 5L water dispenser and 6 drinking glasses.",
        "One store: serving tray, 6 drinking glasses, water dispenser 5 liters.",
    ),
    # the same shop kind, one item replaced
    (
        "From one baby store: baby wipes, a feeding bottle and a bib.",
        "From one baby store: baby wipes, a feeding bottle and a teether.",
    ),
    # a word said of every item is the list's, not a sign that an item was renamed
    (
        "Same shop: baby wipes, baby powder and baby oil.",
        "One seller: baby oil, baby lotion and baby wipes.",
    ),
    (
        "One shop / Cetaphil baby wash / Cetaphil baby lotion / Cetaphil baby shampoo",
        "Same store: Cetaphil baby wash, Cetaphil baby lotion, Cetaphil baby cream",
    ),
]


@pytest.mark.parametrize(("a", "b"), ONE_ASK)
def test_a_list_told_with_its_context_is_one_ask(a, b):
    assert veto(a, b, "shop") is None


@pytest.mark.parametrize(("a", "b"), TWO_ASKS)
def test_one_more_thing_beside_a_list_is_another_ask(a, b):
    assert veto(a, b, "shop") is not None
