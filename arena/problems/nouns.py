"""What a shopper calls a product, and which catalog values a shopper would ask for."""

from __future__ import annotations

import re

from arena.shop.product import Product
from arena.shop.vocabulary import LEAVES

_TOKEN = re.compile(r"[^\W_]+")
_MASS = frozenset({"food", "litter", "sand", "powder", "rice", "coffee", "oil", "tea", "milk", "water", "wipes"})
_JUNK = frozenset({"default", "others", "other", "none", "n/a", "na", "-", "no", "yes", "as picture"})


def _norm(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


_LEAF_NOUNS = {leaf.path: tuple(sorted(leaf.nouns, key=len, reverse=True)) for leaf in LEAVES}
_ALL_NOUNS = tuple(sorted({n for leaf in LEAVES for n in leaf.nouns}, key=lambda n: (-len(n), n)))
_NOUN_KEYS = {n: f" {_norm(n)} " for n in _ALL_NOUNS}


def usable_value(value: str) -> bool:
    """Values a shopper would not ask for ("default", "others") stay out of queries."""
    return bool(value.strip()) and value.strip().lower() not in _JUNK


def title_noun(product: Product) -> tuple[str, bool]:
    """The noun phrase a shopper would name the product by, and whether it takes "a/an".

    A known product noun found in the title wins (the synthetic vocabulary
    covers many official ones too: "rubber wheel", "phone case"); otherwise
    the leaf category when its words are in the title; otherwise the title's
    first words that are not the brand.
    """
    title = f" {_norm(product.title)} "
    for noun in (*_LEAF_NOUNS.get(product.category, ()), *_ALL_NOUNS):
        if _NOUN_KEYS[noun] in title:
            last = noun.rsplit(" ", 1)[-1]
            return noun, not (last.endswith("s") or last in _MASS)
    leaf = product.category.rsplit(">", 1)[-1].strip().lower()
    if leaf and all(f" {w} " in title for w in _norm(leaf).split()):
        return leaf, False
    brand = set(_norm(product.brand).split())
    words = [w for w in _TOKEN.findall(product.title.lower()) if w.isalpha() and w not in brand]
    return " ".join(words[:3]) or _norm(product.title)[:40] or "product", False
