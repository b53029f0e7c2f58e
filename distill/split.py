"""Selection, de-duplication, leak-cluster split and the agent-share cap.

Every choice is an order of sha256 digests of (seed, purpose, key), like the
suite partitions: reproducible anywhere, independent of input order.
Trajectories of the held-out partition never reach this module's outputs;
``leak_failures`` proves afterwards that no cluster is in train and eval.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from distill.schema import Trajectory

HELDOUT = "heldout"


class SplitError(ValueError):
    pass


class Selection(BaseModel):
    """Which episodes an export reads: a cycle range, a time range, suites (None: no bound)."""

    cycles: tuple[int, int] | None = Field(None, description="Cycle range A:B (inclusive).")
    since: datetime | None = Field(None, description="Episodes started at or after (ISO-8601).")
    until: datetime | None = Field(None, description="Episodes started before (ISO-8601).")
    suites: list[str] = Field(default_factory=list, description="Comma list of suite ids to select.")

    @field_validator("cycles", mode="before")
    @classmethod
    def _cycle_text(cls, value: object) -> object:
        return cls.parse_cycles(value) if isinstance(value, str) else value

    @field_validator("since", "until", mode="before")
    @classmethod
    def _time_text(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        if not value:
            return None
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO-8601 time (e.g. 2025-06-01T00:00:00Z)") from None

    @field_validator("since", "until")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("give a time zone (e.g. 2025-06-01T00:00:00Z)")
        return value

    @classmethod
    def parse_cycles(cls, text: str | None) -> tuple[int, int] | None:
        """``A:B`` (inclusive), ``A:`` or ``:B``."""
        if not text:
            return None
        first, colon, last = text.partition(":")
        try:
            low = int(first) if first else 0
            high = int(last) if last else 2**31 - 1
        except ValueError:
            raise SplitError(f"--cycles {text!r}: expected A:B with integer cycle numbers") from None
        if not colon or low > high:
            raise SplitError(f"--cycles {text!r}: expected A:B with A <= B")
        return low, high

    def excludes(self, trajectory: Trajectory) -> str | None:
        """Why the trajectory is outside the selection (None: inside)."""
        meta = trajectory.metadata
        if self.cycles is not None:
            if meta.cycle is None:
                return "no cycle (a --cycles range was given)"
            if not self.cycles[0] <= meta.cycle <= self.cycles[1]:
                return f"cycle {meta.cycle} outside {self.cycles[0]}:{self.cycles[1]}"
        if self.since or self.until:
            try:
                started = datetime.fromisoformat(meta.started_at or "")
            except ValueError:
                return f"start time {meta.started_at!r} is not ISO-8601"
            if started.tzinfo is None:
                bound = self.since or self.until
                assert bound is not None  # one of the two is set (above)
                started = started.replace(tzinfo=bound.tzinfo)
            if (self.since and started < self.since) or (self.until and started >= self.until):
                return f"started {meta.started_at} outside the time range"
        if self.suites and meta.suite_id not in self.suites:
            return f"suite {meta.suite_id} not selected"
        return None


def digest(seed: int, purpose: str, key: str) -> str:
    return hashlib.sha256(f"{seed}\x00{purpose}\x00{key}".encode()).hexdigest()


def cluster_of(trajectory: Trajectory) -> str:
    """The leak cluster (a problem without one is its own cluster, named so it cannot collide)."""
    meta = trajectory.metadata
    return meta.cluster_id or f"problem:{meta.problem_id}"


def fingerprint(trajectory: Trajectory) -> str:
    """What makes two trajectories duplicates: the same problem and the same dialogue (call ids ignored)."""
    body = [
        (
            m.get("role"),
            m.get("content") or "",
            [(c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or []],
        )
        for m in trajectory.messages
    ]
    payload = json.dumps([trajectory.metadata.problem_id, body], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def eval_clusters(clusters: Iterable[str], *, seed: int, fraction: float) -> set[str]:
    """A seeded, order-independent ``fraction`` of ``clusters`` (at least one when there are two or more)."""
    ordered = sorted(set(clusters), key=lambda c: digest(seed, "eval", c))
    if len(ordered) < 2 or fraction <= 0:
        return set()
    count = min(len(ordered) - 1, max(1, round(len(ordered) * fraction)))
    return set(ordered[:count])


def share_cap(counts: Counter, max_share: float) -> int | None:
    """The most trajectories any one agent may keep so none exceeds ``max_share`` of the kept total.

    The largest cap ``c`` with ``c <= max_share * sum(min(n, c))``: agents under the
    cap keep everything, the others are cut to it. None: no cap binds.
    """
    if max_share >= 1.0 or not counts:
        return None
    best = 0
    low, high = 0, max(counts.values())
    while low <= high:
        middle = (low + high) // 2
        if middle <= max_share * sum(min(n, middle) for n in counts.values()) + 1e-9:
            best, low = middle, middle + 1
        else:
            high = middle - 1
    return best if best < max(counts.values()) else None


def effective_share(counts: Counter, max_share: float) -> float:
    """The share cap that can hold for these agents.

    With k agents in train, one of them always holds at least 1/k of it, so a
    cap below 1/k could only be met by keeping nothing (a one-agent store would
    export an empty train split). The cap then binds at 1/k: equal shares.
    """
    return max(max_share, 1.0 / len(counts)) if counts else max_share


def cap_agents(entries: list[tuple[int, str, str]], *, seed: int, max_share: float) -> dict[int, str]:
    """Cut over-represented agent versions down to the cap, keeping a seeded sample of each.

    ``entries`` are (position, episode id, agent sha256); returns position -> why it was cut.
    ``max_share`` is applied as :func:`effective_share` makes it.
    """
    counts = Counter(agent for _, _, agent in entries)
    max_share = effective_share(counts, max_share)
    cap = share_cap(counts, max_share)
    if cap is None:
        return {}
    cut: dict[int, str] = {}
    taken: Counter = Counter()
    for position, _episode, agent in sorted(entries, key=lambda e: digest(seed, "share", e[1])):
        if taken[agent] < cap:
            taken[agent] += 1
        else:
            cut[position] = (
                f"agent {agent[:12]} over the {max_share:.0%} share cap ({counts[agent]} gated trajectories, cap {cap})"
            )
    return cut


def leak_failures(train: Iterable[Trajectory], eval_rows: Iterable[Trajectory]) -> list[str]:
    """Proof of the split: clusters in both files, and held-out trajectories in either (empty: sound)."""
    train_clusters = {cluster_of(t) for t in train}
    failures = [
        f"cluster {c} is in train and eval" for c in sorted(train_clusters & {cluster_of(t) for t in eval_rows})
    ]
    for name, rows in (("train", train), ("eval", eval_rows)):
        failures += [
            f"{name}: episode {t.metadata.episode_id} is from the held-out partition"
            for t in rows
            if t.metadata.partition == HELDOUT
        ]
    return failures


def ratio(part: int, whole: int) -> float:
    return part / whole if whole else math.nan
