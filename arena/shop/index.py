"""The on-disk catalog index (tantivy): BM25 over the official ``contents``
text plus fast fields for the ``find_product`` filters and sorts.

Built once per catalog, reopened read-only; a query never rescans the
catalog and a product is looked up by id through its term, not a scan.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson
import tantivy

from arena.shop.product import SERVICES, Product
from arena.shop.readonly_index import open_index

# Format 2 adds the ``services`` bitmask fast field; format 1 indexes still open
# (their filtered searches take the slower filtered-query path). Format 3 adds the
# ``id_order`` fast field that breaks score ties without reading records; older
# formats break them the same way by reading the tied hits' stored ids.
INDEX_FORMAT = 3
READABLE_FORMATS = (1, 2, 3)
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
    # The services again as a bitmask column, so a hit's services are read without its record.
    builder.add_unsigned_field("services", stored=False, indexed=False, fast=True)
    # The product id's rank in string order (see ``id_order``), to order equal scores.
    builder.add_unsigned_field("id_order", stored=False, indexed=False, fast=True)
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
        doc.add_unsigned("services", service_mask(product.service))
        doc.add_unsigned("id_order", id_order(product.product_id))
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


# Digit ids up to this length have an exact ``id_order`` (11**18 < 2**64).
_ORDERED_ID_DIGITS = 18


def id_order(product_id: str) -> int:
    """A number that orders digit-only ids as their strings order, or 0 (unknown) for others.

    Equal BM25 scores are ranked by product id in string order, as the official search
    server does (Anserini's searchers sort by score, then by the id field as a string:
    ``SortField(ID, STRING_VAL)``), so "10..." comes before "9...". Each digit is written
    in base 11 as digit + 1, padded with 0 to 18 places: a shorter id that is a prefix of
    a longer one gets the smaller number, exactly as in string order. An id this cannot
    encode (letters, over 18 digits) gets 0 and its ties are ordered by reading the ids.
    """
    if not (0 < len(product_id) <= _ORDERED_ID_DIGITS and product_id.isascii() and product_id.isdigit()):
        return 0
    value = 0
    for digit in product_id.ljust(_ORDERED_ID_DIGITS, "/"):  # "/" is "0" - 1: the pad sorts first
        value = value * 11 + (ord(digit) - ord("/"))
    return value


def service_mask(services: Iterable[str]) -> int:
    """The services as bits in ``SERVICES`` order (unknown names have no bit)."""
    return sum(1 << SERVICES.index(s) for s in set(services) if s in SERVICES)


@dataclass(frozen=True)
class SearchFilters:
    shop_id: str | None = None
    price_low: float | None = None
    price_high: float | None = None
    services: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.shop_id) or self.price_low is not None or self.price_high is not None or bool(self.services)


# A price/service-filtered search first takes the top FIRST_DEPTH unfiltered hits
# and keeps those that pass, going deeper (never past MAX_DEPTH) when too few do;
# see ``CatalogIndex._post_filtered``.
FIRST_DEPTH = 200
MAX_DEPTH = 3200


class CatalogIndex:
    """A built catalog index, opened read-only."""

    def __init__(self, path: str | Path, *, post_filter: bool = True) -> None:
        path = Path(path)
        manifest = path / MANIFEST
        if not manifest.is_file():
            raise CatalogIndexError(
                f"{path} is not a catalog index (no {MANIFEST}); build one with `arena catalog build`"
            )
        self.path = path
        self.manifest = json.loads(manifest.read_text())
        if self.manifest.get("format") not in READABLE_FORMATS:
            raise CatalogIndexError(f"{path}: index format {self.manifest.get('format')} != {INDEX_FORMAT}; rebuild it")
        self._index = open_index(path)
        self._index.register_tokenizer(ANALYZER, _analyzer())
        self._schema = self._index.schema
        self._analyzer = _analyzer()
        self._searcher = self._index.searcher()
        # Format 1 has no services column: its filtered searches always run the filtered query.
        self._post_filter = post_filter and self.manifest["format"] >= 2
        # How many searches took each route (reported by benchmarks/search.py).
        self.routes: Counter[str] = Counter()

    def __len__(self) -> int:
        return self._searcher.num_docs

    def get(self, product_id: str) -> Product | None:
        address = self.address_of(product_id)
        return None if address is None else self._record(address)

    def records(self, addresses: list[tantivy.DocAddress]) -> list[Product]:
        return [self._record(address) for address in addresses]

    def _record(self, address: tantivy.DocAddress) -> Product:
        stored = self._searcher.doc(address)
        return Product.model_construct(**_product_fields(orjson.loads(stored["record"][0])))

    def prices(self, addresses: list[tantivy.DocAddress]) -> list[float]:
        """Prices read from the column store, without decoding records."""
        return self._searcher.fast_field_values("price", addresses)

    def sold_counts(self, addresses: list[tantivy.DocAddress]) -> list[int]:
        return self._searcher.fast_field_values("sold_count", addresses)

    def query_terms(self, text: str) -> Counter[str]:
        return Counter(self._analyzer.analyze(text or ""))

    def bm25(self, q: str, filters: SearchFilters, limit: int) -> list[Product]:
        """The first ``limit`` products that pass every filter, in BM25 order."""
        return self.records(self.bm25_addresses(q, filters, limit))

    def bm25_addresses(self, q: str, filters: SearchFilters, limit: int) -> list[tantivy.DocAddress]:
        """Like ``bm25`` without decoding the records: for callers that only need ranks."""
        text = self._text_query(q)
        if text is None:
            return []
        if not filters.active:
            self.routes["unfiltered"] += 1
            return self._top(text, limit)
        if self._can_post_filter(filters):
            found = self._post_filtered(text, filters, limit)
            if found is not None:
                return found
        self.routes["filtered_query"] += 1
        filtered = tantivy.Query.boolean_query(
            # Filters must not change the BM25 order: they score a constant 0.
            [(tantivy.Occur.Must, text)]
            + [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in self._filter_queries(filters)]
        )
        return self._top(filtered, limit)

    def address_of(self, product_id: str) -> tantivy.DocAddress | None:
        query = tantivy.Query.term_query(self._schema, "product_id", str(product_id))
        hits = self._searcher.search(query, limit=1, count=False).hits
        return hits[0][1] if hits else None

    def _top(self, query: tantivy.Query, limit: int) -> list[tantivy.DocAddress]:
        """The first ``limit`` hits by score, equal scores in product-id string order.

        tantivy orders equal scores by document address, and which documents share a segment
        (and so their addresses) changes with the writer's threads and memory budget: a top-k
        cut inside a group of equal scores would keep other products on another build. So
        the search goes on past ``limit`` until the last hit scores below the ``limit``-th
        (every product tied with it is then in hand), and each group of equal scores is
        sorted by product id. The ranking is then a function of the catalog alone.
        """
        if limit <= 0:
            return []
        fetch = limit + 1
        while True:
            hits = self._searcher.search(query, limit=fetch, count=False).hits
            if len(hits) < fetch or hits[-1][0] < hits[limit - 1][0]:
                break
            fetch *= 2
        return [address for _, address in self._tie_ordered(hits)[:limit]]

    def _tie_ordered(self, hits: list[tuple[float, tantivy.DocAddress]]) -> list[tuple[float, tantivy.DocAddress]]:
        """``hits`` (score-descending) with each run of equal scores sorted by product id."""
        out: list[tuple[float, tantivy.DocAddress]] = []
        start = 0
        while start < len(hits):
            end = start + 1
            while end < len(hits) and hits[end][0] == hits[start][0]:
                end += 1
            group = hits[start:end]
            if len(group) > 1:
                keys = self._id_keys([address for _, address in group])
                group = [hit for _, hit in sorted(zip(keys, group, strict=True), key=lambda pair: pair[0])]
            out.extend(group)
            start = end
        return out

    def _id_keys(self, addresses: list[tantivy.DocAddress]) -> list[int] | list[str]:
        """Sort keys in product-id string order: the ``id_order`` column, else the stored ids."""
        if self.manifest["format"] >= 3:
            orders = self._searcher.fast_field_values("id_order", addresses)
            if all(orders):
                return orders
        return [orjson.loads(self._searcher.doc(a)["record"][0])["product_id"] for a in addresses]

    def _can_post_filter(self, filters: SearchFilters) -> bool:
        # A shop is a short posting list that drives the filtered query cheaply;
        # price and service filters keep most hits, so they are checked on top hits.
        return self._post_filter and not filters.shop_id and all(s in SERVICES for s in filters.services)

    def _post_filtered(
        self, text: tantivy.Query, filters: SearchFilters, limit: int
    ) -> list[tantivy.DocAddress] | None:
        """The first ``limit`` passing hits, taken from the unfiltered ranking, or
        None when too few of its top hits pass (the caller runs the filtered query).

        Why: with filter clauses tantivy must score every document matching any
        query word, while the bare disjunction is pruned with block-max WAND (at
        2.5M products, p50 ~13 ms against ~2.5 ms). Both rank by the same BM25
        score with the same tie order, so the passing hits among the unfiltered
        top k are exactly the first hits of the filtered ranking: taking the
        first ``limit`` of them, or all of them when the ranking has fewer than
        k hits, is the filtered result.
        """
        want = service_mask(filters.services)
        low = -math.inf if filters.price_low is None else filters.price_low
        high = math.inf if filters.price_high is None else filters.price_high
        depth = max(FIRST_DEPTH, limit)
        while True:
            hits = self._top(text, depth)
            prices = self.prices(hits)
            masks = self._searcher.fast_field_values("services", hits) if want else [0] * len(hits)
            passing = [a for a, p, m in zip(hits, prices, masks, strict=True) if low <= p <= high and m & want == want]
            if len(passing) >= limit or len(hits) < depth:
                self.routes["post_filter" if depth == max(FIRST_DEPTH, limit) else "post_filter_deeper"] += 1
                return passing[:limit]
            # Deep enough to find ``limit`` at the pass rate seen so far, with some slack.
            needed = math.ceil(depth * limit / len(passing) * 1.25) if passing else math.inf
            if needed > MAX_DEPTH:
                self.routes["post_filter_gave_up"] += 1
                return None  # a rare filter: the filtered query is cheaper than a deep top-k
            depth = max(needed, depth * 2)

    def _text_query(self, q: str) -> tantivy.Query | None:
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
        return tantivy.Query.boolean_query(text_clauses)

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
