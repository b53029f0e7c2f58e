"""The official hit list, computed exactly and fast: every posting only when it must be.

The hit list the official server filters is "the first 100,000 products by BM25, equal
scores by product id". Scoring every product that shares a word with the query gives it
exactly, but on a catalog of a million products a common word has 200k postings, and a
request of fifteen words touches millions: tens of ms. So each term's postings are kept
twice: in document order (to look a product's term score up) and in impact order
(highest term score first). The first ``m`` postings of each term in impact order hold
every product that could lead; any product outside them scores at most the sum of the
terms' ``m``-th scores (the threshold algorithm, Fagin et al.). Once the ``k``-th best
candidate scores above that bound, the first ``k`` hits are exactly the candidates' first
``k``, ties included (an outside product cannot even tie). When the bound stays too high
(many query words of similar weight), the search falls back to scoring every posting.
Either way the answer is the same list; tests/test_search_official.py checks both routes
against a product-by-product oracle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from arena.shop import lucene_bm25
from arena.shop.catalog_files import Blobs

FIRST_PREFIX = 256  # impact-ordered postings per term in the first round
# Past this share of the query's postings, scoring them all is cheaper than more rounds.
PREFIX_SHARE = 0.25


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
    impact_docs: np.ndarray  # the same postings, highest term score first
    impact_den: np.ndarray


class Ranker:
    """Scores and orders hits by Lucene BM25, equal scores by ``id_rank`` (product-id order)."""

    def __init__(self, postings: Postings, terms: Blobs, doc_count: int, id_rank: np.ndarray, size: int) -> None:
        self.p = postings
        self.terms = terms
        self.doc_count = doc_count
        self.id_rank = id_rank
        self._sums = np.zeros(size, dtype=np.float64)  # all-zero between queries
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

    def leaders(self, query: list[QueryTerm], m: int) -> tuple[np.ndarray, np.ndarray, float]:
        """The products among each term's first ``m`` postings in impact order, their scores,
        and the most any other product can score."""
        heads = [self.p.impact_docs[t.start : min(t.end, t.start + m)] for t in query]
        docs = np.unique(np.concatenate(heads)).astype(np.int64)
        bound = 0.0
        for t in query:
            if t.end - t.start > m:  # a term not yet exhausted still adds up to its m-th score
                bound += float(lucene_bm25.term_scores(t.weight, self.p.impact_den[t.start + m : t.start + m + 1])[0])
        return docs, self.scores_of(query, docs), float(np.float32(bound)) if bound else 0.0

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
        ``depth`` hits of the whole ranking (the official server's search, then its filter)."""
        if not query or limit <= 0:
            return []
        postings = sum(t.end - t.start for t in query)
        m = FIRST_PREFIX
        while sum(min(m, t.end - t.start) for t in query) <= PREFIX_SHARE * postings:
            docs, scores, bound = self.leaders(query, m)
            exhausted = all(t.end - t.start <= m for t in query)  # the leaders are every hit
            kept = np.flatnonzero(scores > 0)
            if passing is not None:
                kept = kept[passing(docs[kept])]
            if len(kept) >= limit or exhausted:
                top = kept[self.first(docs[kept], scores[kept], limit, ordered=True)]
                if not len(top):
                    self.routes["leaders"] += 1
                    return []
                if scores[top[-1]] > bound or exhausted:
                    # Every product scoring >= the last hit is a candidate, so the last hit's rank
                    # in the whole ranking is known: the depth cut cannot bite above it.
                    if passing is None or self._rank_of(docs, scores, top[-1]) < depth:
                        self.routes["leaders"] += 1
                        return docs[top].tolist()
                    break
            m *= 4
        self.routes["all_postings"] += 1
        docs, scores = self.all_hits(query)
        if passing is not None:
            if len(docs) > depth:
                keep = self.first(docs, scores, depth)
                docs, scores = docs[keep], scores[keep]
            ok = passing(docs)
            docs, scores = docs[ok], scores[ok]
        return docs[self.first(docs, scores, limit, ordered=True)].tolist()

    def _rank_of(self, docs: np.ndarray, scores: np.ndarray, i: int) -> int:
        """0-based rank of candidate ``i`` among all candidates, by score then product id."""
        s, r = scores[i], self.id_rank[docs[i]]
        better = scores > s
        tied = scores == s
        return int(better.sum() + (tied & (self.id_rank[docs] < r)).sum())
