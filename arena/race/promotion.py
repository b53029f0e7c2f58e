"""Ranking and promotion: pure functions of the race's per-problem values and the chain commitments.

Ranking: higher race score first; equal scores go to the earlier chain
commitment (a submission without one after every one with one), then the
earlier submission, then the lower id, the order the store uses for copy
disputes, so every validator ranks identically.

Promotion is decided by evidence, on paired per-problem outcomes
(``arena.scoring.paired``: a one-sided paired bootstrap at ``confidence``,
seeded from the cycle's public draw, so every validator decides alike):

- a challenger (the best-ranked racer that is not the champion) takes the title
  only if its advantage over the champion *on the same problems* clears the
  margin with confidence: the lower bound of the mean difference exceeds

      margin(days) = max(margin_floor, promotion_margin - margin_decay_per_day x days)

  (the decay keeps a stale champion from reigning forever on an early lead);
  a lead the draw cannot confirm is "undecided" and the champion stays;
- without a champion, the best-ranked racer is crowned only if its race score
  is confidently above zero (the lower bound of its mean is above 0): a race
  score of 0 crowns nobody, and a tie at 0 is nobody's. A tie between positive
  scores goes to the earlier commitment (the ranking's order).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from arena.scoring.paired import (
    CONFIDENCE,
    Interval,
    PairedComparison,
    compare,
    confidently_better,
    confidently_positive,
    interval,
    paired_values,
)

TIE_EPSILON = 1e-9


class Contender(BaseModel):
    submission_id: int
    race_score: float
    commitment_block: int | None
    submitted_at: datetime
    values: dict[str, float] = Field(default_factory=dict)  # per problem: mean over counted attempts

    def priority(self) -> tuple:
        """Earlier is better: the tie-break between equal scores."""
        return (self.commitment_block is None, self.commitment_block or 0, self.submitted_at, self.submission_id)


class Verdict(StrEnum):
    crowned = "crowned"  # a first champion, confidently above zero
    promoted = "promoted"  # the challenger confidently beat the champion by the margin
    kept = "kept"  # the challenger did not lead the champion by the margin
    undecided = "undecided"  # a lead (or a positive score) the evidence cannot confirm: nothing changes
    nobody = "nobody"  # nobody raced, or every racer scored 0


class PromotionDecision(BaseModel):
    champion_id: int | None  # after this cycle
    previous_champion_id: int | None
    challenger_id: int | None
    promoted: bool  # the title changed hands (or was first given)
    verdict: Verdict = Verdict.kept
    margin: float  # the lead the challenger needed
    reign_days: int
    reason: str
    confidence: float = CONFIDENCE
    comparison: PairedComparison | None = None  # challenger against champion, problem by problem
    interval: Interval | None = None  # a first champion's mean and bounds


def rank_contenders(contenders: Sequence[Contender]) -> list[Contender]:
    return sorted(contenders, key=lambda c: (-round(c.race_score, 9), c.priority()))


def required_margin(reign_days: int, promotion_margin: float, decay_per_day: float, floor: float) -> float:
    return round(max(floor, promotion_margin - decay_per_day * max(0, reign_days)), 9)


def decide_promotion(
    ranked: Sequence[Contender],
    champion_id: int | None,
    *,
    reign_days: int,
    promotion_margin: float,
    decay_per_day: float,
    floor: float,
    seed: str,
    confidence: float = CONFIDENCE,
) -> PromotionDecision:
    """Who holds the title after this race (``ranked`` as ``rank_contenders`` orders it)."""
    margin = required_margin(reign_days, promotion_margin, decay_per_day, floor)
    champion = next((c for c in ranked if c.submission_id == champion_id), None)
    challenger = next((c for c in ranked if c.submission_id != champion_id), None)
    base = {"previous_champion_id": champion_id, "margin": margin, "reign_days": reign_days, "confidence": confidence}
    if champion is None:
        return _first_champion(challenger, champion_id, base, seed=seed, confidence=confidence)
    if challenger is None:
        return PromotionDecision(
            champion_id=champion.submission_id, challenger_id=None, promoted=False, reason="no challenger raced", **base
        )
    a, b = paired_values(challenger.values, champion.values)
    comparison = compare(
        a, b, seed=f"{seed}:promotion:{challenger.submission_id}:{champion.submission_id}", confidence=confidence
    )
    lead = f"lead {comparison.mean_difference:+.4f} over {comparison.problems} common problems"
    bound = (
        f"lower bound {_fmt(comparison.lower)} at {confidence:.0%} ({comparison.a_better} problems better, "
        f"{comparison.b_better} worse, sign test p {comparison.p_a_better:.3f})"
    )
    head = f"challenger {challenger.submission_id} ({challenger.race_score:.4f}) against {champion.race_score:.4f}:"
    if confidently_better(comparison, margin):
        verdict, why = Verdict.promoted, f"{lead}, {bound} clears the margin {margin:.4f}: promoted"
    elif comparison.mean_difference > margin + TIE_EPSILON:
        verdict = Verdict.undecided
        why = (
            f"{lead}, but the evidence ({bound}) does not clear the margin {margin:.4f}: undecided, the champion stays"
        )
    else:
        verdict, why = Verdict.kept, f"{lead} does not exceed the margin {margin:.4f}: the champion stays"
    promoted = verdict is Verdict.promoted
    return PromotionDecision(
        champion_id=(challenger if promoted else champion).submission_id,
        challenger_id=challenger.submission_id,
        promoted=promoted,
        verdict=verdict,
        reason=f"{head} {why}",
        comparison=comparison,
        **base,
    )


def _first_champion(
    best: Contender | None, champion_id: int | None, base: dict, *, seed: str, confidence: float
) -> PromotionDecision:
    """No champion raced: the best racer is crowned if its score is confidently above zero."""
    if best is None:
        return PromotionDecision(
            champion_id=champion_id, challenger_id=None, promoted=False, verdict=Verdict.nobody,
            reason="nobody raced", **base,
        )  # fmt: skip
    if best.race_score <= TIE_EPSILON:
        return PromotionDecision(
            champion_id=champion_id, challenger_id=best.submission_id, promoted=False, verdict=Verdict.nobody,
            reason="every racer scored 0: a race score of 0 crowns nobody", **base,
        )  # fmt: skip
    values = [best.values[p] for p in sorted(best.values)]
    bounds = interval(values, seed=f"{seed}:crown:{best.submission_id}", confidence=confidence)
    # The subject comes first: "no champion raced: submission 3 ... is crowned" read as if no champion were crowned.
    head = f"submission {best.submission_id}, the best racer (race score {best.race_score:.4f} on {bounds.problems} problems),"
    if not confidently_positive(bounds):
        return PromotionDecision(
            champion_id=champion_id, challenger_id=best.submission_id, promoted=False, verdict=Verdict.undecided,
            reason=f"there is no champion yet and {head} is not confidently above zero at {confidence:.0%} (lower bound "
            f"{_fmt(bounds.lower)}, {bounds.positive} problems solved, sign test p {bounds.p_positive:.3f}): undecided, "
            "nobody is crowned", interval=bounds, **base,
        )  # fmt: skip
    return PromotionDecision(
        champion_id=best.submission_id, challenger_id=best.submission_id, promoted=True, verdict=Verdict.crowned,
        reason=f"there is no champion yet, so {head} is crowned the first: its score is confidently above zero "
        f"(lower bound {_fmt(bounds.lower)} at {confidence:.0%})", interval=bounds, **base,
    )  # fmt: skip


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"
