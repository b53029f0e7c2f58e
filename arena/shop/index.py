"""The on-disk catalog index (tantivy): BM25 over the official ``contents``
text plus fast fields for the ``find_product`` filters and sorts.

Built once per catalog, reopened read-only; a query never rescans the
catalog and a product is looked up by id through its term, not a scan.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson
import tantivy

from arena.shop.product import Product

INDEX_FORMAT = 1
MANIFEST = "catalog.json"
ANALYZER = "shop_en"

# Lucene's default English stop set: pyserini's LuceneSearcher, which the
# official search server uses, removes exactly these before BM25.
LUCENE_STOPWORDS = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
]  # fmt: skip


def _analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(LUCENE_STOPWORDS))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("product_id", stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("contents", stored=False, tokenizer_name=ANALYZER, index_option="freq")
    builder.add_text_field("shop_id", stored=False, fast=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("service", stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_float_field("price", stored=False, indexed=True, fast=True)
    builder.add_integer_field("sold_count", stored=False, indexed=False, fast=True)
    builder.add_bytes_field("record", stored=True)
    return builder.build()


class CatalogIndexError(RuntimeError):
    pass


@dataclass(frozen=True)
class BuildStats:
    products: int
    seconds: float
    duplicates: int


def build_index(
    products: Iterable[Product],
    out: str | Path,
    *,
    source: dict | None = None,
    heap_bytes: int = 512 * 1024 * 1024,
    threads: int = 2,
    progress: Callable[[int], None] | None = None,
) -> BuildStats:
    """Index products into ``out`` (must be empty or absent). A repeated
    product id is indexed once (the first row wins, as a Lucene id would)."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise CatalogIndexError(f"{out} is not empty; remove it or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(_schema(), path=str(out), reuse=False)
    index.register_tokenizer(ANALYZER, _analyzer())
    writer = index.writer(heap_size=heap_bytes, num_threads=threads)
    # ids seen so far; a 2.5M-id set of short strings stays well under 300 MB.
    seen: set[str] = set()
    duplicates = 0
    started = time.perf_counter()
    count = 0
    for product in products:
        if product.product_id in seen:
            duplicates += 1
            continue
        seen.add(product.product_id)
        doc = tantivy.Document()
        doc.add_text("product_id", product.product_id)
        doc.add_text("contents", product.contents())
        doc.add_text("shop_id", product.shop_id)
        for service in product.service:
            doc.add_text("service", service)
        doc.add_float("price", float(product.price))
        doc.add_integer("sold_count", int(product.sold_count))
        doc.add_bytes("record", orjson.dumps(product.model_dump()))
        writer.add_document(doc)
        count += 1
        if progress is not None and count % 10_000 == 0:
            progress(count)
    writer.commit()
    writer.wait_merging_threads()
    seconds = time.perf_counter() - started
    manifest = {
        "format": INDEX_FORMAT,
        "products": count,
        "duplicates_skipped": duplicates,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(seconds, 2),
        "source": source or {},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    if progress is not None:
        progress(count)
    return BuildStats(products=count, seconds=seconds, duplicates=duplicates)


@dataclass(frozen=True)
class SearchFilters:
    shop_id: str | None = None
    price_low: float | None = None
    price_high: float | None = None
    services: tuple[str, ...] = ()


class CatalogIndex:
    """A built catalog index, opened read-only."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        manifest = path / MANIFEST
        if not manifest.is_file():
            raise CatalogIndexError(
                f"{path} is not a catalog index (no {MANIFEST}); build one with `arena catalog build`"
            )
        self.path = path
        self.manifest = json.loads(manifest.read_text())
        if self.manifest.get("format") != INDEX_FORMAT:
            raise CatalogIndexError(f"{path}: index format {self.manifest.get('format')} != {INDEX_FORMAT}; rebuild it")
        self._index = tantivy.Index.open(str(path))
        self._index.register_tokenizer(ANALYZER, _analyzer())
        self._schema = self._index.schema
        self._analyzer = _analyzer()
        self._searcher = self._index.searcher()

    def __len__(self) -> int:
        return self._searcher.num_docs

    def get(self, product_id: str) -> Product | None:
        address = self.address_of(product_id)
        return None if address is None else self._record(address)

    def _record(self, address: tantivy.DocAddress) -> Product:
        stored = self._searcher.doc(address)
        return Product.model_construct(**_product_fields(orjson.loads(stored["record"][0])))

    def query_terms(self, text: str) -> Counter[str]:
        return Counter(self._analyzer.analyze(text or ""))

    def bm25(self, q: str, filters: SearchFilters, limit: int) -> list[Product]:
        """The first ``limit`` products that pass every filter, in BM25 order."""
        return [self._record(address) for address in self.bm25_addresses(q, filters, limit)]

    def bm25_addresses(self, q: str, filters: SearchFilters, limit: int) -> list[tantivy.DocAddress]:
        """Like ``bm25`` without decoding the records: for callers that only need ranks."""
        query = self._query(q, filters)
        if query is None:
            return []
        return [address for _, address in self._searcher.search(query, limit=limit, count=False).hits]

    def address_of(self, product_id: str) -> tantivy.DocAddress | None:
        query = tantivy.Query.term_query(self._schema, "product_id", str(product_id))
        hits = self._searcher.search(query, limit=1, count=False).hits
        return hits[0][1] if hits else None

    def _query(self, q: str, filters: SearchFilters) -> tantivy.Query | None:
        terms = self.query_terms(q)
        if not terms:
            return None
        text_clauses = []
        for term, times in sorted(terms.items()):
            clause = tantivy.Query.term_query(self._schema, "contents", term)
            # A repeated query word weighs more, as pyserini's bag-of-words query boosts it.
            if times > 1:
                clause = tantivy.Query.boost_query(clause, float(times))
            text_clauses.append((tantivy.Occur.Should, clause))
        query = tantivy.Query.boolean_query(text_clauses)
        constraints = self._filter_queries(filters)
        if not constraints:  # the bare disjunction scores the same, and tantivy prunes it faster
            return query
        clauses = [(tantivy.Occur.Must, query)]
        # Filters must not change the BM25 order: they score a constant 0.
        clauses += [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in constraints]
        return tantivy.Query.boolean_query(clauses)

    def _filter_queries(self, filters: SearchFilters) -> list[tantivy.Query]:
        out = []
        if filters.shop_id:
            out.append(tantivy.Query.term_query(self._schema, "shop_id", filters.shop_id))
        if filters.price_low is not None or filters.price_high is not None:
            out.append(
                tantivy.Query.range_query(
                    self._schema, "price", tantivy.FieldType.Float, filters.price_low, filters.price_high
                )
            )
        for service in filters.services:
            out.append(tantivy.Query.term_query(self._schema, "service", service))
        return out


_FIELDS = set(Product.model_fields)


def _product_fields(record: dict) -> dict:
    # Stored records were validated at build time; model_construct skips re-validation
    # on the hot path but must not receive unknown keys.
    return {k: v for k, v in record.items() if k in _FIELDS}
