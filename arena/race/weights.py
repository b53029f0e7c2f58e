"""Weights: a deterministic function of a cycle's stored standings and the chain's uids.

Only finishers with a positive race score earn anything: a 0 is paid nothing.

- the champion's hotkey gets ``champion_share`` (if its race score is positive);
- the other paid finishers (ranked racers), in rank order, share what is left
  after the champion and the burn: the i-th gets a part proportional to ``taper**i``;
- ``burn_share`` goes to ``burn_uid`` (the subnet owner's uid), and so does every
  share nobody earned;
- a finisher whose hotkey is no longer registered is dropped and the shares
  are recomputed without it (recorded in ``dropped``); with no other paid
  finisher the champion gets everything but the burn; with no paid finisher
  at all the burn uid gets everything.

Two validators with the same standings and the same metagraph therefore send
the same vector, to the last bit: no clock, no randomness, sorted output.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

BURN_UID = 0
PAID_ABOVE = 1e-9  # a race score must exceed this to earn weight: 0 (and float dust) earns nothing


class Finisher(BaseModel):
    submission_id: int
    hotkey: str
    rank: int = Field(ge=1)
    race_score: float
    is_champion: bool = False


class WeightVector(BaseModel):
    uids: list[int]
    weights: list[float]  # sum to 1 (or empty: nothing to set)
    dropped: list[str] = Field(default_factory=list)  # hotkeys not registered on the subnet


def compute_weights(
    finishers: Sequence[Finisher],
    uid_of: Mapping[str, int],
    *,
    champion_share: float,
    taper: float,
    burn_share: float,
    burn_uid: int = BURN_UID,
) -> WeightVector:
    dropped = sorted({f.hotkey for f in finishers if f.hotkey not in uid_of})
    paid = (f for f in finishers if f.hotkey in uid_of and f.race_score > PAID_ABOVE)
    present = sorted(paid, key=lambda f: (f.rank, f.submission_id))
    champion = next((f for f in present if f.is_champion), None)
    others = [f for f in present if f is not champion]
    shares: dict[int, float] = {}

    def give(uid: int, share: float) -> None:
        if share > 0:
            shares[uid] = shares.get(uid, 0.0) + share

    rest = max(0.0, 1.0 - burn_share)
    # The champion's part is set aside whether or not a paid champion takes it: without one (nobody crowned,
    # or a champion that scored 0) it is burned rather than handed to the runners-up.
    champion_part = champion_share if others else rest
    if champion is not None:
        give(uid_of[champion.hotkey], champion_part)
    rest = max(0.0, rest - champion_part)
    if others:
        parts = [taper**i for i in range(len(others))]
        total = math.fsum(parts)
        for finisher, part in zip(others, parts, strict=True):
            give(uid_of[finisher.hotkey], rest * part / total)
    give(burn_uid, max(0.0, 1.0 - math.fsum(shares.values())))  # the burn share and whatever nobody earned
    total = math.fsum(shares.values())
    if total <= 0:
        return WeightVector(uids=[], weights=[], dropped=dropped)
    uids = sorted(shares)
    return WeightVector(uids=uids, weights=[round(shares[u] / total, 12) for u in uids], dropped=dropped)
