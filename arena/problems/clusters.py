"""Leak clusters: every variant of one underlying problem in one cluster.

Partitions (public qualifying suite, hidden race bank, distill train pool,
held-out eval) are drawn by cluster, never by problem, so a paraphrase of an
eval problem can never sit in the training pool. Five rules link problems and
union-find merges the links; each effective merge keeps its reason:

1. ``signature``: equal exact signatures (gold products, canonical constraints,
   voucher terms; see :mod:`arena.problems.signature`).
2. ``near_duplicate_text``: MinHash-LSH over word shingles of the normalised
   request finds candidate pairs; a pair links when its MinHash Jaccard estimate
   reaches ``minhash_threshold`` *and* the two asks agree (:mod:`arena.problems.asks`:
   every constraint value equal, content words equal up to a one-letter spelling
   difference). Text similarity alone never links.
3. ``same_constraints``: equal canonical constraint sets read from the text
   (content words after lemmas and synonyms, numbers, price directions, services,
   voucher terms) whose reward parts, where both have one, agree: the same request
   however worded, whatever the gold ids.
4. ``gold_overlap``: the problems share at least ``gold_overlap`` of the smaller
   gold product set (an inverted index gold id -> problems finds them).
5. ``same_meaning``: the cosine of the two requests' meaning vectors (a static
   distillation of all-MiniLM-L6-v2, :mod:`arena.problems.meaning`) reaches
   ``meaning_threshold``, within one intent, among each request's nearest ``neighbours``.

Rules 1 and 4 link whatever the wording says. Rules 2, 3 and 5 propose candidates that
merge unless the veto (:func:`arena.problems.twins.conflict`) finds a confident
constraint conflict between the pair, or between one side and a member of the other
cluster that reads alike: a twin never chains into its source's cluster through a
paraphrase of the source.

Problems are processed sorted by id and the union-find root is always the
smallest member, so the clusters, their ids and the recorded merges depend on
the set of problems only, never on input order. docs/leak-clusters.md has the
measurements behind the defaults.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from arena.problems.asks import Ask, asks_agree, concepts_match
from arena.problems.model import Intent, Problem
from arena.problems.readers import SECOND_READER_MIN, PoolReader, default_readers
from arena.problems.signature import minhash_matrix, problem_signature, shingle_hashes
from arena.problems.twins import (
    PAIR_ONLY,
    Request,
    conflict,
    two_things_bought,
    value_key,
    voucher_key,
)

MergeReason = Literal[
    "signature", "near_duplicate_text", "same_constraints", "gold_overlap", "same_meaning", "same_values"
]
REASONS: tuple[MergeReason, ...] = (
    "signature",
    "near_duplicate_text",
    "same_constraints",
    "gold_overlap",
    "same_meaning",
    "same_values",
)
# Soft links are tried in this order (then by ids; the meaning links by cosine): the precise rules first.
_SOFT_RANK: dict[str, int] = {"near_duplicate_text": 0, "same_constraints": 1, "same_meaning": 2, "same_values": 3}
# A "same values" bucket (every number in its role, class value, service, name and voucher amount
# equal) proposes its pairs when it states at least this many values and holds at most
# ``_VALUES_BUCKET`` requests: "Uniqlo linen shirt, white, size L, under ₱1,500" and its Taglish
# rewording share no words the meaning model reads alike (cosine 0.61) but every value.
_VALUES_MIN = 3
_VALUES_BUCKET = 8
# ... and when their meaning vectors still read somewhat alike (all values equal and the words
# about something else is two products sharing a size, a colour and a price).
_VALUES_COSINE = 0.45
# A voucher request's terms and budget copied number for number need no cosine: its product is often
# said only in a story ("kaso wala koy blender. naa koy voucher ₱100 off ...") that the meaning text
# leaves out. Below ``_VALUES_COSINE`` what one side buys must be said in the other's query
# (:func:`_bought_in_both`) and every member of the two clusters is compared (``soft_link(every=True)``).
_VOUCHER_COSINE = -1.0

# LSH band choice weights (false positive, false negative). Every candidate is verified
# with its MinHash estimate, so a false positive costs one vector compare while a false
# negative is a leak: weigh misses 4:1. At threshold 0.5 and 128 permutations this gives
# 30 bands of 4 rows, which proposes a pair of true Jaccard 0.55 with probability 0.94
# (datasketch's default 0.5/0.5 picks 25 x 5: 0.73).
LSH_WEIGHTS = (0.2, 0.8)
# Candidate pairs verified per numpy block: bounds the (pairs x num_perm) compare arrays.
_PAIR_BLOCK = 65_536
# Meaning candidates turned into Python ints per block.
_CANDIDATE_BLOCK = 4096


class ClusterConfig(BaseModel):
    """How problems are linked into leak clusters. The defaults are measured, see docs/leak-clusters.md."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    minhash_threshold: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="MinHash Jaccard estimate at which two normalised queries are near-duplicates. At 0.5 no two "
        "of the 900 official tasks link by text (4 at 0.3, 2 at 0.4), while 96-100% of reworded and reordered "
        "variants of them do; same-template siblings with other values link 11% of the time (24% at 0.4).",
    )
    num_perm: int = Field(
        128,
        ge=16,
        le=1024,
        description="MinHash permutations: the estimate's standard error at J=0.5 is 0.044, and the signature "
        "matrix costs 512 bytes per problem.",
    )
    shingle_size: int = Field(
        2,
        ge=1,
        le=8,
        description="Words per shingle. Word pairs keep a number tied to its role (between 81 and 200 vs between "
        "200 and 350) and link fewer same-template siblings than single words (11% vs 30%); three-word "
        "shingles lose reordered clauses (47% of reordered variants found vs 96%).",
    )
    gold_overlap: float = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="Link two problems sharing this fraction of the smaller gold set: whoever memorised one "
        "answer then holds at least half of the other, and a one-product task links whenever its product is "
        "gold anywhere else. On the official tasks every shared gold set is shared whole (ratio 1.0).",
    )
    seed: int = Field(1, description="Seed of the MinHash permutations; fixed so cluster ids are reproducible.")
    meaning_threshold: float = Field(
        0.65,
        gt=0.0,
        le=1.0,
        description="Cosine of two requests' meaning vectors (all-MiniLM-L6-v2, static) at which they are "
        "candidates to merge; a candidate merges unless a confident constraint conflict calls them twins. "
        "Chosen on the hand-written development pairs, see docs/leak-clusters.md.",
    )
    neighbours: int = Field(
        16,
        ge=1,
        le=256,
        description="Nearest neighbours per request kept as meaning candidates (those above the threshold): "
        "bounds the conflict checks when a template has thousands of look-alikes.",
    )
    meaning_dims: int = Field(
        128,
        ge=16,
        le=384,
        description="Principal axes of the model's vocabulary the meaning vectors are projected on.",
    )


