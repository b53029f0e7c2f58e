"""How the veto reads constraints written as people write them (issue 31): ranges with the
currency beside each amount, bounds turned around by a negation, a budget named without a
currency, services said as sentences. Each class is checked on several phrasings, and each
against the same constraint written plainly: the two must not conflict, another value must."""

from __future__ import annotations

import pytest

from arena.problems.official import parse_row
from arena.problems.twins import conflict, read_request


def _read(query: str, intent: str = "product"):
    return read_request(parse_row({"id": "x", "query": query, "intent": intent}, query_only=True))


def _bounds(query: str) -> set[tuple[str, float]]:
    """The bounds as half-intervals: a range is its lower and its upper bound."""
    found: set[tuple[str, float]] = set()
    for direction, value, second in _read(query).whole.prices:
        if direction == "btw":
            found |= {("gt", value), ("lt", second)}
        else:
            found.add((direction, value))
    return found


# --- ranges ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "a hair mask, budget: thirty-five pesos to eighty-six pesos",
        "a hair mask. I can spend between 35 pesos and 86 pesos.",
        "a hair mask between ₱35 and ₱86",
        "a hair mask from 35 PHP to 86 PHP",
        "a hair mask, 35.00 pesos to 86.00 pesos",
        "a hair mask for no less than 35 pesos and no more than 86 pesos",
        "a hair mask priced at least thirty-five pesos but under eighty-six pesos",
        "a hair mask with a budget of PHP35 to PHP86",
    ],
)
def test_a_range_reads_as_its_two_bounds_whatever_the_currency_placement(query):
    assert _bounds(query) == {("gt", 35.0), ("lt", 86.0)}
    assert conflict(_read(query), _read("a hair mask priced between 35 and 86")) is None
    assert conflict(_read(query), _read("a hair mask priced between 35 and 90")) is not None


def test_and_between_two_amounts_is_a_range_only_after_between():
    # "each under 500 pesos and 2 kg dumbbells": the amounts of two constraints, not a range.
    assert ("btw", 2.0, 500.0) not in _read("a yoga mat under 500 pesos and a pair of 2 kg dumbbells").whole.prices


# --- negation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "a lip tint. Nothing cheaper than forty-four pesos.",
        "a lip tint not cheaper than PHP44",
        "a lip tint, nothing below 44 pesos",
        "a lip tint; I won't go under ₱44",
    ],
)
def test_a_negated_upper_bound_is_a_lower_bound(query):
    assert _bounds(query) == {("gt", 44.0)}


@pytest.mark.parametrize(
    "query",
    [
        "a backpack. Don't show anything at 1000 pesos or above.",
        "a backpack; it should not cost 1,000 PHP or more",
        "a backpack, neither option should cost 1000 pesos or more",
        "a backpack. I won't go above ₱1000.",
        "a backpack, without going over one thousand pesos",
        "a backpack, I don't want to spend 1000 pesos or more",
    ],
)
def test_a_negated_lower_bound_is_an_upper_bound(query):
    assert _bounds(query) == {("lt", 1000.0)}


def test_a_negation_elsewhere_in_the_sentence_turns_nothing_around():
    assert _bounds("a backpack with no logo, under 1000 pesos") == {("lt", 1000.0)}
    assert _bounds("no leather please, over 1000 pesos") == {("gt", 1000.0)}
    assert _bounds("an orange suitcase, not expandable, priced above 1303 PHP") == {("gt", 1303.0)}


# --- a budget without a currency -------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "a frying pan. Budget is one thousand two hundred.",
        "a frying pan, max spend twelve hundred",
        "a frying pan, spending limit 1.2k",
        "a frying pan. My limit is 1,200.",
        "a frying pan, I can spend 1200 at most",
    ],
)
def test_a_budget_named_without_a_currency_is_an_upper_bound(query):
    assert _bounds(query) == {("lt", 1200.0)}
    assert conflict(_read(query), _read("a frying pan under 1200 pesos")) is None
    assert conflict(_read(query), _read("a frying pan under 1500 pesos")) is not None


# --- services said as sentences --------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "a capo. I don't want to pay for delivery.",
        "a capo; shipping has to be free",
        "a capo, shipping should be free",
        "a capo delivered at no shipping cost",
        "a capo shipped free of charge",
        "a capo, it must ship free",
        "a capo with zero delivery fee",
        "a capo, I'd rather not pay for shipping",
        "a capo, delivery must be free",
    ],
)
def test_free_shipping_said_as_a_sentence(query):
    reading = _read(query).whole
    assert reading.services == ("freeShipping",)
    assert conflict(_read(query), _read("a capo with free shipping")) is None
    assert conflict(_read(query), _read("a capo with cash on delivery")) is not None


