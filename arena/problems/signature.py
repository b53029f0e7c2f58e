"""What makes two problems the same underlying problem: an exact signature and a text sketch.

The exact signature (:func:`problem_signature`) hashes what a problem asks for
once surface form is stripped away: the gold product set with each product's
constraints canonicalised (keys sorted, values lower-cased, price ranges reduced
to the interval the scorer accepts) and the voucher terms. Two problems with
equal signatures are restatements of one problem, whatever their wording or
the order of their constraints.

The text sketch (:func:`query_tokens`, :func:`shingles`, :func:`minhash_matrix`)
catches the variants the signature cannot: paraphrases whose gold was
re-grounded in another catalog, or whose constraints were edited. It is
datasketch's MinHash (scheme ``affine32``), computed for many problems at once
with numpy instead of one ``MinHash.update_batch`` per problem; a test checks
the two agree value for value.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

import numpy as np
import orjson
from datasketch import MinHash

from arena.problems.model import Problem, ProductReward

# --- exact signature --------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")


def _text(value: object) -> str:
    """Lower-case, trimmed, single-spaced: the form two equal constraint values share."""
    return _SPACES.sub(" ", str(value)).strip().lower()


def _number(value: float | None) -> float | None:
    # Rounded to cents so that 5, 5.0 and 5.000001 (a float round trip) compare equal.
    return None if value is None else round(float(value), 2)


def price_interval(prices: Sequence[dict[str, list[float | None]]]) -> tuple[float, float | None] | None:
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
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TRAILING_ZEROS = re.compile(r"(\d)\.0+\b")
_TOKEN = re.compile(r"[a-z0-9]+(?:['.][a-z0-9]+)*")
# Price phrasings that mean one thing become one token, so "priced above 50 PHP" and "costing
# more than 50 pesos" shingle alike while "above" and "below" stay apart. Order matters:
# "no more than" before "more than".
_PRICE_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\b(?:no more than|not more than|at most|up to|less than|lower than|cheaper than|below|under)\b", " lt "),
        (r"\b(?:more than|greater than|higher than|at least|above|over|exceeding)\b", " gt "),
        (r"\bfrom (\d+(?:\.\d+)?) to (\d+(?:\.\d+)?)\b", r" between \1 and \2 "),
        (r"₱", " php "),
    )
)
# Words every request uses (function words, request verbs, price verbs, currency). Dropping
# them leaves the words that say what is asked, so a reworded template still matches while
# two tasks that share only the template ("Show me X priced above N PHP") do not.
STOP_WORDS = frozenset(
    """a an the and or of for with in on at to by from as that which who whose is are be been it its this these
    those some any all me i i'm im my we you your show find looking look want need searching search would like
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
    text = _TRAILING_ZEROS.sub(r"\1", _THOUSANDS.sub("", text.lower()))
    for pattern, replacement in _PRICE_PHRASES:
        text = pattern.sub(replacement, text)
    return [token for token in _TOKEN.findall(text) if token not in STOP_WORDS]


def shingles(tokens: Sequence[str], size: int) -> list[bytes]:
    """Distinct word shingles of ``size`` words (a text shorter than that is one shingle)."""
    if not tokens:
        return []
    if len(tokens) <= size:
        return [" ".join(tokens).encode()]
    return sorted({" ".join(tokens[i : i + size]).encode() for i in range(len(tokens) - size + 1)})


# --- MinHash, many at once --------------------------------------------------------------------

MINHASH_SCHEME = "affine32"
_EMPTY = np.uint32(0xFFFFFFFF)
_sha1 = hashlib.sha1
# Shingles per vectorised block: bounds the (block x num_perm) uint32 work array (16 MiB at 128).
_BLOCK = 32_768


def _fmix32(values: np.ndarray) -> np.ndarray:
    # The MurmurHash3 32-bit finalizer, as datasketch applies it before its affine permutations.
    values = values ^ (values >> np.uint32(16))
    values = values * np.uint32(0x85EBCA6B)
    values = values ^ (values >> np.uint32(13))
    values = values * np.uint32(0xC2B2AE35)
    return values ^ (values >> np.uint32(16))


def minhash_matrix(docs: Sequence[Sequence[bytes]], num_perm: int, seed: int) -> np.ndarray:
    """MinHash signatures of many shingle sets: an (n, num_perm) uint32 array.

    Row i equals ``MinHash(num_perm, seed, scheme="affine32")`` updated with ``docs[i]``
    (sha1-based 32-bit shingle hashes: fixed, not salted per process like ``hash()``).
    An empty document keeps datasketch's empty value (all 0xFFFFFFFF); callers skip it.
    """
    a, b = MinHash(num_perm=num_perm, seed=seed, scheme=MINHASH_SCHEME).permutations
    a, b = a.astype(np.uint32), b.astype(np.uint32)
    out = np.full((len(docs), num_perm), _EMPTY, dtype=np.uint32)
    lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    start = 0
    with np.errstate(over="ignore"):  # the permutations are arithmetic modulo 2^32 on purpose
        while start < len(docs):
            # Take whole documents until the block is full (always at least one document).
            stop, total = start, 0
            while stop < len(docs) and (stop == start or total + lengths[stop] <= _BLOCK):
                total += int(lengths[stop])
                stop += 1
            rows = [i for i in range(start, stop) if lengths[i]]
            if rows:
                # sha1_hash32 (datasketch's default) without its per-call struct unpacking.
                digests = b"".join(_sha1(s).digest()[:4] for i in rows for s in docs[i])
                hashes = np.frombuffer(digests, dtype="<u4").astype(np.uint32)
                permuted = _fmix32(hashes)[:, None] * a[None, :] + b[None, :]
                offsets = np.concatenate(([0], np.cumsum(lengths[rows])[:-1]))
                out[rows] = np.minimum.reduceat(permuted, offsets, axis=0)
            start = stop
    return out