class ClusterMerge(BaseModel):
    """One union of two clusters: the pair that linked them and why."""

    a: str
    b: str
    reason: MergeReason
    detail: str


class Clustering(BaseModel):
    """The outcome: each problem's cluster and the merges that built the clusters (a spanning forest)."""

    cluster_of: dict[str, str]
    merges: list[ClusterMerge] = Field(default_factory=list)

    def members(self) -> dict[str, list[str]]:
        """Cluster id -> sorted member problem ids, ordered by cluster id."""
        groups: dict[str, list[str]] = defaultdict(list)
        for problem_id, cluster_id in self.cluster_of.items():
            groups[cluster_id].append(problem_id)
        return {cid: sorted(groups[cid]) for cid in sorted(groups)}


def cluster_id_for(smallest_member: str) -> str:
    """A cluster's id: stable as long as its smallest member stays in it."""
    return "c-" + hashlib.sha256(smallest_member.encode()).hexdigest()[:12]


class _UnionFind:
    """Union-find whose root is always the smallest index (= the smallest problem id)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self.parent
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:  # path compression
            parent[i], i = root, parent[i]
        return root

    def union(self, i: int, j: int) -> bool:
        ri, rj = self.find(i), self.find(j)
        if ri == rj:
            return False
        if rj < ri:
            ri, rj = rj, ri
        self.parent[rj] = ri
        return True


def cluster_problems(
    problems: Sequence[Problem], config: ClusterConfig | None = None, readers: int | None = None
) -> Clustering:
    """Group problems into leak clusters; raises ValueError on a repeated problem id.

    ``readers``: processes that read the requests (1 or 2; by default two for a pool of
    :data:`arena.problems.readers.SECOND_READER_MIN` problems or more where a second core exists). The
    clustering is the same either way.

    Raises :class:`arena.problems.meaning.MeaningModelUnavailable` (with the install line)
    when the embedding model is not installed: there is no weaker fallback.
    """
    config = config or ClusterConfig()
    ordered = sorted(problems, key=lambda p: p.id)
    ids = [p.id for p in ordered]
    for prev, cur in zip(ids, ids[1:], strict=False):
        if prev == cur:
            sources = [p.source or "?" for p in ordered if p.id == cur]
            raise ValueError(
                f"problem id {cur!r} appears {len(sources)} times (from {', '.join(sources)}); "
                "give each problem once (the same file twice?)"
            )
    from arena.problems import lexicon
    from arena.problems.meaning import static_embedder

    embedder = static_embedder(config.meaning_dims)  # first: a missing model fails before any work
    lexicon.available()  # so does a missing WordNet database, with its install line
    # Each query is split once for both readings; a split is dropped once its request is read. Large
    # pools are read in two processes (arena/problems/readers.py), each problem as one process would;
    # the second reader starts now, reading while the hard links are found.
    with PoolReader(ordered, default_readers(len(ordered)) if readers is None else readers) as reader:
        forest = _UnionFind(len(ordered))
        # (a, b, reason, detail) as plain tuples until the readings are dropped: 15k pydantic models
        # held through the veto cost ~10 MB of the 100k peak.
        merges: list[tuple[str, str, MergeReason, str]] = []

        def link(i: int, j: int, reason: MergeReason, detail: str) -> None:
            if forest.union(i, j):
                merges.append((ids[min(i, j)], ids[max(i, j)], reason, detail))

        # Hard links: the same gold, the same answer. They hold whatever the wording says.
        for i, j, detail in _signature_links(ordered):
            link(i, j, "signature", detail)
        for i, j, detail in _gold_links(ordered, config.gold_overlap, forest):
            link(i, j, "gold_overlap", detail)

        # Soft links: candidates from the text, the constraints and the meaning, each merged
        # unless a confident conflict separates the pair, or any member of one cluster from any
        # member of the other (no chaining of twins through a third problem).
        asks = reader.asks()
        candidates: list[tuple[int, int, int, MergeReason, str]] = []
        for i, j, detail in _text_links(asks, config):
            if asks_agree(asks[i], asks[j]) and concepts_match(asks[i], asks[j]):
                candidates.append((_SOFT_RANK["near_duplicate_text"], i, j, "near_duplicate_text", detail))
        for i, j, detail in _constraint_links(asks):
            candidates.append((_SOFT_RANK["same_constraints"], i, j, "same_constraints", detail))
        candidates.sort(key=lambda c: c[:3])
        del asks  # read one after the other, never both held: the peak is the problems and one reading
        # Read and embedded a block at a time: the veto never reads the texts, so 100k of them are never
        # held at once (each row's vector is its own text's, whatever the block).
        vectors = np.empty((len(ordered), embedder.table.shape[1]), dtype=np.float32)
        requests = reader.requests(embedder.embed, vectors)
    if len(ordered) >= SECOND_READER_MIN:
        _empty_reading_memos()
    # The meaning candidates stay numpy arrays (a million pairs at 100k problems would be ~150 MB
    # of tuples), nearest first, ties by ids.
    lo, hi, cos = meaning_links(ordered, vectors, config)
    order = np.lexsort((hi, lo, -cos)).astype(np.int32)
    # The members of each cluster of two or more (a root missing here is alone): 100k one-member
    # lists would hold ~10 MB for nothing.
    members: dict[int, list[int]] = defaultdict(list)
    for k in range(len(ordered)):
        members[forest.find(k)].append(k)
    members = defaultdict(list, {root: ks for root, ks in members.items() if len(ks) > 1})
    near = config.meaning_threshold - 1e-6

    def soft_link(i: int, j: int, reason: MergeReason, detail: str, every: bool = False) -> None:
        ri, rj = forest.find(i), forest.find(j)
        if ri == rj or conflict(requests[i], requests[j]) is not None:
            return
        # Against the other cluster's members that read alike (a twin beside its source); a member
        # joined by gold or signature that reads otherwise ("trousers" for "jeans") does not veto.
        # A link that does not read alike itself (``every``: a voucher's terms copied) is checked
        # against every member: nothing else says the two clusters ask one thing.
        for x in members.get(ri, (ri,)):
            for y in members.get(rj, (rj,)):
                # Two riddles with one answer are compared whatever their cosine: their clues
                # read alike or not, and only the product asked tells them apart.
                if (x, y) != (i, j) and (
                    every or one_answer(requests[x], requests[y]) or float(vectors[x] @ vectors[y]) >= near
                ):
                    if binds_clusters(conflict(requests[x], requests[y])):
                        return
        link(i, j, reason, detail)
        root = forest.find(i)
        members[root] = members.pop(ri, [ri]) + members.pop(rj, [rj])

    for _, i, j, reason, detail in candidates:
        soft_link(i, j, reason, detail)
    for start in range(0, len(order), _CANDIDATE_BLOCK):  # a million candidates as Python ints: ~36 MB
        for k in order[start : start + _CANDIDATE_BLOCK].tolist():
            soft_link(int(lo[k]), int(hi[k]), "same_meaning", f"cosine {float(cos[k]):.3f}")
    for i, j, detail, floor in _value_links(requests, ordered):
        cosine = float(vectors[i] @ vectors[j])
        if cosine < floor or two_things_bought(requests[i], requests[j]):
            continue
        if cosine < _VALUES_COSINE and not _bought_in_both(requests[i], requests[j], ordered[i], ordered[j]):
            continue
        soft_link(i, j, "same_values", detail, every=cosine < _VALUES_COSINE)
    # The readings and vectors go before the answer is built (the peak of a 100k clustering is here);
    # one id string per cluster, not per problem.
    requests, members = [], defaultdict(list)  # rebound, not deleted: soft_link above closes over them
    # (copies: an empty view would keep its array's memory)
    vectors, lo, hi, cos, order = vectors[:0].copy(), lo[:0].copy(), hi[:0].copy(), cos[:0].copy(), order[:0].copy()
    root_ids: dict[int, str] = {}
    cluster_of = {}
    for i, pid in enumerate(ids):
        root = forest.find(i)
        cluster_of[pid] = root_ids.get(root) or root_ids.setdefault(root, cluster_id_for(ids[root]))
    return Clustering(
        cluster_of=cluster_of,
        merges=[ClusterMerge(a=a, b=b, reason=reason, detail=detail) for a, b, reason, detail in merges],
    )


def one_answer(a: Request, b: Request) -> bool:
    """Two riddles known to ask one fact: members compared whatever their cosine."""
    return a.fact is not None and a.fact == b.fact


def binds_clusters(why: str | None) -> bool:
    """A conflict between members of two clusters that keeps the clusters apart (one that binds the
    pair only, :data:`arena.problems.twins.PAIR_ONLY`, does not)."""
    return why is not None and not why.startswith(PAIR_ONLY)


def _empty_reading_memos() -> None:
    """Empty the readers' memo tables (lemmas, respellings, senses, details) once a large pool is read:
    100k requests fill them with words the veto never asks about again, ~40 MB once freed (100k benchmark,
    with the int32 candidates and the tuple merges: peak RSS 1,020 -> 995 MiB, no slower; 988 MiB with the
    freed pages given back); the veto refills what it uses. Small pools keep
    them: they cost little there, and the next clustering reuses them."""
    from arena.problems import asks, clues, heads, lexicon, phrase_table, signature, tagalog, twins

    for module in (asks, twins, heads, lexicon, clues, tagalog, phrase_table, signature):
        for value in vars(module).values():
            info = getattr(value, "cache_info", None)
            # not the one-entry tables (the dictionary's files, the compound nouns): loaded once, kept
            if info is not None and (info().maxsize or 0) > 64:
                value.cache_clear()
    _give_back_freed_memory()


def _give_back_freed_memory() -> None:
    """Return the C heap's freed pages to the system (glibc's ``malloc_trim``): the memos and the asks
    freed ~40 MB that the heap would otherwise keep resident through the peak. Elsewhere (no glibc)
    nothing is done; only the peak's height depends on it."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        trim = getattr(libc, "malloc_trim", None)
    except OSError:
        trim = None
    if trim is not None:
        trim(0)


