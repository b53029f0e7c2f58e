"""The meaning candidates against the plain definition, written apart from the blocked code.

``meaning_links`` computes its pairs a block of rows at a time and cuts each request's hits to its
nearest ``neighbours``; here the same pairs come from the whole cosine matrix, one row at a time,
by the docstring's words: pairs of one intent at or above the threshold, each request's nearest
``neighbours`` kept (ties by index), a pair kept when either end keeps it. The vectors' entries are
0 or ±1/2 with four of them set, so every cosine is a multiple of 1/4, computed exactly whatever
the order of the sums, and ties are many: the tie rule is exercised, not rounded away.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.problems.clusters import ClusterConfig, meaning_links
from arena.problems.model import Intent, Problem

INTENTS = (Intent.product, Intent.shop, Intent.voucher, Intent.knowledge)


def _vectors(count: int, dims: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = np.zeros((count, dims), dtype=np.float32)
    for row in vectors:
        row[rng.choice(dims, size=4, replace=False)] = rng.choice([-0.5, 0.5], size=4)
    return vectors


def _expected(intents: list[Intent], vectors: np.ndarray, threshold: float, neighbours: int) -> set:
    cosines = vectors.astype(np.float64) @ vectors.astype(np.float64).T
    pairs: dict[tuple[int, int], float] = {}
    for i in range(len(intents)):
        hits = [j for j in range(len(intents)) if j != i and intents[j] is intents[i] and cosines[i, j] >= threshold]
        for j in sorted(hits, key=lambda j: (-cosines[i, j], j))[:neighbours]:
            pairs[min(i, j), max(i, j)] = float(cosines[i, j])
    return {(lo, hi, round(cos, 6)) for (lo, hi), cos in pairs.items()}


@pytest.mark.parametrize(
    ("count", "dims", "threshold", "neighbours", "seed"),
    [
        (400, 6, 0.5, 3, 0),  # six dimensions: most rows share axes, every row crowded past 3
        (400, 6, 0.25, 16, 1),  # crowded past the default's 16
        (300, 32, 0.5, 16, 2),  # sparse hits, few crowded rows
        (300, 6, 1.0, 2, 3),  # only exact copies, ties everywhere
    ],
)
def test_meaning_links_are_the_nearest_pairs_above_the_threshold(count, dims, threshold, neighbours, seed):
    rng = np.random.default_rng(seed + 100)
    intents = [INTENTS[k] for k in rng.integers(0, 3, size=count)]  # three families, blocks of 128 straddled
    problems = [
        Problem.model_construct(id=f"p{k:04d}", intent=intent, query="", difficulty="easy")
        for k, intent in enumerate(intents)
    ]
    vectors = _vectors(count, dims, seed)
    config = ClusterConfig(meaning_threshold=threshold, neighbours=neighbours)
    lo, hi, cos = meaning_links(problems, vectors, config)
    found = {(int(a), int(b), round(float(c), 6)) for a, b, c in zip(lo, hi, cos, strict=True)}
    expected = _expected(intents, vectors, threshold - 1e-6, neighbours)
    assert len(found) == len(lo)  # each pair once
    assert found == expected
    assert expected, "the case finds pairs"
    crowded = sum(1 for i in range(count) if sum(1 for a, b, _ in expected if i in (a, b)) > neighbours)
    if threshold < 1.0 and dims == 6:
        assert crowded, "the case crowds some requests past their neighbours"
