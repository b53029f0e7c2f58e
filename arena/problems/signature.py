"""What makes two problems the same underlying problem: an exact signature and a text sketch.

The exact signature (:func:`problem_signature`) hashes what a problem asks for
once surface form is stripped away: the gold product set with each product's
constraints canonicalised (keys sorted, values lower-cased, price ranges reduced
to the interval the scorer accepts) and the voucher terms. Two problems with
equal signatures are restatements of one problem, whatever their wording or
the order of their constraints.

The text sketch (:func:`query_tokens`, :func:`shingle_hashes`, :func:`minhash_matrix`)
catches the variants the signature cannot: paraphrases whose gold was
re-grounded in another catalog, or whose constraints were edited. It is
datasketch's MinHash (scheme ``affine32``) over word shingles, computed for many
problems at once with numpy instead of one ``MinHash.update_batch`` per problem;
a test checks the two agree value for value.
"""

from __future__ import annotations

import hashlib
import math
import re
import string
from array import array
from collections.abc import Iterable, Sequence

import numpy as np
import orjson

from arena.problems.model import PriceMode, Problem, ProductReward

# --- exact signature --------------------------------------------------------------------------


def _text(value: object) -> str:
    """Lower-case, trimmed, single-spaced: the form two equal constraint values share."""
    return " ".join(str(value).lower().split())


def _number(value: float | None) -> float | None:
    # Rounded to cents so that 5, 5.0 and 5.000001 (a float round trip) compare equal.
    return None if value is None else round(float(value), 2)


def price_interval(prices: Sequence[dict[PriceMode, list[float | None]]]) -> tuple[float, float | None] | None:
    """The price interval a reward's price constraints accept together, as the scorer reads them.

    Every bound is inclusive (``arena.scoring.outcome._price_hit``): ``between [lo, hi]``
    accepts lo..hi, ``greater than [lo, _]`` accepts lo.. (its upper slot is ignored) and
    ``less than [_, hi]`` accepts ..hi (its lower slot is ignored). Prices are never
    negative, so a missing lower bound is 0 and ``less than [0, 10]`` equals
    ``between [0, 10]``; several entries intersect, so ``greater than 5`` plus
    ``less than 10`` equals ``between [5, 10]``. No constraint, or one that accepts every
    price, gives ``None``.
    """
    lo, hi = 0.0, math.inf
    for entry in prices:
        for mode, bounds in entry.items():
            low = bounds[0] if len(bounds) > 0 else None
            high = bounds[1] if len(bounds) > 1 else None
            if mode == "greater than":
                high = None
            elif mode == "less than":
                low = None
            if low is not None:
                lo = max(lo, float(low))
            if high is not None:
                hi = min(hi, float(high))
    if lo <= 0.0 and hi == math.inf:
        return None
    return (_number(lo) or 0.0, None if hi == math.inf else _number(hi))


def canonical_reward(reward: ProductReward) -> dict:
    """One gold product's constraints in a form that ignores order, case and price phrasing."""
    attributes: dict[str, set[str]] = {}
    for entry in reward.attributes:
        for key, values in entry.items():
            attributes.setdefault(_text(key), set()).update(_text(v) for v in values)
    options = {(_text(k), _text(v)) for entry in reward.sku_options for k, v in entry.items()}
    return {
        "product_id": reward.product_id,
        "title": sorted({_text(t) for t in reward.title}),
        "price": price_interval(reward.price),
        "attributes": {k: sorted(v) for k, v in sorted(attributes.items())},
        "sku_options": sorted(options),
        "service": sorted({_text(s) for s in reward.service}),
    }


def canonical_problem(problem: Problem) -> dict:
    """The signature's content: gold products with their constraints, and the voucher terms.

    The intent is left out on purpose: a one-item shop task asking exactly what a
    product task asks is the same problem. A knowledge task is its gold product and
    the fact it hinges on (two riddles with one answer and one product leak each other).
    """
    if problem.knowledge is not None:
        return {
            "knowledge": _text(problem.knowledge.knowledge_attribute),
            "product_id": problem.knowledge.product.product_id,
        }
    rewards = sorted((canonical_reward(r) for r in problem.rewards), key=lambda r: orjson.dumps(r))
    content: dict = {"rewards": rewards}
    if problem.voucher is not None:
        v = problem.voucher
        # price_after_voucher is left out: it follows from the gold prices and the terms.
        content["voucher"] = {
            "voucher_type": v.voucher_type,
            "threshold": _number(v.threshold),
            "discount_type": v.discount_type,
            "face_value": _number(v.face_value),
            "discount": _number(v.discount),
            "cap": _number(v.cap),
            "budget": _number(v.budget),
        }
    return content


def problem_signature(problem: Problem) -> str:
    """sha256 (hex) of :func:`canonical_problem`; equal for restatements of one problem."""
    return hashlib.sha256(orjson.dumps(canonical_problem(problem), option=orjson.OPT_SORT_KEYS)).hexdigest()