def _bought_in_both(a: Request, b: Request, pa: Problem, pb: Problem) -> bool:
    """Two voucher requests whose texts do not read alike: what one buys is said somewhere in the other
    ("a blender" in a story, "kaso wala koy blender"), for each side that names a thing; "Shoes" and "mom
    jeans" on the same terms are two asks."""
    checked = False
    for request, other in ((a, pb.query.lower()), (b, pa.query.lower())):
        heads = [h for h in request.whole.heads if len(h) >= 3]
        if heads:
            checked = True
            if not any(h.replace("_", " ") in other for h in heads):
                return False
    return checked


def _value_links(requests: Sequence[Request], ordered: Sequence[Problem]) -> Iterator[tuple[int, int, str, float]]:
    """Pairs of one intent that state the same values (see ``_VALUES_MIN``), in id order. Each key is
    held as 8 bytes of its BLAKE2 digest (100k tuples of strings held at once cost ~30 MB of the
    clustering's 1 GiB); requests with equal digests are the bucket. Two keys, each its own buckets:
    every value, and a voucher request's terms and budget alone (``twins.voucher_key``: the rest of
    a voucher request is often its product said in a word or a story)."""
    for keyed, floor in ((lambda r: value_key(r, _VALUES_MIN), _VALUES_COSINE), (voucher_key, _VOUCHER_COSINE)):
        for i, j, detail in _bucket_links(requests, ordered, keyed):
            yield i, j, detail, floor


