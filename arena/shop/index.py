"""The on-disk catalog index: the official server's BM25 ranking, exactly, in a few ms.

The official ShoppingBench search server is pyserini 1.0.0's ``LuceneSearcher`` (Lucene
9.9, BM25 k1=0.9 b=0.4). Its ranking depends on details a generic engine does not share
(the analyzer, Lucene's one-byte length norms, float32 arithmetic, how ties are broken),
and an engine that differs in any of them shows the agent other products. So this index
is built for that one ranking:

- terms come from ``lucene_analysis`` (Lucene's English analyzer, reproduced);
- each posting stores the query-independent half of Lucene's BM25 term score
  (``1f + freq * normInverse``, float32, see ``lucene_bm25``), so a query scores a
  matching product exactly as Lucene does, in compiled loops (``ranking``);
- the hits are those of scoring every matching product: products are skipped only where
  stored per-window bounds of the term scores (``score_bounds``) prove they rank below
  the hits, so the 100,000-hit depth the official server searches, and the filters it
  applies to that list, come out the same;
- equal scores go to the smaller product id in string (byte) order, as Anserini sorts
  ties (``id_rank``).

Why not tantivy (the engine before format 4): its BM25 is fixed at k1=1.2, b=0.75 (not
settable from Python), its length norms and tokenizers differ, and re-scoring its
candidates at Lucene's parameters needed depths it could not guarantee; measured side by
side with pyserini (benchmarks/search_fidelity.py), it showed the same first page for
11% of queries at 100k products. Why not bm25s: its Lucene mode computes scores in its
own precision, without Lucene's one-byte norms, and it has no filters before a cut.

Layout (format 5): ``catalog.json`` (the manifest), the posting arrays
(``term_starts``, ``post_docs``, ``post_den``; searched by ``ranking``), the score bounds
(``term_max_den``, ``term_window_row``, ``window_max_den``, ``window_first``; format 5
added them), the sorted term table (``terms``), one
column per filter and sort (``price``, ``sold_count``, ``services``, ``shop``), the
product ids in byte order (``ids`` and ``by_id``, with ``id_rank``), and the stored
records (``records``). All are opened read-only and memory-mapped.
"""

from __future__ import annotations

import json
import threading
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from arena.shop import lucene_bm25, score_bounds
from arena.shop.catalog_files import Blobs, BlobWriter, load_array, save_array, write_blobs
from arena.shop.lucene_analysis import STOPWORDS, analyze
from arena.shop.product import SERVICES, Product, search_view
from arena.shop.ranking import Filter, Postings, Ranker

INDEX_FORMAT = 5
MANIFEST = "catalog.json"
ENGINE = "lucene-bm25-exact"
# The official server asks LuceneSearcher for this many hits before it filters.
SEARCH_DEPTH = 100_000

LUCENE_STOPWORDS = sorted(STOPWORDS)


class CatalogIndexError(RuntimeError):
    pass


@dataclass(frozen=True)
class BuildStats:
    products: int
    seconds: float
    duplicates: int


def service_mask(services: Iterable[str]) -> int:
    """The services as bits in ``SERVICES`` order (unknown names have no bit)."""
    return sum(1 << SERVICES.index(s) for s in set(services) if s in SERVICES)