# --- query text -------------------------------------------------------------------------------

# The official voucher paragraph ("My budget is only `425`, but I have a voucher with the
# following rules: ...") is rendered from the voucher terms, which the signature compares
# exactly. As text it is ~45 words of boilerplate that makes any two voucher tasks look
# 60-70% alike, so it is cut before shingling.
_VOUCHER_PARAGRAPH = re.compile(r"\bmy budget is\b", re.IGNORECASE)
# "1,000" -> "1000" and "81.00" -> "81": one number, one token.
_NUMBER_NOISE = re.compile(r"(?<=\d),(?=\d{3}\b)|(?<=\d)\.0+\b")
# Words are runs of letters and digits: apostrophes join ("kids'" -> "kids", "i'm" -> "im"),
# other punctuation splits ("t-shirt" -> "t shirt"). str.translate + split is ~4x a regex findall.
_SPLIT = str.maketrans({**{c: " " for c in string.punctuation + "“”‘«»—–…•·€$₱"}, "'": None, "’": None})
# Price phrasings that mean one thing become one token, so "priced above 50 PHP" and "costing
# more than 50 pesos" shingle alike while "above" and "below" stay apart. Replaced on the
# space-padded word string, longest phrase first ("no more than" before "more than"): str.replace
# runs at C speed, where a regex alternation or a Python loop over the words cost 2-5x more.
_AT_MOST = "no more than|not more than|at most|up to|less than|lower than|cheaper than|below|under"
_AT_LEAST = "more than|greater than|higher than|at least|above|over|exceeding"
_PRICE_PHRASES = sorted(
    [
        (f" {phrase} ", f" {token} ")
        for phrases, token in ((_AT_MOST, "lt"), (_AT_LEAST, "gt"))
        for phrase in phrases.split("|")
    ],
    key=lambda pair: -len(pair[0]),
)
_FROM_TO = re.compile(r" from (\d+) to (\d+) ")
# Words every request uses (function words, request verbs, price verbs, currency). Dropping
# them leaves the words that say what is asked, so a reworded template still matches while
# two tasks that share only the template ("Show me X priced above N PHP") do not.
STOP_WORDS = frozenset(
    """a an the and or of for with in on at to by from as that which who whose is are be been it its this these
    those some any all me i im my we you your show find looking look want need searching search would like
    please can could also should has have there here one ones item items product products priced price prices
    cost costs costing pricing php peso pesos""".split()
)


def query_tokens(problem: Problem) -> list[str]:
    """The query's content words: lower-cased, price phrasing and number formats unified,
    request boilerplate and stop words dropped, the voucher paragraph cut (see above)."""
    text = problem.query
    if problem.voucher is not None:
        cut = _VOUCHER_PARAGRAPH.search(text)
        if cut is not None:
            text = text[: cut.start()]
    text = text.lower()
    if "," in text or ".0" in text:
        text = _NUMBER_NOISE.sub("", text)
    padded = " " + " ".join(text.translate(_SPLIT).split()) + " "
    for phrase, token in _PRICE_PHRASES:
        while phrase in padded:  # a loop: adjacent matches share their separating space
            padded = padded.replace(phrase, token)
    if " from " in padded:
        padded = _FROM_TO.sub(r" between \1 \2 ", padded)
    return [word for word in padded.split() if word not in STOP_WORDS]


# --- word shingles and MinHash, many at once --------------------------------------------------
#
# A shingle is ``size`` consecutive words (a text shorter than that is one shingle of all its
# words). Its 32-bit hash is built from the words' sha1 hashes with a fixed 64-bit mix, so a
# shingle is hashed with a few numpy operations instead of a string join and a sha1 each; the
# hash is fixed (never Python's per-process salted hash()). ``shingle_hash`` is the definition,
# ``shingle_hashes`` its vectorised form, and a MinHash row is datasketch's
# ``MinHash(num_perm, seed, hashfunc=int, scheme="affine32")`` updated with those hashes.

MINHASH_SCHEME = "affine32"
_EMPTY = np.uint32(0xFFFFFFFF)
_MASK64 = (1 << 64) - 1
_MIX_A, _MIX_B = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
# Words hashed per vectorised block (its int64/uint64 temporaries: ~0.5 MiB each) and shingles
# permuted per block (its (block x num_perm) uint32 temporaries: 4 MiB each at 128 permutations).
_WORD_BLOCK = 65_536
_PERM_BLOCK = 8_192


def word_hash(word: str) -> int:
    """64 bits of sha1(word)."""
    return int.from_bytes(hashlib.sha1(word.encode()).digest()[:8], "little")


def _mix(acc: int, word: int) -> int:
    acc = ((acc * _MIX_A) + word) & _MASK64  # order-sensitive: (a, b) and (b, a) differ
    acc ^= acc >> 31
    acc = (acc * _MIX_B) & _MASK64
    return acc ^ (acc >> 29)


