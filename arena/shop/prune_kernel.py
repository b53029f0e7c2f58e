"""The first hits of a search without scoring every posting: block-max MaxScore, compiled.

The exhaustive route (``score_kernel``) scores every posting of every query term into
one array as large as the catalog; a fifteen-word request on a million products touches
millions of postings, scattered over it. This route gives the same hits, bit for bit,
and skips what provably cannot be among them. The products are cut into windows of
``2**shift`` consecutive positions, searched one after the other with an accumulator
that fits the CPU's first-level cache. The index stores, per common term and window, the
largest ``den`` of its postings there (``window_maxima``). A term's float32 score
``weight - weight / den`` never decreases as ``den`` grows (IEEE division and subtraction
round monotonically), so ``weight - weight / max_den`` is the term's exact best score in
the window: a true upper bound, not an estimate.

Per window, with ``theta`` the score of the worst of the ``k`` hits kept so far:

- if the bounds of the terms present sum below ``theta``, nothing in it can enter;
- else the terms of smallest bounds, as many as sum below ``theta``, are
  "non-essential": a product that only they reach cannot enter either. The candidates
  are the products the other terms reach; each is scored with every query term, in
  query order, so its sum is Lucene's to the bit (double, in the order of the query).

A product is dropped only when its float32 score is strictly below the kept worst hit's,
so a product that ties it (and may win on product id) is always scored. Bound sums are
compared with ``SLACK``: a sum of float32 values in double may round differently in
another order, by far less. ``theta`` only rises, so a product dropped early is also below
the final last hit: what this route does not score is never among the hits, nor ahead of
them (which the depth check needs, ``ranking``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from arena.shop.score_kernel import push

# A bound summed in double, and a score summed in double in another order, each lie
# within n * 2**-53 of the exact sums (n terms, far under 2**20): inflating the bound by
# 2**-30 keeps it above any score it bounds, whatever the rounding.
SLACK = 1.0 + 2.0**-30


# -- built with the index -----------------------------------------------------------------


@njit(cache=True, nogil=True)
def term_max_den(den, starts, out):  # pragma: no cover - compiled
    """Each term's largest ``den`` (its best possible score)."""
    for t in range(starts.shape[0] - 1):
        high = np.float32(0)
        for i in range(starts[t], starts[t + 1]):
            if den[i] > high:
                high = den[i]
        out[t] = high


@njit(cache=True, nogil=True)
def window_maxima(docs, den, starts, blocked, shift, out, first):  # pragma: no cover - compiled
    """``out[r, w]``: the largest ``den`` of term ``blocked[r]`` among products of window
    ``w`` (positions ``w << shift`` to ``(w + 1) << shift``), 1 (a score of 0) where it
    has none; ``first[r, w]``: its first posting there, counted from the term's first
    (``first[r, w + 1]`` ends the window's)."""
    out[:] = np.float32(1)
    first[:] = 0
    n_windows = out.shape[1]
    for r in range(blocked.shape[0]):
        t = blocked[r]
        for i in range(starts[t], starts[t + 1]):
            w = docs[i] >> shift
            first[r, w + 1] += 1
            if den[i] > out[r, w]:
                out[r, w] = den[i]
        for w in range(n_windows):
            first[r, w + 1] += first[r, w]


# -- searched -----------------------------------------------------------------------------


# The depth floor: scores by bucket, the top 16 bits of their float32 (sign, exponent and
# 7 mantissa bits: for positive scores, a bucket order that is the score order), so that
# "at least ``depth`` products score >= the bucket's lowest value" is kept up cheaply.
BUCKETS = 1 << 15


@njit(cache=True, nogil=True)
def _lower_bound(docs, i, end, value):  # pragma: no cover - compiled
    """The first position in ``[i, end)`` whose product is >= ``value`` (``end`` if none): postings
    are in product order."""
    while i < end:
        middle = (i + end) >> 1
        if docs[middle] < value:
            i = middle + 1
        else:
            end = middle
    return i


@njit(cache=True, nogil=True, inline="always")  # inlined where called: no call in the window loop
def _gallop(docs, i, end, value):  # pragma: no cover - compiled
    """``_lower_bound`` from ``i`` when the answer is likely near: doubling steps, then bisection."""
    if i >= end or docs[i] >= value:
        return i
    low = i
    jump = 1
    probe = i + 1
    while probe < end and docs[probe] < value:
        low = probe
        jump *= 2
        probe = low + jump
    if probe > end:
        probe = end
    return _lower_bound(docs, low + 1, probe, value)


