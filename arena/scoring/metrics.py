"""Aggregate metrics over outcome scores: ASR, pass@k and pass^k.

- ASR (absolute success rate, ShoppingBench's headline number): the share of
  problems whose answer succeeded, overall and per intent.
- pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"):
  the chance that at least one of k attempts drawn without replacement from n
  attempts (c of them successful) succeeds; the unbiased estimator
  ``1 - C(n-c, k) / C(n, k)``, computed as a product so large n never overflows.
- pass^k (tau-bench, Yao et al. 2024): the chance that *all* k drawn attempts
  succeed, ``C(c, k) / C(n, k)``; it measures reliability, where pass@k
  measures coverage.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, Field

from arena.scoring.outcome import OutcomeScore


class IntentAsr(BaseModel):
    n: int
    asr: float


class AsrSummary(BaseModel):
    asr: float
    n: int
    by_intent: dict[str, IntentAsr] = Field(default_factory=dict)


def asr(scores: Iterable[OutcomeScore]) -> AsrSummary:
    """Success rate over all scores and per intent; 0.0 for an empty input."""
    per_intent: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    n = wins = 0
    for s in scores:
        counts = per_intent[s.intent.value]
        counts[0] += 1
        n += 1
        if s.success:
            counts[1] += 1
            wins += 1
    by_intent = {intent: IntentAsr(n=total, asr=ok / total) for intent, (total, ok) in sorted(per_intent.items())}
    return AsrSummary(asr=wins / n if n else 0.0, n=n, by_intent=by_intent)


def _check(n: int, c: int, k: int) -> None:
    if n < 1 or k < 1 or k > n or not 0 <= c <= n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: ``1 - prod_{i=n-c+1}^{n} (1 - k / i)``."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    fail = 1.0
    for i in range(n - c + 1, n + 1):
        fail *= 1.0 - k / i
    return 1.0 - fail


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau-bench pass^k: ``C(c, k) / C(n, k) = prod_{i=0}^{k-1} (c - i) / (n - i)``."""
    _check(n, c, k)
    if c < k:
        return 0.0
    p = 1.0
    for i in range(k):
        p *= (c - i) / (n - i)
    return p


def _mean(results: Mapping[str, Sequence[bool]], k: int, estimator) -> float:
    if not results:
        return 0.0
    total = 0.0
    for problem_id, attempts in results.items():
        if len(attempts) < k:
            raise ValueError(f"problem {problem_id} has {len(attempts)} attempts, fewer than k={k}")
        total += estimator(len(attempts), sum(bool(a) for a in attempts), k)
    return total / len(results)


def mean_pass_at_k(results: Mapping[str, Sequence[bool]], k: int) -> float:
    """Mean pass@k over problems, from {problem_id: [success of each attempt]}."""
    return _mean(results, k, pass_at_k)


def mean_pass_hat_k(results: Mapping[str, Sequence[bool]], k: int) -> float:
    """Mean pass^k over problems, from {problem_id: [success of each attempt]}."""
    return _mean(results, k, pass_hat_k)


def group_attempts(scores: Iterable[OutcomeScore]) -> dict[str, list[bool]]:
    """{problem_id: [success, ...]} in input order, ready for the pass@k helpers."""
    grouped: dict[str, list[bool]] = defaultdict(list)
    for s in scores:
        grouped[s.problem_id].append(s.success)
    return dict(grouped)
