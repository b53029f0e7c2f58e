"""How often the right agent wins a race: the evidence rule (now) against the old fixed-margin rule.

Simulated agents with known success rates race a champion on the same problems, ``K`` attempts each.
Problems differ in difficulty (a latent z per problem, shared by both agents: what makes outcomes
paired): an agent of mean success rate p solves a problem of difficulty z with probability
Phi(a + B * z), ``a`` chosen so that its mean over problems is p. Each episode scores success (x a
judge coefficient of 1: the coefficient scales both rules alike).

For each draw size, K and true gap (challenger rate - champion rate), it prints how often each rule
promotes the challenger:

- old: challenger mean > champion mean + margin (the rule before the paired statistics);
- new: ``arena.race.promotion.decide_promotion`` (paired bootstrap lower bound > margin and a sign test
  at 95%, seeded like a cycle's draw).

"Right" is promoting when the true gap exceeds the margin and keeping the champion when it does not
(the gap-0 row is the false-promotion rate: a lucky equal challenger taking the title). A second table
shows how often a zero-skill agent would be crowned first champion (old: any positive score; new:
confidently above zero) and how often a 30% agent is.

Run: ``.venv/bin/python benchmarks/race_power.py [--races 200] [--seed 1]``
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.race.promotion import Contender, decide_promotion, rank_contenders  # noqa: E402

MARGIN = 0.05  # promotion_margin on a champion's first day
SPREAD = 1.0  # difficulty spread B: how much problems differ (0: every problem alike)
CHAMPION_RATE = 0.40
GAPS = (0.0, 0.05, 0.10, 0.15, 0.20, 0.30)
SIZES = ((20, 2, "default (draw_size 20, K 2)"), (48, 1, "demo (48 problems, K 1)"), (60, 2, "60 problems, K 2"),
         (150, 2, "150 problems, K 2"))  # fmt: skip
NORMAL = NormalDist()
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def solve_probabilities(rate: float, difficulties: list[float]) -> list[float]:
    shift = NORMAL.inv_cdf(min(max(rate, 1e-6), 1 - 1e-6)) * math.sqrt(1 + SPREAD**2)
    return [NORMAL.cdf(shift + SPREAD * z) for z in difficulties]


def race_values(rate: float, difficulties: list[float], attempts: int, rng: random.Random) -> dict[str, float]:
    """Per-problem values of one agent: the mean over K attempts of success."""
    probabilities = solve_probabilities(rate, difficulties) if rate > 0 else [0.0] * len(difficulties)
    return {f"p{i:04d}": sum(rng.random() < p for _ in range(attempts)) / attempts for i, p in enumerate(probabilities)}


def contender(submission_id: int, values: dict[str, float]) -> Contender:
    score = sum(values.values()) / len(values)
    return Contender(submission_id=submission_id, race_score=score, commitment_block=submission_id,
                     submitted_at=T0, values=values)  # fmt: skip


def one_race(gap: float, problems: int, attempts: int, rng: random.Random, seed: str) -> tuple[bool, bool]:
    """(old rule promotes, new rule promotes) for one simulated race."""
    difficulties = [rng.gauss(0.0, 1.0) for _ in range(problems)]
    champion = contender(1, race_values(CHAMPION_RATE, difficulties, attempts, rng))
    challenger = contender(2, race_values(CHAMPION_RATE + gap, difficulties, attempts, rng))
    old = challenger.race_score > champion.race_score + MARGIN + 1e-9
    ranked = rank_contenders([champion, challenger])
    decision = decide_promotion(ranked, 1, reign_days=0, promotion_margin=MARGIN, decay_per_day=0.0, floor=0.0,
                                seed=seed)  # fmt: skip
    return old, decision.promoted


def first_crown(rate: float, problems: int, attempts: int, rng: random.Random, seed: str) -> tuple[bool, bool]:
    difficulties = [rng.gauss(0.0, 1.0) for _ in range(problems)]
    alone = contender(1, race_values(rate, difficulties, attempts, rng))
    old = alone.race_score > 0
    decision = decide_promotion([alone], None, reign_days=0, promotion_margin=MARGIN, decay_per_day=0.0, floor=0.0,
                                seed=seed)  # fmt: skip
    return old, decision.promoted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=200, help="simulated races per cell")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    print(f"champion success rate {CHAMPION_RATE:.2f}, margin {MARGIN}, difficulty spread {SPREAD}, "
          f"{args.races} races per cell; cells: P(challenger promoted), old fixed-margin rule -> new evidence rule")  # fmt: skip
    print()
    header = "true gap " + "".join(f"| {label:^30} " for _, _, label in SIZES)
    print(header)
    print("-" * len(header))
    for gap in GAPS:
        cells = []
        for problems, attempts, _ in SIZES:
            old = new = 0
            for r in range(args.races):
                o, n = one_race(gap, problems, attempts, rng, seed=f"0x{args.seed:x}{r:06x}")
                old += o
                new += n
            cells.append(f"| {old / args.races:>6.1%} -> {new / args.races:>6.1%}{'':>14} ")
        right = "(right: keep)" if gap <= MARGIN else "(right: promote)"
        print(f"{gap:+.2f}    " + "".join(cells) + f" {right}")
    print()
    print("first champion: P(crowned) of an agent alone in the race, old (any score > 0) -> new (confidently > 0)")
    for rate in (0.0, 0.02, 0.10, 0.30):
        cells = []
        for problems, attempts, _ in SIZES:
            old = new = 0
            for r in range(args.races):
                o, n = first_crown(rate, problems, attempts, rng, seed=f"0x{args.seed:x}{r:06x}")
                old += o
                new += n
            cells.append(f"| {old / args.races:>6.1%} -> {new / args.races:>6.1%}{'':>14} ")
        print(f"rate {rate:.2f} " + "".join(cells))
    print(f"\n{time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
