"""The catalog frame: every product in product-id order, so sampling repeats on any build.

Sampling by index address would tie the problems to how the catalog file was ordered;
the frame lists the catalog in product-id order (the index keeps that order as a
column), which makes the same seed give the same problems from any ordering of the
same products.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from arena.shop.index import CatalogIndex
from arena.shop.product import Product


class GenerationError(RuntimeError):
    """The catalog or the request cannot yield the problems asked for.

    Defined here, in the lowest module that raises it (an empty catalog); the generator raises it too."""


FrameState = tuple[np.ndarray, dict[str, np.ndarray]]


class CatalogFrame:
    """Every product's index address in product-id order, and each shop's products.

    Read from the index's id-order and shop columns (no record is decoded); after that
    sampling a product or listing a shop costs no search.
    """

    def __init__(self, path: str | Path, state: FrameState | None = None) -> None:
        self.path = Path(path)
        self._catalog = CatalogIndex(self.path)
        self._order, self._shops = state if state is not None else self._scan()
        if not len(self._order):
            raise GenerationError(f"catalog {self.path} is empty")

    def _scan(self) -> FrameState:
        order = np.array(self._catalog.by_id(), dtype=np.int64)
        codes = np.asarray(self._catalog.shop_codes())[order]
        # A stable sort by shop keeps each shop's frame positions in id order.
        grouped = np.argsort(codes, kind="stable")
        bounds = np.flatnonzero(np.diff(codes[grouped])) + 1
        by_shop = {
            self._catalog.shop_name(int(codes[part[0]])): part for part in np.split(grouped, bounds) if len(part)
        }
        return order, by_shop

    @property
    def state(self) -> FrameState:
        """Picklable, so worker processes reuse the scan instead of repeating it."""
        return self._order, self._shops

    def __len__(self) -> int:
        return len(self._order)

    def product(self, position: int) -> Product:
        return self._catalog.record(int(self._order[position]))

    def sample(self, rng: random.Random) -> Product:
        return self.product(rng.randrange(len(self._order)))

    def shop_positions(self, shop_id: str) -> list[int]:
        """Frame positions of every product of one shop, in product-id order."""
        found = self._shops.get(shop_id)
        return [] if found is None else found.tolist()
