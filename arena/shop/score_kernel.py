"""The exhaustive route's loops, compiled (numba): score every posting, keep the best hits.

(The usual route, ``prune_kernel``, skips what cannot rank; this one is its benchmark
peer and the route of indexes without score bounds. ``push`` is both routes' heap.)

numpy needs about eight passes over memory per posting (slices, the float32 term score,
a gather, a compare, a compress, a gather-add-scatter) and then a partial sort of every
candidate; on a million products a common word has 200k postings, and a request of
fifteen words touches millions. One compiled pass per term and one pass over the
candidates with a 50-slot heap do the same work several times faster.

Exactness: the term score is ``weight - weight / den`` in float32 and the sum is in
double, as in Lucene (``lucene_bm25``); numba keeps float32 arithmetic in float32 and,
without ``fastmath``, never reassociates or fuses it. ``ranking.Ranker.all_hits`` is the
plain numpy version of the same computation; tests/arena/shop/test_search_official.py checks both
against a product-by-product oracle.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def accumulate(docs, den, weight, sums, found, count):  # pragma: no cover - compiled
    """Add one term's scores to ``sums``; append products seen for the first time to
    ``found`` (from ``count``); return the new count. Every term score is > 0, so a zero
    sum means "not seen yet"."""
    for i in range(docs.shape[0]):
        d = docs[i]
        score = weight - weight / den[i]
        if sums[d] == 0.0:
            found[count] = d
            count += 1
        sums[d] += score
    return count


@njit(cache=True, nogil=True)
def _worse(score_a, rank_a, score_b, rank_b):  # pragma: no cover - compiled
    return score_a < score_b or (score_a == score_b and rank_a > rank_b)


@njit(cache=True, nogil=True)
def push(heap_docs, heap_scores, size, k, d, score, id_rank):  # pragma: no cover - compiled
    """Offer product ``d`` to the ``k``-slot heap of ``size`` hits, whose root is its worst
    (lowest score, then highest ``id_rank``); returns the new size."""
    rank = id_rank[d]
    if size < k:
        # sift up
        j = size
        size += 1
        while j > 0:
            parent = (j - 1) // 2
            if _worse(score, rank, heap_scores[parent], id_rank[heap_docs[parent]]):
                heap_docs[j] = heap_docs[parent]
                heap_scores[j] = heap_scores[parent]
                j = parent
            else:
                break
        heap_docs[j] = d
        heap_scores[j] = score
    elif _worse(heap_scores[0], id_rank[heap_docs[0]], score, rank):
        # replace the root, sift down
        j = 0
        while True:
            left = 2 * j + 1
            if left >= size:
                break
            child = left
            right = left + 1
            if right < size and _worse(
                heap_scores[right], id_rank[heap_docs[right]], heap_scores[left], id_rank[heap_docs[left]]
            ):
                child = right
            if _worse(heap_scores[child], id_rank[heap_docs[child]], score, rank):
                heap_docs[j] = heap_docs[child]
                heap_scores[j] = heap_scores[child]
                j = child
            else:
                break
        heap_docs[j] = d
        heap_scores[j] = score
    return size


@njit(cache=True, nogil=True)
def best(found, sums, id_rank, passing, k, heap_docs, heap_scores, scores):  # pragma: no cover - compiled
    """The first ``k`` of ``found`` that pass (``passing`` by position, or empty for all),
    by float32 score then ``id_rank``. Moves each candidate's sum into ``scores`` (as
    float32) and resets it in ``sums``. Returns how many hits it kept, in
    ``heap_docs``/``heap_scores`` (unordered)."""
    size = 0
    use_filter = passing.shape[0] > 0
    for i in range(found.shape[0]):
        d = found[i]
        score = np.float32(sums[d])
        scores[i] = score
        sums[d] = 0.0
        if use_filter and not passing[i]:
            continue
        if size < k or _worse(heap_scores[0], id_rank[heap_docs[0]], score, id_rank[d]):
            size = push(heap_docs, heap_scores, size, k, d, score, id_rank)
    return size


@njit(cache=True, nogil=True)
def rank_of(found, scores, id_rank, score, rank):  # pragma: no cover - compiled
    """How many of the candidates come before a hit of (``score``, ``rank``)."""
    ahead = 0
    for i in range(found.shape[0]):
        s = scores[i]
        if s > score or (s == score and id_rank[found[i]] < rank):
            ahead += 1
    return ahead
