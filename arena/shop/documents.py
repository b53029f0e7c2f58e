"""Stream the official ``documents.jsonl[.gz]`` (Lucene JsonCollection rows).

Each row is ``{"id", "contents", "product": {...}}``. Reading is constant
memory per row. A row that cannot be read is never dropped silently: it is
either recorded in the ``LoadReport`` with its line number (``strict=False``)
or stops the load with a ``DocumentError`` that names the line.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path

import orjson
from pydantic import BaseModel, Field, ValidationError

from arena.shop.product import Product

MAX_REPORTED_ERRORS = 50


class DocumentError(ValueError):
    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path, self.line, self.reason = path, line, reason


class LoadReport(BaseModel):
    """What a load read and what it skipped (with reasons, first few kept)."""

    path: str
    read: int = 0
    skipped: int = 0
    errors: list[str] = Field(default_factory=list)

    def record(self, error: DocumentError) -> None:
        self.skipped += 1
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append(str(error))


def open_text(path: str | Path) -> io.BufferedIOBase:
    path = Path(path)
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def parse_document(raw: bytes) -> Product:
    """One document row -> Product; raises ValueError with the reason."""
    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(row, dict):
        raise ValueError("row is not a JSON object")
    product = row.get("product")
    if not isinstance(product, dict):
        raise ValueError("missing 'product' object")
    if "product_id" not in product and "id" in row:
        product = {**product, "product_id": row["id"]}
    try:
        parsed = Product.model_validate(product)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"invalid product: {where}: {first['msg']}") from None
    if isinstance(row.get("contents"), str):
        parsed._row_contents = row["contents"]  # what the official index analyzed
    return parsed


def iter_documents(path: str | Path, *, strict: bool = False, report: LoadReport | None = None) -> Iterator[Product]:
    """Yield products in file order. ``strict`` makes the first bad row fatal."""
    report = report if report is not None else LoadReport(path=str(path))
    with open_text(path) as handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                product = parse_document(raw)
            except ValueError as exc:
                error = DocumentError(str(path), lineno, str(exc))
                if strict:
                    raise error from None
                report.record(error)
                continue
            report.read += 1
            yield product


_FIELDS = tuple(Product.model_fields)


def document(product: Product) -> dict:
    """The official Lucene JsonCollection row for one product:
    ``{"id", "contents", "product": {every field, in model order}}``. Reads the
    fields directly: products built with ``model_construct`` (the synthetic
    generator's fast path) have no validation state to dump through."""
    fields = product.__dict__
    return {"id": product.product_id, "contents": product.contents(), "product": {n: fields[n] for n in _FIELDS}}


def document_row(product: Product) -> bytes:
    """The official document row for a product (one JSON line, no newline)."""
    return orjson.dumps(document(product))
