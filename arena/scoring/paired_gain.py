"""The paired bootstrap of a success-rate difference between two policies on the same problems.

Both policies were run on one list of problems, so the problem is the unit of
resampling and both sides are resampled with the *same* draw: the interval of
(treated - control) then reflects how much the gain depends on which problems
were drawn, not the (much larger) spread of problem difficulty, which cancels
in each pair. Pure: no I/O, a seeded generator, the same interval for the
same inputs.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from pydantic import BaseModel


class PairedGain(BaseModel):
    n: int  # the problems both sides were scored on
    gain: float  # mean(treated) - mean(control) on those problems
    low: float
    high: float


def paired_bootstrap_gain(
    control: Mapping[str, bool | float],
    treated: Mapping[str, bool | float],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedGain:
    """Percentile interval of mean(treated - control) over the problems both mappings score.

    A problem scored on one side only is left out: an unpaired problem would
    turn the paired interval into an unpaired one without saying so."""
    shared = sorted(set(control) & set(treated))
    if not shared:
        raise ValueError("the two sides share no problem: a paired comparison needs the same problems")
    differences = [float(treated[i]) - float(control[i]) for i in shared]
    low, high = bootstrap_interval(differences, resamples=resamples, confidence=confidence, seed=seed)
    return PairedGain(n=len(differences), gain=sum(differences) / len(differences), low=low, high=high)


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (one value per problem)."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1")
    if not values:
        raise ValueError("no values to resample")
    n = len(values)
    rng = random.Random(seed)
    stats = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    return stats[int(tail * (resamples - 1))], stats[int(round((1.0 - tail) * (resamples - 1)))]
