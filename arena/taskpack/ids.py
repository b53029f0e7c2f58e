"""Fresh ids for a task pack's distractor, background and shop records, shaped like the gold ones.

Gold products keep their official ids (the tasks' rewards name them). Every other id
in the pack is drawn here so that an id's shape says nothing about which product is
gold: each fresh id copies the shape of a gold id picked at random (its length, its
first quarter of characters, digits where it has digits, letters where it has
letters) and draws the rest. So for every shape, fresh ids appear in proportion to
the gold ids of that shape, and P(gold | id) is the same whatever the id looks like.
Before this, gold ids were the only 9-digit ids of a pack and its distractors the only
ones in 1e9-6e9: an agent could pick the gold product by its id alone.

Only when a shape's space is used up (a tiny pack whose gold ids are "101", "102"...)
does a draw fall back to the wide range, which is then a tell; official ids are 9-10
digits and never get there. Every draw comes from the pack seed's generator.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterable

# Tries at a gold-like shape before the wide range: a shape is nearly full by then.
_SHAPE_TRIES = 32


class LookalikeIds:
    """Unique ids drawn with the shapes of ``like`` (or from ``wide`` when ``like`` is empty)."""

    def __init__(self, rng: random.Random, taken: set[str], wide: tuple[int, int]) -> None:
        self._rng, self.taken, self._wide = rng, taken, wide
        self._like: list[str] = []

    def imitate(self, ids: Iterable[str]) -> None:
        """Shape fresh ids like these (sorted: the draws must not depend on set order)."""
        self._like = sorted(set(ids))
        self.taken.update(self._like)

    def draw(self) -> str:
        for _ in range(_SHAPE_TRIES if self._like else 0):
            candidate = shaped_like(self._like[self._rng.randrange(len(self._like))], self._rng)
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        while True:
            candidate = str(self._rng.randrange(*self._wide))
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate


def shaped_like(reference: str, rng: random.Random) -> str:
    """A random id of the reference's shape: its first quarter kept, then a random digit for
    every digit (no leading zero where it had none) and a random letter for every letter."""
    keep = len(reference) // 4
    out = list(reference[:keep])
    for position in range(keep, len(reference)):
        char = reference[position]
        if char.isdigit() and char.isascii():
            first = position == 0 and char != "0"
            out.append(str(rng.randrange(1, 10) if first else rng.randrange(10)))
        elif char in string.ascii_lowercase:
            out.append(rng.choice(string.ascii_lowercase))
        elif char in string.ascii_uppercase:
            out.append(rng.choice(string.ascii_uppercase))
        else:
            out.append(char)
    return "".join(out)


class IdAllocator:
    """Fresh product and shop ids for a pack that collide with nothing already used.

    ``imitate`` gives the gold ids to imitate (see the module docstring). Background
    products and shops are renamed with ids from here too, so no id, and no shop a
    gold product is sold by, can be told apart by its range.
    """

    def __init__(self, seed: int) -> None:
        self._products = LookalikeIds(random.Random(f"{seed}:ids"), set(), (1_000_000_000, 6_000_000_000))
        self._shops = LookalikeIds(random.Random(f"{seed}:shop-ids"), set(), (1_000_000, 10_000_000))

    @property
    def products(self) -> set[str]:
        return self._products.taken

    @property
    def shops(self) -> set[str]:
        return self._shops.taken

    def imitate(self, products: Iterable[str], shops: Iterable[str]) -> None:
        self._products.imitate(products)
        self._shops.imitate(shops)

    def product(self) -> str:
        return self._products.draw()

    def shop(self) -> str:
        return self._shops.draw()
