"""The catalog frame: every product in product-id order, so sampling repeats on any build.

tantivy places documents in segments in an order that changes between builds
of the same catalog, so sampling by document address would not repeat; the
frame lists the catalog in product-id order, which makes the same seed give
the same problems on any build.
"""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import orjson
import tantivy

from arena.shop.product import Product
from arena.shop.readonly_index import open_index

_FIELDS = set(Product.model_fields)


class GenerationError(RuntimeError):
    """The catalog or the request cannot yield the problems asked for.

    Defined here, in the lowest module that raises it (an empty catalog); the generator raises it too."""


FrameState = tuple[array, dict[str, array]]


class CatalogFrame:
    """Every product's document address in product-id order, and each shop's products.

    Built by one pass over the stored records (about 1 s per 100k products);
    after that sampling a product or listing a shop costs no search.
    """

    def __init__(self, path: str | Path, state: FrameState | None = None) -> None:
        self.path = Path(path)
        self._searcher = open_index(self.path).searcher()
        self._order, self._shops = state if state is not None else self._scan()
        if not self._order:
            raise GenerationError(f"catalog {self.path} is empty")

    def _scan(self) -> FrameState:
        s = self._searcher
        hits = s.search(tantivy.Query.all_query(), limit=max(1, s.num_docs), count=False).hits
        ids: list[str] = []
        shops: list[str] = []
        interned: dict[str, str] = {}
        packed = array("q")
        for _, address in hits:
            product_id, shop_id = _record_keys(s.doc(address)["record"][0])
            ids.append(product_id)
            shops.append(interned.setdefault(shop_id, shop_id))
            packed.append((address.segment_ord << 32) | address.doc)
        order = sorted(range(len(ids)), key=ids.__getitem__)
        by_shop: dict[str, array] = {}
        for position, i in enumerate(order):
            by_shop.setdefault(shops[i], array("l")).append(position)
        return array("q", (packed[i] for i in order)), by_shop

    @property
    def state(self) -> FrameState:
        """Picklable, so worker processes reuse the scan instead of repeating it."""
        return self._order, self._shops

    def __len__(self) -> int:
        return len(self._order)

    def product(self, position: int) -> Product:
        packed = self._order[position]
        record = self._searcher.doc(tantivy.DocAddress(packed >> 32, packed & 0xFFFFFFFF))["record"][0]
        # Validated when the index was built (as CatalogIndex.get trusts it too).
        return Product.model_construct(**{k: v for k, v in orjson.loads(record).items() if k in _FIELDS})

    def sample(self, rng: random.Random) -> Product:
        return self.product(rng.randrange(len(self._order)))

    def shop_positions(self, shop_id: str) -> array:
        """Frame positions of every product of one shop, in product-id order."""
        return self._shops.get(shop_id, array("l"))


def _record_keys(record: bytes) -> tuple[str, str]:
    # Records are orjson dumps of Product: product_id then shop_id. Parse fully only if not.
    head = b'{"product_id":"'
    if record.startswith(head):
        end = record.find(b'"', len(head))
        rest = record[end : end + 13]
        if rest == b'","shop_id":"':
            stop = record.find(b'"', end + 13)
            return record[len(head) : end].decode(), record[end + 13 : stop].decode()
    fields = orjson.loads(record)
    return str(fields["product_id"]), str(fields.get("shop_id", ""))
