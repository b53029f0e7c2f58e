"""A phrase table gives what the plain loop over its phrases gives, on the readers' own tables and on
tables built to trip an index of first words: a replacement that writes a later phrase's first word,
adjacent matches that share a space, a phrase that is no padded run of words."""

from __future__ import annotations

import pytest

from arena.problems.asks import JOINED_TABLE, PRICE_TABLE
from arena.problems.phrase_table import PhraseTable


def _loop(text: str, pairs: tuple[tuple[str, str], ...], repeat: bool) -> str:
    for phrase, new in pairs:
        if repeat:
            while phrase in text:
                text = text.replace(phrase, new)
        elif phrase in text:
            text = text.replace(phrase, new)
    return text


CHAIN = (
    (" no more than ", " lt "),
    (" power bank ", " bank power "),  # writes "bank" first: " bank power " is matched after it
    (" bank power ", " powerbank "),
    (" lt lt ", " lt "),
    (" a a ", " a "),  # adjacent matches share a space: only the while loop gets them all
    ("-", " "),  # no padded run: always tried
    (" x ", " by "),
    (" by by ", " by "),
)
TEXTS = (
    " a power bank no more than 500 ",
    " power bank power bank ",
    " a a a a a a b ",
    " no more than no more than 9 ",
    " 10 x x x 20 ",
    " usb-c power-bank ",
    " nothing here ",
    "",
    " bank power ",
    " lt  lt ",
)


@pytest.mark.parametrize("repeat", [False, True])
@pytest.mark.parametrize("text", TEXTS)
def test_a_built_table_replaces_as_the_loop(text, repeat):
    assert PhraseTable(CHAIN, repeat=repeat)(text) == _loop(text, CHAIN, repeat)


@pytest.mark.parametrize(
    "text",
    [
        " a power bank and a phone case not more than php 1500 each and at least 10000 mah ",
        " no more than no more than at most up to 300 ",
        " a t shirt and a t shirt bag and more than 200 or less ",
        " wont cost more than 900 and not over 5 ",
        " ",
    ],
)
def test_the_readers_tables_replace_as_the_loop(text):
    assert JOINED_TABLE(text) == _loop(text, JOINED_TABLE.pairs, False)
    assert PRICE_TABLE(text) == _loop(text, PRICE_TABLE.pairs, True)
    # Every phrase of each table said alone and beside another is replaced as the loop does.
    for table, repeat in ((JOINED_TABLE, False), (PRICE_TABLE, True)):
        for phrase, _ in table.pairs[::7]:
            said = f"{text}{phrase.strip()} {table.pairs[0][0].strip()} 5 "
            assert table(said) == _loop(said, table.pairs, repeat)


def _loop_applied(text: str, pairs: tuple[tuple[str, str], ...], new) -> tuple[str, tuple[int, ...]]:
    applied = []
    for k, (phrase, value) in enumerate(pairs):
        if phrase in text:
            text = text.replace(phrase, new(value))
            applied.append(k)
    return text, tuple(applied)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(
    "new",
    [lambda value: " ", lambda value: f" tag{value.strip()} ", lambda value: value],
    ids=["blank", "tagged", "itself"],
)
def test_the_phrases_replaced_are_those_the_loop_replaces(text, new):
    assert PhraseTable(CHAIN).replace(text, new) == _loop_applied(text, CHAIN, new)
