"""The score bounds the pruned route searches with, written with the index (format 5).

Per term: its largest ``den`` (``term_max_den``). Per
common term (at least two postings per window on average) and window of ``2**shift``
product positions: the largest ``den`` of its postings there (``window_max_den``, a row
per such term, ``term_window_row`` maps a term to its row or -1), and where they start
(``window_first``). A term's float32 score
grows with ``den``, so these give each term's exact best score overall and per window
(``prune_kernel``). Rare terms get no row: their postings are few, and the route checks
cheaply whether a window holds any.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena.shop import prune_kernel
from arena.shop.catalog_files import load_array, save_array
from arena.shop.ranking import Bounds

# 4096 positions: the window's accumulator (32 KiB of doubles) stays in the first-level
# cache, a million products make 245 windows, each visited in well under a microsecond.
# Measured at 1M (benchmarks/search.py): 1024-position windows skip more of them but cost
# more to visit (long requests 20% slower); 8192 are no faster.
WINDOW_SHIFT = 12
MIN_POSTINGS_PER_WINDOW = 2  # a term has a row from this many postings per window on average


def write_bounds(
    out: Path, starts: np.ndarray, docs: np.ndarray, den: np.ndarray, rows: int, shift: int | None = None
) -> int:
    """Write the bounds of the postings ``starts``/``docs``/``den`` over ``rows`` positions
    (windows of ``2**shift``, ``WINDOW_SHIFT`` by default); returns the shift."""
    shift = WINDOW_SHIFT if shift is None else shift
    n_terms = len(starts) - 1
    max_den = np.empty(n_terms, dtype=np.float32)
    prune_kernel.term_max_den(den, starts, max_den)
    n_windows = max(1, (rows + (1 << shift) - 1) >> shift)
    blocked = np.flatnonzero(np.diff(starts) >= MIN_POSTINGS_PER_WINDOW * n_windows).astype(np.int64)
    window_row = np.full(n_terms, -1, dtype=np.int32)
    window_row[blocked] = np.arange(len(blocked), dtype=np.int32)
    window_max = np.empty((len(blocked), n_windows), dtype=np.float32)
    window_first = np.empty((len(blocked), n_windows + 1), dtype=np.int32)
    prune_kernel.window_maxima(docs, den, starts, blocked, shift, window_max, window_first)
    save_array(out, "term_max_den", max_den)
    save_array(out, "term_window_row", window_row)
    save_array(out, "window_max_den", window_max)
    save_array(out, "window_first", window_first)
    return shift


def load_bounds(folder: Path, shift: int) -> Bounds:
    return Bounds(
        max_den=load_array(folder, "term_max_den"),
        rows=load_array(folder, "term_window_row"),
        window_max=load_array(folder, "window_max_den"),
        window_first=load_array(folder, "window_first"),
        shift=shift,
    )
