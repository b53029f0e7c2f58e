"""The official hit list, computed exactly: the best products by BM25, equal scores by id.

The hit list the official server filters is "the first 100,000 products by BM25, equal
scores by product id", then the first 50 of them that pass its filters. Three routes
give that list, hit for hit:

- pruned (``prune_kernel``, the usual one): block-max MaxScore. It skips only products
  whose score provably falls strictly below the last hit kept, or below a floor that
  100,000 products already reach (past the depth), so the hits are those of an
  exhaustive scan. The filter is evaluated in the compiled loop (``Filter``). With a
  filter, every product scored is recorded, so the products ahead of each kept hit are
  counted exactly where it matters, and the hits past the depth dropped
  (``routes["pruned_depth_cut"]``). A shop's products are few: they are all scored first
  (``prune_kernel.subset_scores``), so the hits are known before the scan, which only
  counts the products ahead of them, from the last hit's score up, scoring each window
  densely (``prune_kernel.count_ahead``, ``routes["pruned_shop"]``);
  when fewer than ``depth`` products match at all, no scan is needed.
- exhaustive (``score_kernel``): every posting of every query term is scored; the
  50-slot heap keeps the best passing ones; the depth is checked by counting the
  candidates ahead of the last hit, and applied exactly (``first``) when it bites.
- numpy (``all_hits``): the same scoring in plain numpy: the reference the others are
  tested against, what ``scored`` returns, and the route for repeated product ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.shop import lucene_bm25, prune_kernel, score_kernel
from arena.shop.catalog_files import Blobs

# False: every search takes the plain numpy route (tests compare the routes).
USE_KERNEL = True
# False: the compiled route scores every posting (the exhaustive route).
USE_PRUNING = True


@dataclass(frozen=True)
class QueryTerm:
    start: int
    end: int
    weight: np.float32  # boost (how often the query repeats the term) * idf
    term_id: int = -1  # -1: unknown (no pruned route)


@dataclass(frozen=True)
class Bounds:
    """What the pruned route knows of a term's scores without reading its postings."""

    max_den: np.ndarray  # per term id, its largest ``den`` (float32)
    rows: np.ndarray  # per term id, its row of ``window_max``, or -1 (a rare term: ``max_den`` only)
    window_max: np.ndarray  # [row, window]: the largest ``den`` of the term in the window (1: none)
    window_first: np.ndarray  # [row, window]: its first posting in the window, from its first (int32)
    shift: int  # a window is ``2**shift`` consecutive product positions


@dataclass(frozen=True)
class Postings:
    starts: np.ndarray  # per term id, its first posting (int64, n_terms + 1)
    docs: np.ndarray  # document order
    den: np.ndarray  # ``1f + freq * normInverse`` per posting, document order
    bounds: Bounds | None = None  # None: no pruned route


@dataclass(frozen=True)
class Filter:
    """The official server's filters over product positions, as one predicate: called on an
    array of positions (numpy, the reference), or evaluated product by product in the
    pruned route (``prune_kernel.passes``, the same comparisons)."""

    price: np.ndarray  # per position
    services: np.ndarray  # per position, a bit per service
    shop: np.ndarray  # per position, a shop code
    low: float | None = None
    high: float | None = None
    want: int = 0  # service bits that must all be set
    shop_code: int | None = None  # None: any shop
    nothing: bool = False  # an unknown shop or service: no product passes

    def __call__(self, docs: np.ndarray) -> np.ndarray:
        if self.nothing:
            return np.zeros(len(docs), dtype=bool)
        ok = np.ones(len(docs), dtype=bool)
        if self.shop_code is not None:
            ok &= self.shop[docs] == self.shop_code
        if self.low is not None or self.high is not None:
            prices = self.price[docs]
            if self.low is not None:
                ok &= prices >= self.low
            if self.high is not None:
                ok &= prices <= self.high
        if self.want:
            ok &= (self.services[docs] & self.want) == self.want
        return ok

    def compiled(self) -> tuple[np.ndarray, np.ndarray]:
        """``prune_kernel.passes``'s ``bounds`` and ``wants``."""
        bounds = np.array([0.0 if self.low is None else self.low, 0.0 if self.high is None else self.high])
        wants = np.array(
            [self.low is not None, self.high is not None, self.want, -1 if self.shop_code is None else self.shop_code],
            dtype=np.int64,
        )
        return bounds, wants


