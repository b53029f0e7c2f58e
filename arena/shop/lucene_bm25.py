"""Lucene 9.9's BM25, to the bit: the official server's scores, not an approximation.

pyserini's LuceneSearcher scores with ``BM25Similarity(k1=0.9, b=0.4)``. What makes its
ranking exactly reproducible, and what a textbook BM25 gets wrong:

- the document length is stored in one byte (``SmallFloat.intToByte4``): lengths up to
  23 are exact, longer ones keep 4 significant bits, so documents of 96 and 103 terms
  share one norm;
- every step is float32 arithmetic (Java ``float``): the idf is ``(float) Math.log(...)``,
  the per-norm factor is ``1f / (k1 * ((1 - b) + b * length / avgdl))`` with a float32
  average length, and a term scores ``weight - weight / (1f + freq * normInverse)``, the
  rewrite of ``weight * freq / (freq + norm)`` Lucene uses for monotonicity (no k1 + 1);
- the clause scores of a query are summed in double and the sum cast to float32.

numpy float32 operations are IEEE single precision, like Java's (which never fuses a
multiply-add), so the same operations in the same order give the same bits.
"""

from __future__ import annotations

import math

import numpy as np

K1 = np.float32(0.9)  # Anserini's --bm25.k1 default, which LuceneSearcher uses
B = np.float32(0.4)  # --bm25.b


def _long_to_int4(value: int) -> int:
    bits = value.bit_length()
    if bits < 4:
        return value  # "subnormal": stored as is
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_long(code: int) -> int:
    bits = code & 0x07
    shift = (code >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


_MAX_INT4 = _long_to_int4(2**31 - 1)
_FREE_VALUES = 255 - _MAX_INT4  # lengths below this are stored exactly (24)


def length_to_norm(length: int) -> int:
    """``SmallFloat.intToByte4``: a field length as Lucene's one-byte norm (0-255)."""
    if length < 0:
        raise ValueError("a length cannot be negative")
    if length < _FREE_VALUES:
        return length
    return _FREE_VALUES + _long_to_int4(length - _FREE_VALUES)


def norm_to_length(norm: int) -> int:
    """``SmallFloat.byte4ToInt``: the length a norm byte stands for."""
    if norm < _FREE_VALUES:
        return norm
    return _FREE_VALUES + _int4_to_long(norm - _FREE_VALUES)


NORM_TABLE = np.array([length_to_norm(n) for n in range(4096)], dtype=np.uint8)  # the usual lengths, by lookup
LENGTH_TABLE = np.array([norm_to_length(n) for n in range(256)], dtype=np.float32)


def norms(lengths: np.ndarray) -> np.ndarray:
    """``length_to_norm`` for an array of field lengths."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.empty(len(lengths), dtype=np.uint8)
    small = lengths < len(NORM_TABLE)
    out[small] = NORM_TABLE[lengths[small]]
    for i in np.flatnonzero(~small):
        out[i] = length_to_norm(int(lengths[i]))
    return out


def average_length(sum_total_term_freq: int, doc_count: int) -> np.float32:
    """``(float) (sumTotalTermFreq / (double) docCount)``."""
    return np.float32(sum_total_term_freq / doc_count)


def norm_inverse_cache(avgdl: np.float32, k1: np.float32 = K1, b: np.float32 = B) -> np.ndarray:
    """``1f / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl))`` for every norm byte, in float32."""
    one = np.float32(1)
    return one / (k1 * ((one - b) + b * LENGTH_TABLE / np.float32(avgdl)))


def tf_denominators(freqs: np.ndarray, doc_norms: np.ndarray, cache: np.ndarray) -> np.ndarray:
    """``1f + freq * normInverse`` per posting: the query-independent half of a term's score."""
    return np.float32(1) + freqs.astype(np.float32) * cache[doc_norms]


def idf(doc_freq: int, doc_count: int) -> np.float32:
    """``(float) Math.log(1 + (docCount - docFreq + 0.5D) / (docFreq + 0.5D))``."""
    return np.float32(math.log(1 + (doc_count - doc_freq + 0.5) / (doc_freq + 0.5)))


def term_scores(weight: np.float32, denominators: np.ndarray) -> np.ndarray:
    """One query term's float32 score in each of its documents; ``weight`` is boost * idf."""
    return weight - weight / denominators
