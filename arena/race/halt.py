"""A validator that cannot measure does not decide: when a stage's failures are the validator's, the cycle halts.

Pure rules over what the store says about a stage (``assess_episodes``, ``assess_judgments``); the
cycle raises ``CycleHalted`` with the ``Halt`` and ``arena.race.cycle`` records it: no promotion, no
new weights (the last good vector is re-sent), the entrants wait for the next cycle.

A stage halts when

- an episode was given up on a validator fault that the canary shared (the reference agent failed on
  the same sandbox and model server too: ``fault_charged`` is false), or
- validator faults hit at least ``fault_halt_fraction`` of the stage's submissions, and at least two,
  even where the canary ran clean each time (a model server failing under load, say: the records that
  stood on a charged upstream fault count here too). One failure that follows one submission across
  workers and retries is that submission's: it is charged, counts 0, and halts nothing, or
- the judge was down: episodes left unjudged whose judge canary failed too (``JUDGE_OUTAGE`` in the
  judgment's reason), or unjudged episodes spread over that fraction of the submissions.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from arena.runner.record import FaultKind
from judge.verdict import JUDGE_OUTAGE

FIXES: dict[str, str] = {
    FaultKind.sandbox: "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap) and check that "
    "`bwrap --ro-bind / / true` runs as the validator's user (user namespaces enabled)",
    FaultKind.upstream: "bring the model server of race.upstreams back (or fix its address); the proxy could not "
    "reach it",
    FaultKind.judge: 'bring the judge\'s server ([judge] settings) back, or race with judge_kind = "rules"',
    FaultKind.store: "check the database (ARENA_DATABASE_URL): it refused or lost connections",
    FaultKind.runner: "a bug in the validator: see the log's tracebacks for the episodes named",
}


class Halt(BaseModel):
    """Why a cycle stopped without deciding anything."""

    stage: str  # the cycle stage that halted
    kind: str  # a FaultKind value
    reason: str
    submissions: list[int]  # submissions whose episodes the faults hit
    episodes: int  # episodes given up on (or left unjudged) for the validator's failure
    canary_failed: bool
    fix: str


class CycleHalted(Exception):
    """Raised by a stage that found the validator unable to measure; carries the ``Halt``."""

    def __init__(self, halt: Halt) -> None:
        super().__init__(halt.reason)
        self.halt = halt


class FaultedEpisode(BaseModel):
    episode_id: int
    submission_id: int
    fault_kind: str
    charged: bool | None
    error: str | None


def threshold(submissions: int, fraction: float) -> int:
    """Submissions a failure must hit to be the validator's for everyone: the fraction, and at least two."""
    return max(2, math.ceil(fraction * submissions - 1e-9))


def assess_episodes(
    stage: str, faulted: Sequence[FaultedEpisode], submissions: Iterable[int], fraction: float
) -> Halt | None:
    """The halt a stage's given-up-on-for-a-fault episodes call for, or None (each is then charged)."""
    if not faulted:
        return None
    everyone = sorted(set(submissions))
    hit = sorted({f.submission_id for f in faulted})
    shared = [f for f in faulted if f.charged is False]
    needed = threshold(len(everyone), fraction)
    if not shared and len(hit) < needed:
        return None
    kind = Counter(f.fault_kind for f in (shared or faulted)).most_common(1)[0][0]
    example = (shared or faulted)[0]
    if shared:
        why = f"{len(shared)} episode(s) failed on a {kind} fault that the canary hit too"
    else:
        why = f"{kind} faults hit {len(hit)} of {len(everyone)} submissions (halting at {needed})"
    return Halt(
        stage=stage,
        kind=kind,
        reason=f"{why}; e.g. episode {example.episode_id}: {example.error or 'no detail'}",
        submissions=hit,
        episodes=len(faulted),
        canary_failed=bool(shared),
        fix=FIXES.get(kind, FIXES[FaultKind.runner]),
    )


class UnjudgedEpisode(BaseModel):
    episode_id: int
    submission_id: int
    reason: str | None  # the latest failed judge attempt's


def assess_judgments(
    stage: str, unjudged: Sequence[UnjudgedEpisode], submissions: Iterable[int], fraction: float
) -> Halt | None:
    """The halt a stage's episodes left unjudged at the deadline call for, or None (they are excluded)."""
    if not unjudged:
        return None
    everyone = sorted(set(submissions))
    hit = sorted({u.submission_id for u in unjudged})
    outage = [u for u in unjudged if (u.reason or "").startswith(JUDGE_OUTAGE)]
    needed = threshold(len(everyone), fraction)
    if not outage and len(hit) < needed:
        return None
    example = (outage or list(unjudged))[0]
    why = (
        f"the judge and its canary failed on {len(outage)} episode(s)"
        if outage
        else f"episodes of {len(hit)} of {len(everyone)} submissions were left unjudged (halting at {needed})"
    )
    return Halt(
        stage=stage,
        kind=FaultKind.judge.value,
        reason=f"{why}; e.g. episode {example.episode_id}: {example.reason or 'never judged'}",
        submissions=hit,
        episodes=len(unjudged),
        canary_failed=bool(outage),
        fix=FIXES[FaultKind.judge],
    )
