"""Ranking and promotion: pure functions of the race scores and the chain commitments.

Ranking: higher race score first; equal scores go to the earlier chain
commitment (a submission without one after every one with one), then the
earlier submission, then the lower id, the order the store uses for copy
disputes, so every validator ranks identically.

Promotion: a challenger (the best-ranked racer that is not the champion)
takes the title only if its race score beats the champion's by the required
margin, which shrinks with each whole day of the reign:

    margin(days) = max(margin_floor, promotion_margin - margin_decay_per_day x days)

    challenger > champion + margin            -> promoted
    challenger == champion + margin (1e-9)    -> a tie: the earlier commitment wins
    otherwise                                 -> the champion stays

The decay keeps a stale champion from reigning forever on an early lead.
Without a champion the best-ranked racer is crowned.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel

TIE_EPSILON = 1e-9


class Contender(BaseModel):
    submission_id: int
    race_score: float
    commitment_block: int | None
    submitted_at: datetime

    def priority(self) -> tuple:
        """Earlier is better: the tie-break between equal scores."""
        return (self.commitment_block is None, self.commitment_block or 0, self.submitted_at, self.submission_id)


class PromotionDecision(BaseModel):
    champion_id: int | None  # after this cycle
    previous_champion_id: int | None
    challenger_id: int | None
    promoted: bool  # the title changed hands (or was first given)
    margin: float  # the lead the challenger needed
    reign_days: int
    reason: str


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
) -> PromotionDecision:
    """Who holds the title after this race (``ranked`` as ``rank_contenders`` orders it)."""
    margin = required_margin(reign_days, promotion_margin, decay_per_day, floor)
    champion = next((c for c in ranked if c.submission_id == champion_id), None)
    challenger = next((c for c in ranked if c.submission_id != champion_id), None)
    base = {"previous_champion_id": champion_id, "margin": margin, "reign_days": reign_days}
    if champion is None:
        if challenger is None:
            return PromotionDecision(
                champion_id=champion_id, challenger_id=None, promoted=False, reason="nobody raced", **base
            )
        reason = (
            f"no champion raced: submission {challenger.submission_id} is crowned as the best racer "
            f"({challenger.race_score:.4f})"
        )
        return PromotionDecision(
            champion_id=challenger.submission_id,
            challenger_id=challenger.submission_id,
            promoted=True,
            reason=reason,
            **base,
        )
    if challenger is None:
        return PromotionDecision(
            champion_id=champion.submission_id,
            challenger_id=None,
            promoted=False,
            reason="no challenger raced",
            **base,
        )
    needed = champion.race_score + margin
    lead = challenger.race_score - needed
    if lead > TIE_EPSILON:
        promoted = True
        why = f"beats the champion's {champion.race_score:.4f} by more than the margin {margin:.4f}"
    elif abs(lead) <= TIE_EPSILON:
        promoted = challenger.priority() < champion.priority()
        why = (
            f"ties the champion's {champion.race_score:.4f} + margin {margin:.4f}; the earlier commitment "
            f"({'challenger' if promoted else 'champion'}) wins"
        )
    else:
        promoted = False
        why = f"does not beat the champion's {champion.race_score:.4f} by the margin {margin:.4f}"
    winner = challenger if promoted else champion
    return PromotionDecision(
        champion_id=winner.submission_id,
        challenger_id=challenger.submission_id,
        promoted=promoted,
        reason=f"challenger {challenger.submission_id} ({challenger.race_score:.4f}) {why}",
        **base,
    )