@njit(cache=True, nogil=True)
def subset_scores(docs, den, starts, ends, weights, subset, out):  # pragma: no cover - compiled
    """``out[s]``: the float32 score of product ``subset[s]`` (positions in ascending order),
    0 where no query term reaches it; summed term by term in query order in double, as
    ``top_hits`` sums a candidate, so the two agree to the bit."""
    m = subset.shape[0]
    acc = np.zeros(m, dtype=np.float64)
    for t in range(starts.shape[0]):
        w = weights[t]
        i = starts[t]
        end = ends[t]
        for s in range(m):
            i = _gallop(docs, i, end, subset[s])
            if i >= end:
                break
            if docs[i] == subset[s]:
                acc[s] += w - w / den[i]
    for s in range(m):
        out[s] = np.float32(acc[s])


@njit(cache=True, nogil=True, inline="always")
def _at_candidates(marked, term_score):  # pragma: no cover - compiled
    """A non-essential term's score where ``marked`` (a candidate), else 0, without a branch:
    about every other posting of such a term meets a candidate, so a branch mispredicts
    that often (a quarter of a long request at 1M). Exact: ``marked`` is 0 or 1, a term
    score is positive and finite, so the product is the score or +0, and adding +0 to
    the accumulator leaves it as it was."""
    return marked * term_score


@njit(cache=True, nogil=True)
def _better(score_a, rank_a, score_b, rank_b):  # pragma: no cover - compiled
    return score_a > score_b or (score_a == score_b and rank_a < rank_b)


@njit(cache=True, nogil=True, inline="always")
def _scratch(starts, weights, max_den):  # pragma: no cover - compiled
    """A scan's per-term state: cursors, window ends, bounds, an order, the essential
    flags, and each term's overall bound (its best score anywhere)."""
    n = starts.shape[0]
    overall = np.empty(n, dtype=np.float32)
    for t in range(n):
        overall[t] = weights[t] - weights[t] / max_den[t]
    bound = np.empty(n, dtype=np.float64)
    return (
        starts.copy(),
        np.empty(n, dtype=np.int64),
        bound,
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.bool_),
        overall,
    )


@njit(cache=True, nogil=True, inline="always")
def _open_window(
    docs, starts, ends, weights, rows, window_max, window_first, overall, win, high, theta, cur, wend, bound, stats
):  # pragma: no cover - compiled
    """Window ``win``'s postings of each term (``cur[t]:wend[t]``) and its bound there
    (``bound[t]``, 0 where absent); False (the cursors moved past it) when no term is
    present or the bounds sum below ``theta``: nothing in it can count."""
    total = 0.0
    present = 0
    for t in range(starts.shape[0]):
        row = rows[t]
        if row >= 0:  # a common term: its window's postings are stored
            cur[t] = starts[t] + window_first[row, win]
            i = starts[t] + window_first[row, win + 1]
        else:  # wend[t]: the first posting past the window
            i = _gallop(docs, cur[t], ends[t], high)
        wend[t] = i
        if i > cur[t]:
            present += 1
            if row >= 0:
                bound[t] = weights[t] - weights[t] / window_max[row, win]
            else:
                bound[t] = overall[t]
            total += bound[t]
        else:
            bound[t] = 0.0
    if present == 0:
        return False
    stats[0] += 1
    if np.float32(total * SLACK) < theta:
        stats[1] += 1
        for t in range(starts.shape[0]):
            cur[t] = wend[t]
        return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _essential_terms(bound, theta, order, essential):  # pragma: no cover - compiled
    """Marks the essential terms: all but those of smallest bounds, as many as sum below
    ``theta`` (a product none of the others reaches scores below it); returns whether any
    term present is not essential."""
    n = bound.shape[0]
    for j in range(n):
        order[j] = j
    for j in range(1, n):  # by bound, smallest first (a handful: insertion sort)
        t = order[j]
        i = j - 1
        while i >= 0 and bound[order[i]] > bound[t]:
            order[i + 1] = order[i]
            i -= 1
        order[i + 1] = t
    small = 0.0
    split = False
    for j in range(n):
        t = order[j]
        small += bound[t]
        essential[t] = bound[t] > 0.0 and not np.float32(small * SLACK) < theta
        if bound[t] > 0.0 and not essential[t]:
            split = True
    return split