# The index and a query as the compiled scans take them: docs, den, starts, ends, weights, rows, max_den,
# window_max, window_first, shift, n_rows, id_rank. Its length is spelled out so that a checker can count
# the kernels' positional arguments after it.
ScanArgs = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
    int, int, np.ndarray,
]  # fmt: skip


class Ranker:
    """Scores and orders hits by Lucene BM25, equal scores by ``id_rank`` (product-id order)."""

    def __init__(
        self,
        postings: Postings,
        terms: Blobs,
        doc_count: int,
        id_rank: np.ndarray,
        size: int,
        canonical: np.ndarray | None = None,
    ) -> None:
        self.p = postings
        # numba takes plain arrays: views of the memory maps, nothing copied.
        self._docs, self._den, self._id_rank = np.asarray(postings.docs), np.asarray(postings.den), np.asarray(id_rank)
        self.terms = terms
        self.doc_count = doc_count
        self.id_rank = id_rank
        self._sums = np.zeros(size, dtype=np.float64)  # all-zero between queries
        # Rows repeating a product id (None when none do): a hit list keeps an id's best row
        # only, as pyserini's remove_dups, and is taken deeper by that many rows.
        self.canonical = canonical
        self._repeats = 0 if canonical is None else int(np.count_nonzero(canonical != np.arange(len(canonical))))
        self.routes: Counter[str] = Counter()  # which route answered (benchmarks report it)
        self._term_ids: dict[str, int | None] = {}  # term -> id, a cache of ``terms.find``
        self.bounds = postings.bounds
        if self.bounds is not None:
            self._rows = np.asarray(self.bounds.rows)
            self._window_max = np.asarray(self.bounds.window_max)
            self._window_first = np.asarray(self.bounds.window_first)
            self._max_den = np.asarray(self.bounds.max_den)
            self._acc = np.zeros(1 << self.bounds.shift, dtype=np.float64)  # all-zero between queries
            self._mark = np.zeros(1 << self.bounds.shift, dtype=np.uint8)  # all-zero between queries
            # One more than a window: top_hits lists candidates without a branch, writing one past the last.
            self._seen = np.empty((1 << self.bounds.shift) + 1, dtype=np.int32)
        self._records: tuple[np.ndarray, np.ndarray] | None = None  # the depth check's, made on first use
        self._as_float = np.zeros(1, dtype=np.float32)
        self._as_int = self._as_float.view(np.int32)  # a float32's bits, for the depth floor's histogram
        self.prune_stats = np.zeros(4, dtype=np.int64)  # windows, skipped, candidates, postings read (summed)
        self._shops: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (column, codes, positions) by shop

    def query(self, terms: Counter[str]) -> list[QueryTerm]:
        out = []
        for term, repeats in terms.items():
            term_id = self._term_id(term)
            if term_id is None:
                continue
            start, end = int(self.p.starts[term_id]), int(self.p.starts[term_id + 1])
            weight = np.float32(repeats) * lucene_bm25.idf(end - start, self.doc_count)
            out.append(QueryTerm(start, end, weight, term_id))
        return out

    def _term_id(self, term: str) -> int | None:
        # A binary search of the term table costs ~20 us in Python; requests repeat words.
        if term not in self._term_ids:
            if len(self._term_ids) >= _TERM_CACHE:
                self._term_ids.clear()
            self._term_ids[term] = self.terms.find(term.encode())
        return self._term_ids[term]

    # -- scoring ------------------------------------------------------------------------

    def all_hits(self, query: list[QueryTerm]) -> tuple[np.ndarray, np.ndarray]:
        """Every product matching any term, with its float32 score. Not thread-safe (callers lock)."""
        sums = self._sums
        parts = []
        for t in query:
            docs = self.p.docs[t.start : t.end]
            parts.append(docs[sums[docs] == 0.0])  # every term score is > 0: a zero sum is unseen
            sums[docs] += lucene_bm25.term_scores(t.weight, self.p.den[t.start : t.end])  # summed in double
        if not parts:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        docs = parts[0] if len(parts) == 1 else np.concatenate(parts)
        scores = sums[docs].astype(np.float32)
        sums[docs] = 0.0
        return docs.astype(np.int64), scores

    def scores_of(self, query: list[QueryTerm], docs: np.ndarray) -> np.ndarray:
        """The float32 scores of ``docs`` (0 where no term matches), looked up in document order."""
        total = np.zeros(len(docs), dtype=np.float64)
        for t in query:
            listed = self.p.docs[t.start : t.end]
            at = np.minimum(np.searchsorted(listed, docs), len(listed) - 1)
            found = listed[at] == docs
            term = lucene_bm25.term_scores(t.weight, self.p.den[t.start : t.end][at[found]])
            total[found] += term
        return total.astype(np.float32)

    # -- ordering -----------------------------------------------------------------------

    def first(self, docs: np.ndarray, scores: np.ndarray, k: int, *, ordered: bool = False) -> np.ndarray:
        """Positions of the first ``k`` hits by score, equal scores by product id; in that
        order when ``ordered``."""
        n = len(scores)
        if n > k:
            kth = np.partition(scores, n - k)[n - k]
            above = np.flatnonzero(scores > kth)
            tied = np.flatnonzero(scores == kth)
            if len(above) + len(tied) > k:
                ranks = self.id_rank[docs[tied]]
                tied = tied[np.argpartition(ranks, k - len(above) - 1)[: k - len(above)]]
            keep = np.concatenate([above, tied])
        else:
            keep = np.arange(n)
        if not ordered:
            return keep
        return keep[np.lexsort((self.id_rank[docs[keep]], -scores[keep]))]

    # -- the official hit list -----------------------------------------------------------

    def hits(
        self,
        query: list[QueryTerm],
        limit: int,
        depth: int,
        passing: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> list[int]:
        """The first ``limit`` products, in order, that pass ``passing`` among the first
        ``depth`` hits of the whole ranking (the official server's search, then its filter).
        Not thread-safe (callers lock)."""
        if not query or limit <= 0 or (passing is not None and depth <= 0):
            return []  # (no hit among the first 0 passes)
        if not USE_KERNEL or self.canonical is not None:
            return self._hits_numpy(query, limit, depth, passing)
        if USE_PRUNING and self.bounds is not None and (passing is None or isinstance(passing, Filter)):
            hits = self._hits_pruned(query, limit, depth, passing)
            if hits is not None:
                return hits
        return self._hits_exhaustive(query, limit, depth, passing)

    def _hits_pruned(self, query, limit, depth, passing: Filter | None) -> list[int] | None:
        """The pruned route's hits, or None where it cannot prove them (the caller then scans)."""
        if passing is not None and passing.nothing:
            self.routes["pruned"] += 1
            return []
        ids = np.array([t.term_id for t in query], dtype=np.int64)
        if (ids < 0).any():
            return None
        record = passing is not None and sum(t.end - t.start for t in query) > depth
        if passing is None:
            column, bounds, wants = _NO_PRICES, _NO_BOUNDS, _NO_WANTS
            services, shop = _NO_SERVICES, _NO_DOCS
        else:
            column, services, shop = np.asarray(passing.price), np.asarray(passing.services), np.asarray(passing.shop)
            bounds, wants = passing.compiled()
        args = (*self._scan_args(query, ids), passing is not None, column, services, shop, bounds, wants)
        if passing is not None and passing.shop_code is not None:
            return self._hits_in_shop(query, limit, depth, passing, args, record)
        # Only the heap route records (a shop search counts instead): its buffers, on first use.
        if record and self._records is None:
            rows = len(self._sums)
            self._records = (np.empty(rows, dtype=np.int32), np.empty(rows, dtype=np.float32))
        rec_docs, rec_values = self._records if record and self._records is not None else (_NO_DOCS, _NO_SCORES)
        rec_bits = rec_values.view(np.int32)
        counts = np.zeros(prune_kernel.BUCKETS if record else 0, dtype=np.int32)
        heap_docs = np.empty(limit, dtype=np.int32)
        heap_scores = np.empty(limit, dtype=np.float32)
        size, recorded = prune_kernel.top_hits(
            *args, limit, depth,
            heap_docs, heap_scores, self._acc, self._mark, self._seen, record, rec_docs, rec_values, rec_bits, counts,
            self._as_float, self._as_int, self.prune_stats,
        )  # fmt: skip
        order = np.lexsort((self._id_rank[heap_docs[:size]], -heap_scores[:size]))
        top = heap_docs[:size][order]
        self.routes["pruned"] += 1
        if record and size:
            # The kept hits within the depth: those with fewer than ``depth`` products ahead,
            # a first stretch of the list (products ahead never decrease down it).
            top_scores, top_ranks = heap_scores[:size][order], self._id_rank[top]
            found, values = rec_docs[:recorded], rec_values[:recorded]

            def ahead(j: int) -> int:
                return score_kernel.rank_of(found, values, self._id_rank, top_scores[j], top_ranks[j])

            if ahead(size - 1) >= depth:
                low, high = 0, size - 1  # the first hit with ``depth`` or more ahead lies in low..high
                while low < high:
                    middle = (low + high) // 2
                    if ahead(middle) >= depth:
                        high = middle
                    else:
                        low = middle + 1
                self.routes["pruned_depth_cut"] += 1
                top = top[:low]
        return top.tolist()

    def _hits_in_shop(self, query, limit, depth, passing: Filter, args: tuple, deep: bool) -> list[int]:
        """A shop's products are few: all of them are scored first, so the hits are known
        before the scan, which then only counts the products ahead of them (ranking mode)."""
        assert passing.shop_code is not None  # the caller routes shop searches here only
        members = self._shop_members(passing.shop, passing.shop_code)
        scores = np.empty(len(members), dtype=np.float32)
        starts, ends, weights = args[2], args[3], args[4]
        prune_kernel.subset_scores(self._docs, self._den, starts, ends, weights, members, scores)
        matched = scores > 0
        found, found_scores = members[matched], scores[matched]
        ok = passing(found)
        found, found_scores = found[ok], found_scores[ok]
        order = self.first(found, found_scores, limit, ordered=True)
        top, top_scores = found[order], found_scores[order]
        self.routes["pruned"] += 1
        self.routes["pruned_shop"] += 1
        if len(top) == 0 or not deep:  # fewer products match than the depth: none lies past it
            return top.tolist()
        within = self.within_depth(query, top, top_scores, depth)
        if within < len(top):
            self.routes["pruned_depth_cut"] += 1
        return top[:within].tolist()

    def within_depth(self, query: list[QueryTerm], docs: np.ndarray, scores: np.ndarray, depth: int) -> int:
        """How many of ``docs`` (products in ranking order, best first, with their float32
        ``scores``) have fewer than ``depth`` products ahead of them (needs the bounds)."""
        ids = np.array([t.term_id for t in query], dtype=np.int64)
        ahead = np.zeros(len(docs) + 1, dtype=np.int64)
        return prune_kernel.count_ahead(
            *self._scan_args(query, ids), np.ascontiguousarray(scores, dtype=np.float32), self._id_rank[docs],
            depth, self._acc, self._mark, self._seen, self.prune_stats, ahead,
        )  # fmt: skip

    def _scan_args(self, query: list[QueryTerm], ids: np.ndarray) -> ScanArgs:
        """The index and the query as the compiled scans take them (postings, weights, bounds, ranks)."""
        assert self.bounds is not None  # only the pruned route scans
        starts = np.array([t.start for t in query], dtype=np.int64)
        ends = np.array([t.end for t in query], dtype=np.int64)
        weights = np.array([t.weight for t in query], dtype=np.float32)
        return (
            self._docs, self._den, starts, ends, weights, self._rows[ids], self._max_den[ids], self._window_max,
            self._window_first, self.bounds.shift, len(self._sums), self._id_rank,
        )  # fmt: skip

    def _shop_members(self, column: np.ndarray, code: int) -> np.ndarray:
        """The positions of one shop's products, ascending (the column grouped once, on first use)."""
        if self._shops is None or self._shops[0] is not column:
            positions = np.argsort(column, kind="stable").astype(np.int32)
            self._shops = (column, np.asarray(column)[positions], positions)
        _, codes, positions = self._shops
        code = codes.dtype.type(code)  # of the column's type: another would convert all of ``codes`` each call
        return positions[np.searchsorted(codes, code, "left") : np.searchsorted(codes, code, "right")]

    def _hits_exhaustive(self, query, limit, depth, passing) -> list[int]:
        found = np.empty(sum(t.end - t.start for t in query), dtype=np.int32)
        count = 0
        for t in query:
            count = score_kernel.accumulate(
                self._docs[t.start : t.end], self._den[t.start : t.end], t.weight, self._sums, found, count
            )
        found = found[:count]
        mask = passing(found) if passing is not None else _ALL
        heap_docs = np.empty(limit, dtype=np.int32)
        heap_scores = np.empty(limit, dtype=np.float32)
        scores = np.empty(count, dtype=np.float32)
        size = score_kernel.best(found, self._sums, self._id_rank, mask, limit, heap_docs, heap_scores, scores)
        order = np.lexsort((self._id_rank[heap_docs[:size]], -heap_scores[:size]))
        top = heap_docs[:size][order]
        if passing is not None and count > depth and size:
            last = order[-1]
            ahead = score_kernel.rank_of(
                found, scores, self._id_rank, heap_scores[last], self._id_rank[heap_docs[last]]
            )
            if ahead >= depth:  # the depth cut bites: some passing hits lie past the first ``depth``
                self.routes["depth_cut"] += 1
                return self._cut(found.astype(np.int64), scores, limit, depth, passing)
        self.routes["kernel"] += 1
        return top.tolist()

    def _hits_numpy(self, query, limit, depth, passing) -> list[int]:
        self.routes["numpy"] += 1
        docs, scores = self.all_hits(query)
        return self._cut(docs, scores, limit, depth, passing)

    def _cut(self, docs, scores, limit, depth, passing) -> list[int]:
        """The first ``depth`` hits, then the first ``limit`` of them that pass, each id once."""
        if passing is not None:
            if len(docs) > depth:
                keep = self.first(docs, scores, depth)
                docs, scores = docs[keep], scores[keep]
            ok = passing(docs)
            docs, scores = docs[ok], scores[ok]
        ordered = docs[self.first(docs, scores, limit + self._repeats, ordered=True)]
        if self.canonical is None:
            return ordered.tolist()
        seen: set[int] = set()
        out = []
        for row in self.canonical[ordered].tolist():
            if row not in seen:
                seen.add(row)
                out.append(row)
        return out[:limit]


_TERM_CACHE = 200_000  # terms remembered (a few MB)
_ALL = np.empty(0, dtype=bool)  # "no filter" for the kernel
# Placeholders for the pruned route's unused arguments (typed as the real ones).
_NO_DOCS = np.empty(0, dtype=np.int32)
_NO_SCORES = np.empty(0, dtype=np.float32)
_NO_PRICES = np.empty(0, dtype=np.float64)
_NO_SERVICES = np.empty(0, dtype=np.uint8)
_NO_BOUNDS = np.zeros(2, dtype=np.float64)
_NO_WANTS = np.array([0, 0, 0, -1], dtype=np.int64)