def build_index(
    products: Iterable[Product],
    out: str | Path,
    *,
    source: dict | None = None,
    progress: Callable[[int], None] | None = None,
) -> BuildStats:
    """Index products into ``out`` (must be empty or absent), as Anserini indexes them
    (see ``_collect`` for repeated ids and blank rows)."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise CatalogIndexError(f"{out} is not empty; remove it or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    collected = _collect(products, out, progress)
    _write_postings(out, collected)
    _write_columns(out, collected)
    seconds = time.perf_counter() - started
    manifest = {
        "format": INDEX_FORMAT,
        "engine": ENGINE,
        "products": collected.count,
        "rows": collected.rows,
        "duplicate_rows": collected.duplicates,
        "blank_rows_skipped": collected.blank,
        "terms": len(collected.vocabulary),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(seconds, 2),
        "source": source or {},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    if progress is not None:
        progress(collected.count)
    return BuildStats(products=collected.count, seconds=seconds, duplicates=collected.duplicates)


@dataclass
class _Collected:
    """One pass over the products: their terms and columns, before inversion."""

    vocabulary: dict[str, int]
    term_ids: array
    freqs: array
    unique_terms: array  # per row: how many (term, freq) pairs it added
    lengths: array  # per row: its field length (terms after analysis)
    ids: list[str]
    prices: array
    sold: array
    services: array
    shops: list[str]
    canonical: array  # per row: the first row of its product id
    rows: int = 0
    count: int = 0  # products (distinct ids)
    duplicates: int = 0  # rows repeating an earlier id
    blank: int = 0  # rows with blank contents, never indexed


def _collect(products: Iterable[Product], out: Path, progress: Callable[[int], None] | None) -> _Collected:
    """As Anserini indexes a documents file: a row whose contents is blank is not indexed at
    all; a row repeating an id is indexed again (it counts in the BM25 statistics and can
    match), while looking the id up gives the first row, whose fields every hit shows and
    every filter reads (the official server reads ``searcher.doc(id)``)."""
    c = _Collected(
        {}, array("i"), array("i"), array("i"), array("i"), [], array("d"), array("q"), array("B"), [], array("i")
    )
    first: dict[str, int] = {}  # id -> its first row; 2.5M short ids stay well under 300 MB
    interned: dict[str, str] = {}
    records = BlobWriter(out, "records")
    for product in products:
        text = product.contents()
        if not text.strip():
            c.blank += 1
            continue
        row = c.rows
        c.rows += 1
        canonical = first.setdefault(product.product_id, row)
        c.canonical.append(canonical)
        terms = analyze(text)
        counted = Counter(terms)
        c.lengths.append(len(terms))
        c.unique_terms.append(len(counted))
        for term, freq in counted.items():
            term_id = c.vocabulary.get(term)
            if term_id is None:
                term_id = c.vocabulary[term] = len(c.vocabulary)
            c.term_ids.append(term_id)
            c.freqs.append(freq)
        c.ids.append(product.product_id)
        if canonical != row:  # a repeated id: the first row's fields, no record of its own
            c.duplicates += 1
            c.prices.append(c.prices[canonical])
            c.sold.append(c.sold[canonical])
            c.services.append(c.services[canonical])
            c.shops.append(c.shops[canonical])
            records.add(b"")
            continue
        c.prices.append(float(product.price))
        c.sold.append(int(product.sold_count))
        c.services.append(service_mask(product.service))
        c.shops.append(interned.setdefault(product.shop_id, product.shop_id))
        records.add(orjson.dumps(product.model_dump()))
        c.count += 1
        if progress is not None and c.count % 10_000 == 0:
            progress(c.count)
    records.close()
    return c


def _write_postings(out: Path, c: _Collected) -> None:
    terms = sorted(c.vocabulary, key=str.encode)  # byte order, as the term table is searched
    sorted_id = np.empty(len(terms), dtype=np.int32)
    sorted_id[np.array([c.vocabulary[t] for t in terms], dtype=np.int64)] = np.arange(len(terms), dtype=np.int32)
    posting_terms = sorted_id[np.frombuffer(c.term_ids, dtype=np.int32)] if terms else np.empty(0, np.int32)
    # A stable sort by term keeps each term's postings in document order.
    order = np.argsort(posting_terms, kind="stable")
    docs = np.repeat(np.arange(c.rows, dtype=np.int32), np.frombuffer(c.unique_terms, dtype=np.int32))[order]
    freqs = np.frombuffer(c.freqs, dtype=np.int32)[order]
    starts = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(posting_terms, minlength=len(terms)), out=starts[1:])
    del order, posting_terms
    lengths = np.frombuffer(c.lengths, dtype=np.int32)
    # Lucene's collection statistics: docCount counts only products with at least one term.
    doc_count = int(np.count_nonzero(lengths))
    avgdl = lucene_bm25.average_length(int(lengths.sum()), doc_count) if doc_count else np.float32(1)
    cache = lucene_bm25.norm_inverse_cache(avgdl)
    denominators = lucene_bm25.tf_denominators(freqs, lucene_bm25.norms(lengths)[docs], cache)
    save_array(out, "term_starts", starts)
    save_array(out, "post_docs", docs)
    save_array(out, "post_den", denominators)
    shift = score_bounds.write_bounds(out, starts, docs, denominators, c.rows)
    write_blobs(out, "terms", (t.encode() for t in terms))
    stats = {"doc_count": doc_count, "avgdl": float(avgdl), "window_shift": shift}
    (out / "stats.json").write_text(json.dumps(stats))


def _write_columns(out: Path, c: _Collected) -> None:
    save_array(out, "price", np.frombuffer(c.prices, dtype=np.float64))
    save_array(out, "sold_count", np.frombuffer(c.sold, dtype=np.int64))
    save_array(out, "services", np.frombuffer(c.services, dtype=np.uint8))
    shop_names = sorted(set(c.shops), key=str.encode)
    code = {name: i for i, name in enumerate(shop_names)}
    save_array(out, "shop", np.array([code[s] for s in c.shops], dtype=np.int32))
    write_blobs(out, "shops", (s.encode() for s in shop_names))
    keys = [i.encode() for i in c.ids]
    canonical = np.frombuffer(c.canonical, dtype=np.int32)
    firsts = np.flatnonzero(canonical == np.arange(c.rows))
    by_id = np.array(sorted(firsts.tolist(), key=keys.__getitem__), dtype=np.int32)
    rank = np.empty(c.rows, dtype=np.int32)
    rank[by_id] = np.arange(len(by_id), dtype=np.int32)
    rank = rank[canonical]  # a repeated id's rows share its rank
    save_array(out, "by_id", by_id)
    save_array(out, "id_rank", rank)
    save_array(out, "canonical", canonical)
    write_blobs(out, "ids", (keys[i] for i in by_id))


@dataclass(frozen=True)
class SearchFilters:
    shop_id: str | None = None
    price_low: float | None = None
    price_high: float | None = None
    services: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.shop_id) or self.price_low is not None or self.price_high is not None or bool(self.services)


def rebuild_command(manifest: dict, path: Path) -> str:
    """The ``arena catalog build`` that makes a current index of what ``manifest`` was built from."""
    source = manifest.get("source") or {}
    target = f"{path}-v{INDEX_FORMAT}"
    if source.get("kind") == "synthetic":
        return f"arena catalog build --synthetic {source.get('products')} --seed {source.get('seed', 0)} --out {target}"
    if source.get("kind") == "documents" and source.get("file"):
        return f"arena catalog build --from {source['file']} --out {target}"
    if source.get("kind") == "taskpack" and source.get("files"):
        tasks = " ".join(f"--from-tasks {f['path']}" for f in source["files"])
        extra = f" --background {source['background']}" if source.get("background") else ""
        return f"arena catalog build {tasks}{extra} --seed {source.get('seed', 0)} --out {target}"
    return f"arena catalog build --from documents.jsonl.gz --out {target}"


class CatalogIndex:
    """A built catalog index, opened read-only. Addresses are product positions (ints)."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        manifest = path / MANIFEST
        if not manifest.is_file():
            raise CatalogIndexError(
                f"{path} is not a catalog index (no {MANIFEST}); build one with `arena catalog build`"
            )
        self.path = path
        self.manifest = json.loads(manifest.read_text())
        found = self.manifest.get("format")
        if found != INDEX_FORMAT:
            # Never rebuilt in place: the index may sit on a read-only mount, and a rebuild
            # of a 2.5M catalog takes minutes the caller did not ask for.
            raise CatalogIndexError(
                f"{path}: index format {found} is not {INDEX_FORMAT} (format {INDEX_FORMAT} ranks as the official "
                f"search server does, with the score bounds its searches skip by); rebuild it: "
                f"{rebuild_command(self.manifest, path)}"
            )
        stats = json.loads((path / "stats.json").read_text())
        postings = Postings(
            starts=load_array(path, "term_starts"),
            docs=load_array(path, "post_docs"),
            den=load_array(path, "post_den"),
            bounds=score_bounds.load_bounds(path, int(stats["window_shift"])),
        )
        self._price = load_array(path, "price")
        self._sold = load_array(path, "sold_count")
        self._services = load_array(path, "services")
        self._shop = load_array(path, "shop")
        self._shops = Blobs(path, "shops")
        self._by_id = load_array(path, "by_id")
        self._id_rank = load_array(path, "id_rank")
        self._ids = Blobs(path, "ids")
        self._records = Blobs(path, "records")
        self._canonical = load_array(path, "canonical")
        self.ranker = Ranker(
            postings,
            Blobs(path, "terms"),
            int(stats["doc_count"]),
            self._id_rank,
            len(self._price),
            canonical=self._canonical if self.manifest.get("duplicate_rows") else None,
        )
        self._lock = threading.Lock()  # the ranker's accumulator is shared

    def __len__(self) -> int:
        return len(self._by_id)  # products; a repeated id's extra rows are not products

    # -- records and columns -------------------------------------------------------

    def address_of(self, product_id: str) -> int | None:
        position = self._ids.find(str(product_id).encode())
        return None if position is None else int(self._by_id[position])

    def get(self, product_id: str) -> Product | None:
        address = self.address_of(product_id)
        return None if address is None else self.record(address)

    def record(self, address: int) -> Product:
        # Validated when the index was built; model_construct skips re-validation on the hot path.
        return Product.model_construct(**_product_fields(self._stored(address)))

    def _stored(self, address: int) -> dict:
        """The stored record of ``address`` (of its first row where its id repeats), decoded."""
        return orjson.loads(self._records[int(self._canonical[address])])

    def records(self, addresses: Iterable[int]) -> list[Product]:
        return [self.record(int(a)) for a in addresses]

    def search_views(self, addresses: Iterable[int]) -> list[dict]:
        """``record(a).search_view()`` for each address, without building a Product per hit: at
        100k products that construction was half of a find_product call."""
        return [search_view(self._stored(a)) for a in addresses]

    def prices(self, addresses: list[int]) -> list[float]:
        """Prices read from the column, without decoding records."""
        return self._price[np.asarray(addresses, dtype=np.int64)].tolist()

    def sold_counts(self, addresses: list[int]) -> list[int]:
        return self._sold[np.asarray(addresses, dtype=np.int64)].tolist()

    def by_id(self) -> np.ndarray:
        """Every address, in product-id order."""
        return self._by_id

    def shop_codes(self) -> np.ndarray:
        """Each product's shop as a code into ``shop_name``."""
        return self._shop

    def shop_name(self, code: int) -> str:
        return self._shops[code].decode()

    # -- search ----------------------------------------------------------------------

    def query_terms(self, text: str) -> Counter[str]:
        return Counter(analyze(text or ""))

    def bm25(self, q: str, filters: SearchFilters, limit: int) -> list[Product]:
        """The first ``limit`` products that pass every filter, in BM25 order."""
        return self.records(self.bm25_addresses(q, filters, limit))

    def bm25_addresses(self, q: str, filters: SearchFilters, limit: int) -> list[int]:
        """The official server's hit list: the first ``SEARCH_DEPTH`` hits in BM25 order
        (equal scores by product id), then the first ``limit`` of them that pass the filters."""
        query = self.ranker.query(self.query_terms(q))
        passing = self._filter(filters) if filters.active else None
        with self._lock:
            return self.ranker.hits(query, limit, SEARCH_DEPTH, passing)

    def scored(self, terms: Counter[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every product matching any term, with its float32 Lucene BM25 score (boost = repeats)."""
        with self._lock:
            return self.ranker.all_hits(self.ranker.query(terms))

    def _first(self, docs: np.ndarray, scores: np.ndarray, k: int, *, ordered: bool = False) -> np.ndarray:
        return self.ranker.first(docs, scores, k, ordered=ordered)

    def _filter(self, filters: SearchFilters) -> Filter:
        """The filters over product positions (``ranking.Filter``): ``shop_id`` equality,
        inclusive price bounds, every service; an unknown shop or service passes nothing."""
        shop_code = None
        nothing = False
        if filters.shop_id:
            shop_code = self._shops.find(filters.shop_id.encode())
            nothing = shop_code is None
        if any(s not in SERVICES for s in filters.services):
            nothing = True  # no product offers a service of another name
        return Filter(
            price=self._price,
            services=self._services,
            shop=self._shop,
            low=filters.price_low,
            high=filters.price_high,
            want=service_mask(filters.services),
            shop_code=shop_code,
            nothing=nothing,
        )

    def _passing(self, docs: np.ndarray, filters: SearchFilters) -> np.ndarray:
        return self._filter(filters)(docs)


_FIELDS = set(Product.model_fields)


def _product_fields(record: dict) -> dict:
    # Stored records may come from an older Product; model_construct must not receive unknown keys.
    return {k: v for k, v in record.items() if k in _FIELDS}