@njit(cache=True, nogil=True)
def top_hits(
    docs,
    den,
    starts,
    ends,
    weights,
    rows,
    max_den,
    window_max,
    window_first,
    shift,
    n_rows,
    id_rank,
    use_filter,
    price,
    services,
    shop,
    bounds,
    wants,
    k,
    depth,
    heap_docs,
    heap_scores,
    acc,
    mark,
    seen,
    record,
    rec_docs,
    rec_values,
    rec_bits,
    counts,
    as_float,
    as_int,
    stats,
):  # pragma: no cover - compiled
    """The first ``k`` products that pass (all when not ``use_filter``), by float32 score
    then ``id_rank``, in ``heap_docs``/``heap_scores`` (unordered); returns (kept, recorded).

    Query term ``t`` (in query order) has postings ``starts[t]:ends[t]``, weight
    ``weights[t]``, and window bounds and postings in ``window_max[rows[t]]`` and
    ``window_first[rows[t]]`` (``rows[t]`` < 0: its overall ``max_den[t]``, and its
    postings in a window are sought from a cursor).

    With ``record`` (a filter, and maybe more than ``depth`` matches), every product
    scored, passing or not, is written to ``rec_docs``/``rec_values``, and a histogram of
    their scores (``counts``, ``BUCKETS`` zeros, by the top bits of ``rec_bits``, the int32
    view of ``rec_values``; ``as_float`` one float32 and ``as_int`` its int32 view, to
    make a floor of its bits) gives a floor that at least ``depth`` of
    them reach: a product below it lies past the depth, so it is skipped like one below
    the kept hits. Every product ahead of a kept hit that lies within the depth is then
    recorded, so counting the recorded ones ahead of each kept hit places it exactly
    (``score_kernel.ahead_counts``); a kept hit past the depth has ``depth`` or more ahead.

    ``acc`` (``2**shift`` doubles, all zero), ``mark`` (as many zero bytes) and ``seen``
    (one more int32: the listing writes one past the last product, see below) are scratch;
    ``stats`` adds up windows, windows skipped, candidates, postings read."""
    if seen.shape[0] <= 1 << shift:
        raise ValueError("top_hits needs 2**shift + 1 entries of seen")
    n = starts.shape[0]
    size = 0
    recorded = 0
    theta = np.float32(-np.inf)  # the larger of the kept hits' worst and the depth floor
    floor_bucket = 0  # the floor's bucket (0: no floor yet)
    above = 0  # products in the histogram in buckets >= floor_bucket
    histogram_end = 0  # the products recorded before this one are in the histogram
    # The filter (``ranking.Filter``'s comparisons, NaN prices failing a bound as in numpy).
    # Helpers taking arrays cost a reference count each call: the hot loops are written out.
    shop_code, has_low, has_high, want = wants[3], wants[0] != 0, wants[1] != 0, wants[2]
    price_low, price_high = bounds[0], bounds[1]
    cur, wend, bound, order, essential, overall = _scratch(starts, weights, max_den)
    width = 1 << shift
    n_windows = (n_rows + width - 1) >> shift
    for win in range(n_windows):
        low = win << shift
        high = low + width
        if not _open_window(
            docs, starts, ends, weights, rows, window_max, window_first, overall, win, high, theta, cur, wend, bound, stats,
        ):  # fmt: skip
            continue
        split = _essential_terms(bound, theta, order, essential)
        # The candidates: every product an essential term reaches (found while scoring when
        # every term present is essential). Listed without a branch: each posting writes its
        # product to ``seen`` and the count moves on only at a first touch (a branch there
        # mispredicts on about every other posting; 6% of a request at 1M).
        count = 0
        if split:
            for t in range(n):
                if essential[t]:
                    for i in range(cur[t], wend[t]):
                        off = docs[i] - low
                        seen[count] = off
                        count += 1 - mark[off]
                        mark[off] = 1
        # Their scores, term by term in query order (Lucene's order of the additions): an
        # essential term's postings all count; a non-essential term's only at candidates,
        # read through (short lists) or looked up (few candidates).
        for t in range(n):
            if bound[t] == 0.0:
                continue
            w = weights[t]
            first, last = cur[t], wend[t]
            cur[t] = last
            if essential[t]:
                stats[3] += last - first
                if split:
                    for i in range(first, last):
                        acc[docs[i] - low] += w - w / den[i]
                else:
                    for i in range(first, last):
                        off = docs[i] - low
                        seen[count] = off
                        count += 1 - mark[off]
                        mark[off] = 1
                        acc[off] += w - w / den[i]
            elif count * 8 < last - first:
                stats[3] += count
                for s in range(count):
                    d = low + seen[s]
                    i = _lower_bound(docs, first, last, d)
                    if i < last and docs[i] == d:
                        acc[seen[s]] += w - w / den[i]
            else:
                stats[3] += last - first
                for i in range(first, last):  # branchless: see ``_at_candidates``
                    off = docs[i] - low
                    acc[off] += _at_candidates(mark[off], w - w / den[i])
        stats[2] += count
        for s in range(count):
            off = seen[s]
            score = np.float32(acc[off])
            acc[off] = 0.0
            mark[off] = 0
            if score < theta:
                continue
            d = low + off
            ok = True
            if use_filter:
                if shop_code >= 0 and shop[d] != shop_code:
                    ok = False
                elif has_low and not price[d] >= price_low:
                    ok = False
                elif has_high and not price[d] <= price_high:
                    ok = False
                elif (services[d] & want) != want:
                    ok = False
            if not ok and not record:
                continue
            if record:
                rec_docs[recorded] = d
                rec_values[recorded] = score
                recorded += 1
            if ok and (size < k or _better(score, id_rank[d], heap_scores[0], id_rank[heap_docs[0]])):
                size = push(heap_docs, heap_scores, size, k, d, score, id_rank)
                if size == k and heap_scores[0] > theta:
                    theta = heap_scores[0]
        # The depth floor, once ``depth`` products are scored: the window's scores join the
        # histogram (by the top bits of a positive float32) and the floor rises while
        # ``depth`` of them stay at or above it.
        if recorded >= depth:
            for r in range(histogram_end, recorded):
                b = rec_bits[r] >> 16
                counts[b] += 1
                if b >= floor_bucket:
                    above += 1
            histogram_end = recorded
            if above - counts[floor_bucket] >= depth:
                while above - counts[floor_bucket] >= depth:
                    above -= counts[floor_bucket]
                    floor_bucket += 1
                as_int[0] = floor_bucket << 16
                if as_float[0] > theta:
                    theta = as_float[0]
    return size, recorded