def _bucket_links(
    requests: Sequence[Request], ordered: Sequence[Problem], keyed: Callable[[Request], tuple[str, ...] | None]
) -> Iterator[tuple[int, int, str]]:
    digests = np.zeros(len(requests), dtype=np.uint64)
    for k, request in enumerate(requests):
        key = keyed(request)
        if key is not None:
            text = f"{_FAMILY[ordered[k].intent]}|" + "|".join(key)
            digests[k] = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") | 1
    order = np.lexsort((np.arange(len(requests)), digests))
    ranked = digests[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    ends = np.r_[starts[1:], len(ranked)]
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        if ranked[start] == 0 or not 2 <= end - start <= _VALUES_BUCKET:
            continue
        members = sorted(order[start:end].tolist())
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                yield i, j, f"{len(members)} requests state the same values"


def assign_clusters(problems: Sequence[Problem], config: ClusterConfig | None = None) -> list[Problem]:
    """Copies of ``problems`` (input order) with ``cluster_id`` set."""
    clustering = cluster_problems(problems, config)
    return [p.model_copy(update={"cluster_id": clustering.cluster_of[p.id]}) for p in problems]


# --- meaning: nearest neighbours by cosine ---------------------------------------------------

# Meaning links stay within one intent: a shop request is a set of items, a voucher request
# carries terms and a riddle a fact that the others lack, so two requests of two intents that
# read alike ("a beard brush and a hair clipper" / "a hair clipper") are two problems. A
# one-item shop task that asks what a product task asks still links by its constraints or gold.
_FAMILY = {Intent.product: 0, Intent.shop: 1, Intent.voucher: 2, Intent.knowledge: 3}


def intent_family(intent: Intent) -> int:
    """The family the meaning signal compares within (each intent its own)."""
    return _FAMILY[intent]


# Rows of the all-pairs product per block: a (block x family) float32 array, 50 MB at 100k (256 rows
# held 100 MB and put the 100k peak at 1,007 MiB; 128 rows: 975 MiB, the same CPU time).
_ROW_BLOCK = 128


def meaning_links(
    ordered: Sequence[Problem], vectors: np.ndarray, config: ClusterConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (lo < hi, and their cosine) of one intent whose meaning vectors reach
    ``meaning_threshold``, at most ``neighbours`` per request (the nearest; ties by index, so the
    set is deterministic)."""
    threshold = config.meaning_threshold - 1e-6
    found_lo, found_hi, found_cos = [np.empty(0, np.int32)], [np.empty(0, np.int32)], [np.empty(0, np.float32)]
    for family in sorted(set(_FAMILY.values())):
        rows = np.array([i for i, p in enumerate(ordered) if _FAMILY[p.intent] == family], dtype=np.int64)
        if len(rows) < 2:
            continue
        group = vectors[rows]
        for start in range(0, len(rows), _ROW_BLOCK):
            sims = group[start : start + _ROW_BLOCK] @ group.T
            block = np.arange(sims.shape[0])
            sims[block, start + block] = -1.0  # a request is not its own neighbour
            # Hits are few: found flat and cut into (row, column), twenty times faster than a 2-D
            # nonzero over the whole block.
            local, other = np.divmod(np.flatnonzero(sims >= threshold), sims.shape[1])
            if len(local) and np.bincount(local).max() > config.neighbours:
                # A crowded row (a template's look-alikes: a third of the rows at 100k) keeps its
                # nearest, ties by index: every hit ranked within its row at once.
                order = np.lexsort((other, -sims[local, other], local))
                local, other = local[order], other[order]
                rank = np.arange(len(local)) - np.searchsorted(local, local)
                local, other = local[rank < config.neighbours], other[rank < config.neighbours]
            mine, theirs = rows[start + local], rows[other]
            # int32: a pool's row numbers fit, and a million candidates held as int64 cost 8 MB more apiece
            found_lo.append(np.minimum(mine, theirs).astype(np.int32))
            found_hi.append(np.maximum(mine, theirs).astype(np.int32))
            found_cos.append(sims[local, other])
    lo, hi, cos = np.concatenate(found_lo), np.concatenate(found_hi), np.concatenate(found_cos)
    del found_lo, found_hi, found_cos  # the blocks: held with their concatenation, ~20 MB more at 100k
    # A pair found from both ends once; its cosine is symmetric up to rounding: keep the larger.
    order = np.lexsort((-cos, hi, lo))
    lo, hi, cos = lo[order], hi[order], cos[order]
    first = np.ones(len(lo), dtype=bool)
    first[1:] = (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])
    return lo[first], hi[first], cos[first]


# --- rule 1: exact signature ------------------------------------------------------------------


def _signature_links(ordered: Sequence[Problem]) -> Iterator[tuple[int, int, str]]:
    first: dict[str, int] = {}
    for i, problem in enumerate(ordered):
        if not problem.rewards and problem.knowledge is None:
            continue  # a query-only problem has no gold: its signature would be every other's
        signature = problem_signature(problem)
        if signature in first:
            yield first[signature], i, f"signature {signature[:12]}"
        else:
            first[signature] = i


# --- rule 2: near-duplicate query text --------------------------------------------------------


@lru_cache(maxsize=16)
def lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows per band) that datasketch's MinHashLSH picks for this threshold (cached: it integrates)."""
    # datasketch pulls in scipy: import it only when hashing (keeps `arena` start fast).
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=LSH_WEIGHTS)
    return lsh.b, lsh.r


def _band_keys(block: np.ndarray) -> np.ndarray:
    """One 64-bit key per row of a band (r uint32 values), equal rows giving equal keys.

    A different band that maps to the same key only adds a candidate, which the
    MinHash verification then rejects, so a multiply-xorshift mix is enough.
    """
    keys = np.zeros(block.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in range(block.shape[1]):
            keys = (keys ^ block[:, column].astype(np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
            keys ^= keys >> np.uint64(29)
    return keys


def _bucket_pairs(keys: np.ndarray) -> np.ndarray:
    """Every pair (lo, hi) of row positions whose keys are equal, as an (m, 2) int64 array."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    sizes = np.diff(np.append(starts, len(keys)))
    if not (sizes > 1).any():
        return np.empty((0, 2), dtype=np.int64)
    # Each sorted position p in a bucket [s, s + m) pairs with the positions after it: s + m - 1 - p partners.
    bucket_end = np.repeat(starts + sizes, sizes)
    positions = np.arange(len(keys))
    partners = bucket_end - 1 - positions
    left = np.repeat(positions, partners)
    # right runs p + 1, p + 2, ... within each member's block of partners.
    block_start = np.concatenate(([0], np.cumsum(partners)[:-1]))
    right = np.repeat(positions + 1 - block_start, partners) + np.arange(len(left))
    pairs = np.stack([order[left], order[right]], axis=1)
    pairs.sort(axis=1)
    return pairs


def _verified(pairs: np.ndarray, signatures: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The candidate pairs whose MinHash Jaccard estimate reaches the threshold, with the estimates."""
    keep, estimates = [], []
    for start in range(0, len(pairs), _PAIR_BLOCK):
        block = pairs[start : start + _PAIR_BLOCK]
        estimate = (signatures[block[:, 0]] == signatures[block[:, 1]]).mean(axis=1)
        hit = estimate >= threshold - 1e-9
        keep.append(block[hit])
        estimates.append(estimate[hit])
    if not keep:
        return np.empty((0, 2), dtype=np.int64), np.empty(0)
    return np.concatenate(keep), np.concatenate(estimates)


def _text_links(asks: Sequence[Ask], config: ClusterConfig) -> Iterator[tuple[int, int, str]]:
    hashes, counts = shingle_hashes((ask.tokens for ask in asks), config.shingle_size)
    signatures = minhash_matrix(hashes, counts, config.num_perm, config.seed)
    del hashes
    # Only queries with words take part: a query of stop words only has no text to compare
    # (and all such rows are equal, so they would all look like one another).
    rows = np.flatnonzero(counts)
    if len(rows) < 2:
        return
    bands, width = lsh_bands(config.minhash_threshold, config.num_perm)
    found: dict[int, float] = {}  # pair code lo * n + hi (problem indices) -> estimate
    n = len(asks)
    for band in range(bands):
        # rows is ascending, so mapping bucket positions through it keeps lo < hi.
        candidates = rows[_bucket_pairs(_band_keys(signatures[rows, band * width : (band + 1) * width]))]
        if len(candidates) == 0:
            continue
        codes = candidates[:, 0] * n + candidates[:, 1]
        fresh = ~np.isin(codes, np.fromiter(found, dtype=np.int64, count=len(found)))
        pairs, estimates = _verified(candidates[fresh], signatures, config.minhash_threshold)
        found.update(zip((pairs[:, 0] * n + pairs[:, 1]).tolist(), estimates.tolist(), strict=True))
    for code in sorted(found):
        lo, hi = divmod(code, n)
        yield lo, hi, f"jaccard~{found[code]:.2f}"


# --- rule 3: the same constraints, however worded --------------------------------------------


def _constraint_links(asks: Sequence[Ask]) -> Iterator[tuple[int, int, str]]:
    """Problems with equal text keys, linked when their reward parts agree too.

    Within one text key the members are taken in id order; each joins the first earlier
    member it agrees with. A query-only problem agrees with any reward, so it joins the
    first; two members whose rewards differ (the same words, another brand in the reward)
    stay apart, and no query-only member bridges them.
    """
    groups: dict[str, list[int]] = defaultdict(list)
    for i, ask in enumerate(asks):
        if ask.concepts or ask.numbers:  # an empty request states nothing to compare
            groups[ask.text_key()].append(i)
    for key in sorted(groups, key=lambda k: groups[k][0]):
        heads: list[int] = []  # one member per distinct reward part seen so far
        # Members with a reward first, so that the query-only ones join a head, never become one.
        for i in sorted(groups[key], key=lambda i: (asks[i].query_only, i)):
            # Equal keys mean equal concepts; concepts_match also compares a shop task's items.
            head = next((h for h in heads if asks_agree(asks[h], asks[i]) and concepts_match(asks[h], asks[i])), None)
            if head is None:
                heads.append(i)
            else:
                yield head, i, f"constraints {key[:12]}"


# --- rule 4: gold-product overlap -------------------------------------------------------------


def _gold_links(ordered: Sequence[Problem], threshold: float, forest: _UnionFind) -> Iterator[tuple[int, int, str]]:
    golds = [sorted(set(p.gold_product_ids())) for p in ordered]
    postings: dict[str, list[int]] = defaultdict(list)
    for i, gold in enumerate(golds):
        for product_id in gold:
            postings[product_id].append(i)
    # Only problems holding a gold id that is gold elsewhere too can link; most hold none.
    sharing = sorted({i for posting in postings.values() if len(posting) > 1 for i in posting})
    for i in sharing:
        gold = golds[i]
        shared: dict[int, int] = defaultdict(int)
        for product_id in gold:
            for j in postings[product_id]:
                if j >= i:
                    break  # postings are ascending: each pair is counted once, from its larger index
                shared[j] += 1
        for j in sorted(shared):
            smaller = min(len(gold), len(golds[j]))
            if shared[j] < threshold * smaller - 1e-9 or forest.find(i) == forest.find(j):
                continue
            common = sorted(set(gold) & set(golds[j]))
            shown = ", ".join(common[:4]) + (", ..." if len(common) > 4 else "")
            yield j, i, f"shared gold {len(common)}/{smaller}: {shown}"
