"""The official hit list, computed exactly: every matching product scored, the best kept.

The hit list the official server filters is "the first 100,000 products by BM25, equal
scores by product id", then the first 50 of them that pass its filters. Every product
sharing a word with the query is scored (no pruning can drop a hit), by the compiled
loops of ``score_kernel``; the 50-slot heap keeps the best passing ones; and the
100,000-hit depth is checked by counting the candidates ahead of the last hit, and
applied exactly (``first``) in the rare case it bites. ``all_hits`` is the same scoring
in plain numpy: the reference the kernel is tested against, and what ``scored`` returns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.shop import lucene_bm25, score_kernel
from arena.shop.catalog_files import Blobs

# False: every search takes the plain numpy route (tests compare the two).
USE_KERNEL = True


@dataclass(frozen=True)
class QueryTerm:
    start: int
    end: int
    weight: np.float32  # boost (how often the query repeats the term) * idf


@dataclass(frozen=True)
class Postings:
    starts: np.ndarray  # per term id, its first posting (int64, n_terms + 1)
    docs: np.ndarray  # document order
    den: np.ndarray  # ``1f + freq * normInverse`` per posting, document order


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

    def query(self, terms: Counter[str]) -> list[QueryTerm]:
        out = []
        for term, repeats in terms.items():
            term_id = self.terms.find(term.encode())
            if term_id is None:
                continue
            start, end = int(self.p.starts[term_id]), int(self.p.starts[term_id + 1])
            out.append(QueryTerm(start, end, np.float32(repeats) * lucene_bm25.idf(end - start, self.doc_count)))
        return out

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
        if not query or limit <= 0:
            return []
        if not USE_KERNEL or self.canonical is not None:
            return self._hits_numpy(query, limit, depth, passing)
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


_ALL = np.empty(0, dtype=bool)  # "no filter" for the kernel