@pytest.mark.parametrize(
    "query",
    [
        "a tank top payable in cash on arrival",
        "a tank top; I'll pay cash when it arrives",
        "a tank top, I want to pay upon delivery",
        "a tank top with the option to pay cash on delivery",
        "a tank top, COD has to be an option",
        "a tank top, payment upon receipt please",
    ],
)
def test_cash_on_delivery_said_as_a_sentence(query):
    assert _read(query).whole.services == ("COD",)
    assert conflict(_read(query), _read("a tank top with cash on delivery")) is None


@pytest.mark.parametrize(
    "query",
    ["a BPA-free bottle with fast delivery", "a free-standing rack, delivery to Cebu", "a sugar-free syrup, shipping"],
)
def test_free_near_a_delivery_word_is_not_a_service_unless_it_says_so(query):
    assert _read(query).whole.services == ()


# --- what a request rules out, and corrections -----------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("a blue 2-seater fabric sofa", "I want a sofa. Two seater. Fabric material not leather. Blue colour."),
        (
            "a 2.5L dog water fountain, cash on delivery",
            "i dont have a card so need cash on delivery, 2.5 liter dog water fountain",
        ),
        ("a plain white shirt", "a plain white shirt without any logo"),
    ],
)
def test_what_a_request_rules_out_is_not_asked_for(a, b):
    assert conflict(_read(a), _read(b)) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Uniqlo airism t-shirt white size M",
            "Uniqlo airism t-shirt white size M... no wait, get the H&M one instead",
        ),
        (
            "logitech wireless keyboard and mouse combo",
            "Logitech combo... actually make it a Rapoo wireless keyboard and mouse combo",
        ),
        ("a red ceramic mug", "a red ceramic mug, or rather make it blue"),
        # Tagalog's self-corrections: "ay mali" (oops, wrong), "este" (I mean)
        ("Lenovo laptop bag 15.6 inch", "Lenovo laptop bag, ay mali, Targus pala, 15.6 inch"),
        ("Acer monitor 24 inch", "Acer, este, Samsung na monitor 24 inch"),
    ],
)
def test_a_correction_replaces_what_it_corrects(a, b):
    assert conflict(_read(a), _read(b)) is not None


def test_a_correction_to_the_same_value_is_the_same_ask():
    assert conflict(_read("a Rapoo keyboard"), _read("a Logitech keyboard... actually make it Rapoo")) is None
    assert (
        conflict(_read("Targus laptop bag 15.6 inch"), _read("Lenovo laptop bag, ay mali, Targus pala, 15.6 inch"))
        is None
    )


# --- counts, sizes -----------------------------------------------------------------------------


def test_a_count_both_sides_say_is_no_price_so_a_bound_on_one_side_only_separates():
    plain = _read("a shop with a guitar capo, 10 guitar picks and a clip-on tuner", "shop")
    bounded = _read("a store: clip-on tuner, capo for guitar, ten guitar picks, each costing more than 50 PHP", "shop")
    assert "price" in (conflict(plain, bounded) or "")


@pytest.mark.parametrize(("letter", "word"), [("L", "large"), ("S", "small"), ("M", "medium")])
def test_a_size_letter_is_its_size_word(letter, word):
    assert conflict(_read(f"a men's rash guard size {letter}"), _read(f"a {word}-size rash guard for men")) is None
    assert conflict(_read(f"a men's rash guard size {letter}"), _read("an XL rash guard for men")) is not None


def test_a_brand_added_to_an_otherwise_equal_request_is_another_ask():
    assert "name" in (conflict(_read("Show me a Philips electric kettle 1.7L"), _read("an electric kettle 1.7L")) or "")
    # An unknown word in a reworded request is not a brand added: "no scent" is how "unscented" is said.
    assert conflict(_read("an unscented baby wipes pack"), _read("baby wipes pack, no scent, not perfumed")) is None


def test_no_before_a_value_is_the_value_asked():
    assert (
        conflict(
            _read("a rubber wheel with a no warranty warranty type"), _read("a rubber wheel, warranty type no warranty")
        )
        is None
    )


# --- prices said the way they are spoken -----------------------------------------------------


@pytest.mark.parametrize(
    ("spoken", "amount"),
    [
        ("one fifty pesos", 150.0),
        ("two-fifty pesos", 250.0),
        ("nine ninety-nine pesos", 999.0),
        ("seven seventy five php", 775.0),
    ],
)
def test_a_price_said_as_spoken_is_its_amount(spoken, amount):
    assert _bounds(f"a phone case under {spoken}") == {("lt", amount)}


def test_two_number_words_before_no_money_word_stay_two_numbers():
    assert 120.0 not in _read("one twenty-inch monitor").whole.others
