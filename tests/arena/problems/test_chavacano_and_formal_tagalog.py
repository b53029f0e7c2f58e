"""Requests in Chavacano (Zamboanga's Spanish-based creole) and in formal Tagalog: the words that frame
an ask ("Quiere yo compra un ...", "Tiene ba kamo ...", "Nais kong bumili ng ...", "Mangyaring hanapan
ako ng ..."), colours and things in Spanish words ("negro", "mochila"), Spanish numbers ("mil
doscientos", "ochocientos"), bounds ("no más de", "pa abajo", "el máximo", "o mas mababa pa", "ang
pinakamataas"), and formal Tagalog's own words ("bughaw", "libreng pagpapadala"). Hand-written from
general knowledge of the languages, none from a labelled pool. Two different things, colours or
amounts in those words are still two asks: a Chavacano request read as names alone would merge them."""

from __future__ import annotations

import pytest

from tests.support.veto_cases import veto

ONE_ASK = [
    ("product", "Quiere yo compra un mochila negro, no más de ochocientos pesos", "Black backpack, up to ₱800"),
    (
        "product",
        "Tiene ba kamo electric fan blanco, 16 inch, hasta mil doscientos pesos?",
        "White electric fan 16 inch, up to ₱1,200",
    ),
    ("product", "Busca kamo rice cooker de 1 litro, de mil pesos pa abajo", "Rice cooker 1 liter, ₱1,000 or less"),
    (
        "product",
        "Quiere yo compra reloj de cuero marron, dos mil quinientos pesos el máximo",
        "Brown leather watch, max ₱2,500",
    ),
    (
        "product",
        "Quiere yo compra zapatos de cuero negro para hombre, talla 42, con envío gratis",
        "Men's black leather shoes size 42 with free shipping",
    ),
    (
        "product",
        "Nais kong bumili ng bughaw na payong, hindi hihigit sa tatlong daang piso",
        "Blue umbrella, not more than ₱300",
    ),
    (
        "product",
        "Mangyaring hanapan ako ng kayumangging sinturon na katad, ₱500 o mas mababa pa",
        "Brown leather belt, ₱500 or less",
    ),
    (
        "product",
        "Nais ko ng tumbler na stainless, apatnapung onsa, ₱700 ang pinakamataas",
        "Stainless tumbler 40 oz, up to ₱700",
    ),
    ("product", "Nais kong bumili ng electric kettle na may libreng pagpapadala", "Electric kettle with free shipping"),
    ("product", "Mangyaring hanapan ako ng relong pilak para sa lalaki", "Silver men's watch"),
]

TWO_ASKS = [
    (
        "product",
        "Quiere yo compra un mochila negro, no más de ochocientos pesos",
        "Quiere yo compra un silla negro, no más de ochocientos pesos",
    ),
    (
        "product",
        "Quiere yo compra un mochila negro, no más de ochocientos pesos",
        "Quiere yo compra un mochila azul, no más de ochocientos pesos",
    ),
    (
        "product",
        "Quiere yo compra un mochila negro, no más de ochocientos pesos",
        "Quiere yo compra un mochila negro, no más de quinientos pesos",
    ),
    (
        "product",
        "Tiene ba kamo electric fan blanco, hasta mil doscientos pesos?",
        "Tiene ba kamo electric fan blanco, hasta mil pesos?",
    ),
    ("product", "Nais kong bumili ng bughaw na payong", "Nais kong bumili ng luntiang payong"),
    ("product", "Mangyaring hanapan ako ng relong pilak", "Mangyaring hanapan ako ng relong ginto"),
]


@pytest.mark.parametrize(("intent", "a", "b"), ONE_ASK)
def test_a_chavacano_or_formal_tagalog_wording_is_the_same_ask(intent, a, b):
    assert veto(a, b, intent) is None


@pytest.mark.parametrize(("intent", "a", "b"), TWO_ASKS)
def test_another_thing_colour_or_amount_in_those_words_is_another_ask(intent, a, b):
    assert veto(a, b, intent) is not None
