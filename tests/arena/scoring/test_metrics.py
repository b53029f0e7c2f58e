"""ASR, pass@k and pass^k against hand-computed values."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest

from arena.problems.official import parse_row
from arena.scoring import (
    ScoreMode,
    asr,
    group_attempts,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    score_problem,
)
from arena.shop.catalog import InMemoryCatalog
from arena.shop.product import Product


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # pass@1 = c / n
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
        (5, 0, 3, 0.0),
        (5, 3, 3, 1.0),  # n - c < k: every draw of 3 holds a success
        (1, 1, 1, 1.0),
    ],
)
def test_pass_at_k_hand_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),
        (5, 3, 2, 0.3),  # C(3,2)/C(5,2) = 3/10
        (10, 7, 3, 35 / 120),
        (5, 1, 2, 0.0),  # c < k
        (4, 4, 4, 1.0),
    ],
)
def test_pass_hat_k_hand_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected)


def test_estimators_match_exact_combinatorics_on_a_grid_and_at_scale() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(comb(c, k) / comb(n, k), abs=1e-12)
    # Large n: the product form stays finite and accurate where C(n, k) is astronomically big.
    exact = 1 - Fraction(comb(500, 100), comb(1000, 100))
    assert pass_at_k(1000, 500, 100) == pytest.approx(float(exact), rel=1e-9)
    assert pass_hat_k(1000, 900, 100) == pytest.approx(float(Fraction(comb(900, 100), comb(1000, 100))), rel=1e-9)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_invalid_arguments_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_mean_pass_helpers() -> None:
    results = {"a": [True, False, False, False], "b": [True, True, True, False], "c": [False] * 4}
    # pass@2: a = 1 - C(3,2)/C(4,2) = 0.5; b = 1; c = 0.
    assert mean_pass_at_k(results, 2) == pytest.approx(0.5)
    # pass^2: a = 0; b = C(3,2)/C(4,2) = 0.5; c = 0.
    assert mean_pass_hat_k(results, 2) == pytest.approx(0.5 / 3)
    assert mean_pass_at_k(results, 1) == pytest.approx((0.25 + 0.75) / 3) == mean_pass_hat_k(results, 1)
    assert mean_pass_at_k({}, 3) == 0.0
    with pytest.raises(ValueError, match="fewer than k=5"):
        mean_pass_at_k(results, 5)


def _scores():
    catalog = InMemoryCatalog([Product(product_id="g", title="Red Shoe"), Product(product_id="x", title="Blue Hat")])
    product = parse_row({"query": "a shoe", "reward": {"product_id": "g", "title": ["Red Shoe"]}, "id": "p1"})
    shop = parse_row({"query": "shoes", "reward": [{"product_id": "g", "title": ["Red Shoe"]}], "id": "s1"})
    return [
        score_problem(product, ["g"], catalog),
        score_problem(product, ["x"], catalog),
        score_problem(product, ["g"], catalog, ScoreMode.strict),
        score_problem(shop, ["x"], catalog),
    ]


def test_asr_overall_and_by_intent() -> None:
    summary = asr(_scores())
    assert summary.n == 4 and summary.asr == 0.5
    assert summary.by_intent["product"].n == 3
    assert summary.by_intent["product"].asr == pytest.approx(2 / 3)
    assert summary.by_intent["shop"].asr == 0.0
    empty = asr([])
    assert (empty.n, empty.asr, empty.by_intent) == (0, 0.0, {})


def test_group_attempts_feeds_pass_at_k() -> None:
    grouped = group_attempts(_scores())
    assert grouped == {"p1": [True, False, True], "s1": [False]}
    assert mean_pass_at_k({"p1": grouped["p1"]}, 2) == 1.0
