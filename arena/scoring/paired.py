"""Paired per-problem statistics: is agent A confidently better than agent B on the same problems?

Pure functions of numbers, shared by the race (qualifying, promotion), ``arena eval compare`` and the
student experiment's report (``paired_bootstrap_gain``: a row's two-sided gain over the base). Two agents
that ran the same problems are compared problem by problem (their difference on each problem), which
removes the problems' own difficulty from the comparison: only the problems where they differ (the
discordant pairs) carry evidence.

The test is a one-sided paired bootstrap of the mean difference: resample the problems with replacement
``resamples`` times, take each resample's mean difference, and read the ``1 - confidence`` quantile
(the lower bound) and the ``confidence`` quantile (the upper bound). "A beats B by ``margin`` with 95%
confidence" means the lower bound exceeds ``margin`` **and** the exact one-sided sign test on the
discordant pairs agrees (p below ``1 - confidence``). The bootstrap alone is overconfident on a handful
of problems (two problems both solved "prove" a positive mean); the sign test needs at least five
discordant pairs, all one way, before it says anything at 95%. The resampling is driven by a ``seed`` string
(the race uses the cycle's public draw hash), through ``random.Random`` of that string, which is the
same on every platform and Python version that keeps version-2 string seeding: every validator with the
same numbers and the same seed decides the same way, to the bit.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

CONFIDENCE = 0.95
RESAMPLES = 2000


class PairedComparison(BaseModel):
    """A against B on their common problems: the mean difference and its one-sided bounds."""

    problems: int  # common problems compared
    mean_a: float
    mean_b: float
    mean_difference: float  # mean of (a - b) over the common problems
    lower: float | None  # one-sided lower bound of the mean difference at ``confidence`` (None: no problems)
    upper: float | None  # one-sided upper bound at ``confidence``
    a_better: int  # problems where a > b (discordant pairs, one way)
    b_better: int  # problems where b > a
    p_a_better: float  # one-sided sign test: P(at least a_better of the discordant pairs favour A | no difference)
    p_b_better: float  # the same for B
    confidence: float = CONFIDENCE
    resamples: int = RESAMPLES
    seed: str = ""

    @property
    def discordant(self) -> int:
        return self.a_better + self.b_better


class Interval(BaseModel):
    """One agent's mean over its problems with its one-sided bounds (A against an agent scoring 0)."""

    problems: int
    mean: float
    lower: float | None  # None: no problems, no evidence
    upper: float | None
    positive: int  # problems with a value above 0
    p_positive: float  # one-sided sign test against an agent that scores 0 everywhere
    confidence: float = CONFIDENCE
    seed: str = ""