def shingle_hash(words: Sequence[str]) -> int:
    """The 32-bit hash of one shingle (the reference for :func:`shingle_hashes`)."""
    acc = word_hash(words[0])
    for word in words[1:]:
        acc = _mix(acc, word_hash(word))
    return acc >> 32


def _mix_np(acc: np.ndarray, word: np.ndarray) -> np.ndarray:
    acc = acc * np.uint64(_MIX_A) + word
    acc ^= acc >> np.uint64(31)
    acc = acc * np.uint64(_MIX_B)
    return acc ^ (acc >> np.uint64(29))


def shingle_hashes(docs: Iterable[Sequence[str]], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Every shingle hash of every document (uint32, document after document) and each document's count.

    ``docs`` is consumed once, one document at a time, and hashed in blocks of about _WORD_BLOCK
    words, so a generator of token lists never sits in memory whole and the numpy temporaries
    stay a few MiB. Repeated shingles are kept: a MinHash is a minimum, which a repeat cannot change.
    """
    known: dict[str, int] = {}  # word -> word_hash, each distinct word hashed once
    parts: list[np.ndarray] = []
    counts = array("q")
    words, lengths = array("Q"), array("q")
    for doc in docs:
        words.extend([known[w] if w in known else known.setdefault(w, word_hash(w)) for w in doc])
        lengths.append(len(doc))
        if len(words) >= _WORD_BLOCK:
            parts.append(_block_shingles(words, lengths, size, counts))
            words, lengths = array("Q"), array("q")
    parts.append(_block_shingles(words, lengths, size, counts))
    return np.concatenate(parts), np.frombuffer(counts, dtype=np.int64).copy()


def _block_shingles(words: array, lengths: array, size: int, counts_out: array) -> np.ndarray:
    hashes = np.frombuffer(words, dtype=np.uint64) if words else np.empty(0, dtype=np.uint64)
    lengths_np = np.frombuffer(lengths, dtype=np.int64) if lengths else np.empty(0, dtype=np.int64)
    counts = np.where(lengths_np > 0, np.maximum(lengths_np - size + 1, 1), 0)
    counts_out.extend(counts.tolist())
    # Shingle s of a document starts at word doc_start + s and spans min(size, length) words.
    doc_start = np.cumsum(lengths_np) - lengths_np
    starts = np.repeat(doc_start, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    spans = np.repeat(np.minimum(lengths_np, size), counts)
    acc = hashes[starts]
    with np.errstate(over="ignore"):  # the mix is arithmetic modulo 2^64 on purpose
        for k in range(1, size):
            inside = spans > k
            acc[inside] = _mix_np(acc[inside], hashes[starts[inside] + k])
    return (acc >> np.uint64(32)).astype(np.uint32)


def _fmix32(values: np.ndarray) -> np.ndarray:
    # The MurmurHash3 32-bit finalizer, as datasketch applies it before its affine permutations.
    values = values ^ (values >> np.uint32(16))
    values = values * np.uint32(0x85EBCA6B)
    values = values ^ (values >> np.uint32(13))
    values = values * np.uint32(0xC2B2AE35)
    return values ^ (values >> np.uint32(16))


def minhash_matrix(hashes: np.ndarray, counts: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    """MinHash signatures from :func:`shingle_hashes`: an (n_docs, num_perm) uint32 array.

    Row i equals datasketch's ``MinHash(num_perm, seed, hashfunc=int, scheme="affine32")``
    updated with document i's shingle hashes (a test checks it value for value). A document
    without shingles keeps datasketch's empty value (all 0xFFFFFFFF); callers skip it.
    """
    # datasketch pulls in scipy: import it only when hashing (keeps `arena` start fast).
    from datasketch import MinHash

    a, b = MinHash(num_perm=num_perm, seed=seed, scheme=MINHASH_SCHEME).permutations
    a, b = a.astype(np.uint32), b.astype(np.uint32)
    out = np.full((len(counts), num_perm), _EMPTY, dtype=np.uint32)
    ends = np.cumsum(counts)
    doc = 0
    with np.errstate(over="ignore"):  # the permutations are arithmetic modulo 2^32 on purpose
        while doc < len(counts):
            # Whole documents up to _PERM_BLOCK shingles (at least one document).
            first = int(ends[doc] - counts[doc])
            stop = max(doc + 1, int(np.searchsorted(ends, first + _PERM_BLOCK, side="right")))
            rows = doc + np.flatnonzero(counts[doc:stop])
            if len(rows):
                block = hashes[first : int(ends[stop - 1])]
                permuted = _fmix32(block)[:, None] * a[None, :] + b[None, :]
                offsets = (ends[rows] - counts[rows]) - first
                out[rows] = np.minimum.reduceat(permuted, offsets, axis=0)
            doc = stop
    return out
