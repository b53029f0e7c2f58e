"""What the rest of the system needs from a catalog: product lookup by id."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from arena.shop.product import Product


class ProductLookup(Protocol):
    def get(self, product_id: str) -> Product | None:
        """The product with this id, or None; never a scan."""
        ...


class InMemoryCatalog:
    """A dict-backed catalog for small document files and tests."""

    def __init__(self, products: Iterable[Product]) -> None:
        self._by_id = {p.product_id: p for p in products}

    def get(self, product_id: str) -> Product | None:
        return self._by_id.get(product_id)

    def __len__(self) -> int:
        return len(self._by_id)


def open_catalog(path: str | Path) -> ProductLookup:
    """A built index directory, or a ``documents.jsonl[.gz]`` file read into memory."""
    from arena.shop.documents import iter_documents
    from arena.shop.index import CatalogIndex

    path = Path(path)
    if path.is_dir():
        return CatalogIndex(path)
    if path.is_file():
        return InMemoryCatalog(iter_documents(path))
    raise FileNotFoundError(f"catalog {path} does not exist (give an index directory or a documents.jsonl[.gz])")