def paired_values(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[list[float], list[float]]:
    """The two agents' values on the problems both have, in problem id order."""
    common = sorted(set(a) & set(b))
    return [a[p] for p in common], [b[p] for p in common]


def compare(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: str,
    scale_b: float = 1.0,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
) -> PairedComparison:
    """A against ``scale_b`` x B, paired problem by problem (``a[i]`` and ``b[i]`` are one problem)."""
    if len(a) != len(b):
        raise ValueError(f"paired values need the same problems: {len(a)} against {len(b)}")
    differences = [x - scale_b * y for x, y in zip(a, b, strict=True)]
    lower, upper = _bounds(differences, seed, confidence, resamples)
    n = len(differences)
    a_better, b_better = sum(1 for d in differences if d > 0), sum(1 for d in differences if d < 0)
    return PairedComparison(
        problems=n,
        mean_a=_round(math.fsum(a) / n) if n else 0.0,
        mean_b=_round(math.fsum(b) / n) if n else 0.0,
        mean_difference=_round(math.fsum(differences) / n) if n else 0.0,
        lower=lower,
        upper=upper,
        a_better=a_better,
        b_better=b_better,
        p_a_better=sign_test(a_better, b_better),
        p_b_better=sign_test(b_better, a_better),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )


def interval(
    values: Sequence[float], *, seed: str, confidence: float = CONFIDENCE, resamples: int = RESAMPLES
) -> Interval:
    """One agent's mean with its one-sided bounds: ``lower > 0`` is "confidently above zero"."""
    lower, upper = _bounds(list(values), seed, confidence, resamples)
    n = len(values)
    positive = sum(1 for v in values if v > 0)
    return Interval(
        problems=n,
        mean=_round(math.fsum(values) / n) if n else 0.0,
        lower=lower,
        upper=upper,
        positive=positive,
        p_positive=sign_test(positive, 0),
        confidence=confidence,
        seed=seed,
    )


def sign_test(wins: int, losses: int) -> float:
    """Exact one-sided sign test: P(X >= wins) for X ~ Binomial(wins + losses, 1/2)."""
    n = wins + losses
    if n == 0 or wins == 0:
        return 1.0
    return _round(math.fsum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n)


def confidently_positive(bounds: Interval) -> bool:
    """The agent's mean is above 0 at the interval's confidence (bootstrap and sign test agree)."""
    return bounds.lower is not None and bounds.lower > 1e-12 and bounds.p_positive < 1.0 - bounds.confidence


def confidently_better(comparison: PairedComparison, margin: float = 0.0) -> bool:
    """A beats B by more than ``margin`` at the comparison's confidence (bootstrap and sign test agree)."""
    alpha = 1.0 - comparison.confidence
    return comparison.lower is not None and comparison.lower > margin + 1e-12 and comparison.p_a_better < alpha


def confidently_worse(comparison: PairedComparison) -> bool:
    """A is below B at the comparison's confidence (bootstrap and sign test agree)."""
    alpha = 1.0 - comparison.confidence
    return comparison.upper is not None and comparison.upper < -1e-12 and comparison.p_b_better < alpha


class PairedGain(BaseModel):
    """The evaluation's row-against-base gain: mean(treated - control) with a two-sided interval."""

    n: int  # the problems both sides were scored on
    gain: float  # mean(treated) - mean(control) on those problems
    low: float
    high: float


def paired_bootstrap_gain(
    control: Mapping[str, bool | float],
    treated: Mapping[str, bool | float],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: str = "0",
) -> PairedGain:
    """Two-sided percentile interval of mean(treated - control) over the problems both mappings score.
    A problem scored on one side only is left out: it would make the paired interval unpaired."""
    control_values, treated_values = paired_values(
        {k: float(v) for k, v in control.items()}, {k: float(v) for k, v in treated.items()}
    )
    if not control_values:
        raise ValueError("the two sides share no problem: a paired comparison needs the same problems")
    differences = [t - c for c, t in zip(control_values, treated_values, strict=True)]
    low, high = bootstrap_interval(differences, resamples=resamples, confidence=confidence, seed=seed)
    return PairedGain(n=len(differences), gain=_round(math.fsum(differences) / len(differences)), low=low, high=high)


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: str = "0"
) -> tuple[float, float]:
    """Two-sided percentile bootstrap interval of the mean of ``values`` (one value per problem)."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    if not values:
        raise ValueError("no values to resample")
    tail = (1.0 - confidence) / 2.0
    means = _bootstrap_means(list(values), seed, resamples)
    return _round(means[int(tail * (resamples - 1))]), _round(means[int(round((1.0 - tail) * (resamples - 1)))])


def _bootstrap_means(values: list[float], seed: str, resamples: int) -> list[float]:
    """The sorted means of ``resamples`` resamples (with replacement) of ``values``, seeded by ``seed``."""
    n = len(values)
    if all(v == values[0] for v in values):
        return [values[0]] * resamples  # every resample has this mean
    rng = random.Random(seed)
    return sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))


def _bounds(
    differences: list[float], seed: str, confidence: float, resamples: int
) -> tuple[float | None, float | None]:
    """One-sided bounds of the mean of ``differences``: the (1 - confidence) and confidence quantiles of
    the bootstrap means. No problems: no evidence, no bounds."""
    if not differences:
        return None, None
    means = _bootstrap_means(differences, seed, resamples)
    low_index = max(0, math.floor((1.0 - confidence) * resamples) - 1)
    high_index = min(resamples - 1, math.ceil(confidence * resamples))
    return _round(means[low_index]), _round(means[high_index])


def _round(value: float) -> float:
    return round(value, 9)


__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "Interval",
    "PairedComparison",
    "compare",
    "confidently_better",
    "confidently_positive",
    "confidently_worse",
    "interval",
    "paired_values",
    "sign_test",
]
