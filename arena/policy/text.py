"""Words of a shopping request: tokens, a light stemmer, and the boilerplate that is not worth searching."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+(?:[:/.\-'][a-z0-9]+)*")

# Request boilerplate: words that say "I want to shop", never what to buy.
FILLER = frozenset(
    """
    a an and are as at be but by for if in into is it of on or such that the their then there these they this
    to was will with i i'm im me my we you your can could would should please show find looking look search
    searching need want like get buy purchase some any options option available item items product products
    offer offers offering offered sell sells selling shop shops store stores seller sellers also both
    all which who whose what where when how also either other another one ones priced price prices cost costs
    costing pesos peso php p budget thing things from up than more less over under above below between
    made comes come coming has have having include includes including category categories provides provide
    providing type types kind kinds sort each well plus just only am s its do does it's while should respective
    that's preferably ideally especially still around interested purchasing getting perks perk deals deal
    promotion promotions promo benefits authenticity guarantee guaranteed returns services service variety range
    size sizes sized color colors colour colours pattern patterns style styles design designs material materials
    brand brands model models perfect suitable everyday features feature look looks option thanks thank help
    recommend recommendation suggest let know got
    """.split()
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens, keeping ids like ``eu:30``, ``g1/2`` and ``cbr150-r`` whole."""
    return _WORD.findall(text.lower().replace("’", "'"))


def stem(word: str) -> str:
    """A light plural stemmer: enough to match "wheels" with "wheel" without a library."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def keywords(text: str) -> list[str]:
    """The words of a request worth searching for, in order, each once."""
    out: list[str] = []
    for word in words(text):
        word = word[:-2] if word.endswith("'s") else word
        if word in FILLER or len(word) < 2 and not word.isdigit():
            continue
        if word not in out:
            out.append(word)
    return out


def normalized(text: str) -> str:
    """Words joined by single spaces, for phrase containment tests."""
    return " " + " ".join(words(text)) + " "