@njit(cache=True, nogil=True)
def count_ahead(
    docs,
    den,
    starts,
    ends,
    weights,
    rows,
    max_den,
    window_max,
    window_first,
    shift,
    n_rows,
    id_rank,
    hit_scores,
    hit_ranks,
    depth,
    acc,
    mark,
    seen,
    stats,
    ahead,
):  # pragma: no cover - compiled
    """How many of the known hits (best first: ``hit_scores``/``hit_ranks``, a shop's
    products, all scored, see ``ranking``) have fewer than ``depth`` products ahead of
    them in the whole ranking.

    ``theta`` starts at the last hit's score: a product below it is ahead of no hit.
    Windows and non-essential terms are skipped as in ``top_hits``. Each product scored
    at or above ``theta`` adds one to ``ahead[j]``, ``j`` the first hit it ranks ahead of,
    so the products ahead of hit ``j`` are ``ahead[0] + ... + ahead[j]``. After each
    window the hits with ``depth`` or more ahead are cut, ``theta`` rises to the last one
    left, and the scan ends when none is.

    A low ``theta`` makes most of a window's products candidates, so the window is scored
    densely: every essential posting is added straight into ``acc`` (term by term in query
    order, as ``top_hits`` sums a candidate: the same float32 to the bit), then ``acc`` is
    swept, and each product at or above ``theta`` placed by its score's bucket. The scan
    also ends once too few postings remain to put ``depth`` products ahead of the last hit
    kept. ``acc`` (``2**shift`` doubles) and ``mark`` (as many bytes) are all zero and left
    so, ``seen`` (as many int32) is scratch; ``stats`` as in ``top_hits``. At most 32,767
    hits (the bucket table holds hit positions in int16, to stay in the first-level cache)."""
    n = starts.shape[0]
    n_hits = hit_scores.shape[0]
    left = n_hits
    if n_hits == 0:
        return 0
    if n_hits >= 1 << 15:
        raise ValueError("count_ahead takes at most 32,767 hits")
    theta = hit_scores[n_hits - 1]
    window = np.empty(1 << shift, dtype=np.float32)
    window_bits = window.view(np.int32)
    # Four counters per hit, taken in turn: consecutive products mostly fall in one
    # slot, and one counter would make each increment wait for the one before.
    banks = np.zeros((n_hits + 1) << 2, dtype=np.int64)
    # Scores by bucket (their float32 bits shifted right by ``step``: in score order), from
    # the last hit's bucket to the best's, at most 2**13 of them (a table in the first-level
    # cache): ``table`` gives, for a bucket no hit lies in, the first hit all its products
    # rank ahead of (slot 0: below the last hit's bucket, behind every hit; the last slot:
    # above the best's); for a bucket hits ``j`` to ``k - 1`` lie in, ``-1 - j`` (``k`` in
    # ``tied_end``): its products are placed among those hits one by one.
    hit_bits = hit_scores.view(np.int32)
    step = 11
    while (hit_bits[0] >> step) - (hit_bits[n_hits - 1] >> step) >= 1 << 13:
        step += 1
    first_bucket = hit_bits[n_hits - 1] >> step
    last_slot = (hit_bits[0] >> step) - first_bucket + 2
    table = np.empty(last_slot + 1, dtype=np.int16)
    tied_end = np.zeros(last_slot + 1, dtype=np.int16)
    table[0] = n_hits
    table[last_slot] = 0
    j = n_hits  # the first hit whose bucket lies below the current one (buckets rising)
    for slot in range(1, last_slot):
        bucket = first_bucket + slot - 1
        while j > 0 and (hit_bits[j - 1] >> step) < bucket:
            j -= 1
        k = j
        while j > 0 and (hit_bits[j - 1] >> step) == bucket:
            j -= 1
        table[slot] = j if k == j else -1 - j
        tied_end[slot] = k
    cur, wend, bound, order, essential, overall = _scratch(starts, weights, max_den)
    overall_bound = overall.astype(np.float64)
    reaching = np.empty(n, dtype=np.bool_)  # the terms essential by their overall bounds
    _essential_terms(overall_bound, theta, order, reaching)
    width = 1 << shift
    n_windows = (n_rows + width - 1) >> shift
    for win in range(n_windows):
        low = win << shift
        high = low + width
        if not _open_window(
            docs, starts, ends, weights, rows, window_max, window_first, overall, win, high, theta, cur, wend, bound, stats,
        ):  # fmt: skip
            continue
        split = _essential_terms(bound, theta, order, essential)
        if split:  # the candidates: the products an essential term reaches
            for t in range(n):
                if essential[t]:
                    for i in range(cur[t], wend[t]):
                        mark[docs[i] - low] = 1
        for t in range(n):
            if bound[t] == 0.0:
                continue
            w = weights[t]
            first, last = cur[t], wend[t]
            cur[t] = last
            stats[3] += last - first
            if essential[t]:
                for i in range(first, last):
                    acc[docs[i] - low] += w - w / den[i]
            else:  # only at candidates (a product it alone reaches scores below theta)
                for i in range(first, last):
                    off = docs[i] - low
                    acc[off] += _at_candidates(mark[off], w - w / den[i])
        # The sweep, in loops without unpredictable branches: the window's scores (``acc``
        # zeroed behind), the products at or above ``theta`` listed in ``seen``, then each
        # one's bucket looked up in ``table``. The first loop has no cross-iteration store
        # and compiles to vector code; folding the listing into it made it scalar (8% of
        # this scan's time on the shop searches of the 900 official requests at 1M).
        span = min(width, n_rows - low)
        scored = 0
        for off in range(span):
            a = acc[off]
            acc[off] = 0.0
            window[off] = np.float32(a)
            scored += a != 0.0
        count = 0
        for off in range(span):
            seen[count] = off
            count += window[off] >= theta
        stats[2] += scored
        tied = 0
        for c in range(count):
            off = seen[c]
            slot = min(max((window_bits[off] >> step) - first_bucket + 1, 0), last_slot)
            e = table[slot]
            if e >= 0:
                banks[(e << 2) | (c & 3)] += 1
            else:  # a bucket hits lie in: placed below, off this loop's fast path
                seen[tied] = off  # (tied <= c: the list is compacted in place)
                tied += 1
        for e in range(n_hits + 1):
            ahead[e] += banks[e << 2] + banks[(e << 2) | 1] + banks[(e << 2) | 2] + banks[(e << 2) | 3]
        banks[:] = 0
        for t in range(tied):  # ahead of the hits of lower buckets, behind those of higher
            off = seen[t]
            score = window[off]
            rank = id_rank[low + off]
            slot = min(max((window_bits[off] >> step) - first_bucket + 1, 0), last_slot)
            e = -1 - table[slot]
            end = tied_end[slot]
            while e < end and not _better(score, rank, hit_scores[e], hit_ranks[e]):
                e += 1
            ahead[e] += 1
        if split:
            mark[:span] = 0
        before = 0
        for j in range(left):
            before += ahead[j]
            if before >= depth:
                left = j
                break
        if left == 0:
            return 0
        if hit_scores[left - 1] > theta:
            theta = hit_scores[left - 1]
            _essential_terms(overall_bound, theta, order, reaching)
        # Each product still to come that could reach ``theta`` has a posting of a term
        # whose best score is not too small: when too few such postings are left to put
        # ``depth`` products ahead of the last hit kept, every hit kept stays within.
        rest = 0
        for j in range(left):
            rest += ahead[j]
        for t in range(n):
            if reaching[t]:
                rest += ends[t] - cur[t]
        if rest < depth:
            return left
    return left
