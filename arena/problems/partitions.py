"""Split problems into a suite's four partitions, always by leak cluster.

Variants of one problem share a leak cluster; if two variants landed in two
partitions (say one in the public suite and one in the held-out eval), the
held-out figure would measure recall, not skill. So every choice here is made
per cluster, and `partition_failures` proves afterwards that no cluster (and
no problem) sits in two partitions.

Every random choice is an order of sha256 digests of (seed, purpose, cluster
id): reproducible in any language and on any Python, unlike ``hash()`` or the
``random`` module's internals.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

import orjson
from pydantic import BaseModel, Field, model_validator

from arena.problems.model import Problem


class PartitionName(StrEnum):
    public = "public"  # the public qualifying suite: published, miners try their agents on it
    race_bank = "race_bank"  # hidden: each race cycle draws from it
    train_pool = "train_pool"  # distill training data (plus every cluster a race revealed)
    heldout = "heldout"  # held-out eval: never raced, never exported, only `arena eval` reads it


class PartitionError(ValueError):
    pass


class PartitionPlan(BaseModel):
    """How big each partition is. The race bank takes what the others leave."""

    public: int = Field(30, ge=0, description="Problems in the public qualifying suite (whole clusters).")
    heldout_fraction: float = Field(0.2, ge=0.0, lt=1.0, description="Fraction of all clusters held out for eval.")
    train_fraction: float = Field(0.0, ge=0.0, lt=1.0, description="Fraction of all clusters in the train pool.")

    @model_validator(mode="after")
    def _leaves_a_bank(self) -> PartitionPlan:
        if self.heldout_fraction + self.train_fraction >= 1.0:
            raise ValueError("heldout_fraction + train_fraction must stay below 1 (the race bank needs clusters)")
        return self


class Counts(BaseModel):
    problems: int
    clusters: int
    by_intent: dict[str, int]
    by_difficulty: dict[str, int]
    by_intent_difficulty: dict[str, int]  # "product/easy" -> n

    @classmethod
    def of(cls, problems: Sequence[Problem]) -> Counts:
        return cls(
            problems=len(problems),
            clusters=len({p.cluster_id for p in problems}),
            by_intent=dict(sorted(Counter(p.intent.value for p in problems).items())),
            by_difficulty=dict(sorted(Counter(p.difficulty.value for p in problems).items())),
            by_intent_difficulty=dict(
                sorted(Counter(f"{p.intent.value}/{p.difficulty.value}" for p in problems).items())
            ),
        )


def rank(*parts: str) -> str:
    """A pseudo-random but reproducible sort key: the sha256 of the parts."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class _Cluster:
    """One leak cluster while partitioning: its problems and its stratum."""

    def __init__(self, cluster_id: str, problems: list[Problem]) -> None:
        self.id = cluster_id
        self.problems = sorted(problems, key=lambda p: p.id)
        cells = Counter((p.intent.value, p.difficulty.value) for p in problems)
        # The stratum is the cluster's most common (intent, difficulty); a tie goes to the smaller name.
        self.stratum = min(cells, key=lambda cell: (-cells[cell], cell))

    @property
    def size(self) -> int:
        return len(self.problems)


def group_by_cluster(problems: Iterable[Problem]) -> dict[str, list[Problem]]:
    """Problems per cluster id; every problem must carry one, and ids must be unique."""
    groups: dict[str, list[Problem]] = defaultdict(list)
    seen: dict[str, str] = {}
    for problem in problems:
        if not problem.cluster_id:
            raise PartitionError(f"problem {problem.id} ({problem.source or 'no source'}) has no leak cluster id")
        if problem.id in seen:
            raise PartitionError(
                f"problem id {problem.id} appears twice ({seen[problem.id] or '?'} and {problem.source or '?'})"
            )
        seen[problem.id] = problem.source
        groups[problem.cluster_id].append(problem)
    return dict(groups)


def partition_problems(
    problems: Sequence[Problem], seed: str, plan: PartitionPlan | None = None
) -> dict[PartitionName, list[Problem]]:
    """The four partitions of clustered problems, deterministic from ``seed``.

    Order of choice: the public suite first (it is the only one balanced by
    problem count), then the held-out eval and the train pool as stratified
    samples of clusters, and the race bank gets the rest.
    """
    plan = plan or PartitionPlan()
    clusters = [_Cluster(cid, members) for cid, members in group_by_cluster(problems).items()]
    if not clusters:
        raise PartitionError("no problems to partition")
    total = len(clusters)
    public = _balanced_public(clusters, plan.public, seed)
    rest = _without(clusters, public)
    heldout = _stratified(rest, _round(plan.heldout_fraction * total), seed, "heldout")
    rest = _without(rest, heldout)
    train = _stratified(rest, _round(plan.train_fraction * total), seed, "train")
    bank = _without(rest, train)
    if not bank:
        raise PartitionError(
            f"the race bank would be empty: {total} clusters, {len(public)} public, {len(heldout)} held out, "
            f"{len(train)} in the train pool; lower --public, --heldout-fraction or the train fraction"
        )
    chosen = {
        PartitionName.public: public,
        PartitionName.race_bank: bank,
        PartitionName.train_pool: train,
        PartitionName.heldout: heldout,
    }
    return {name: sorted_problems(p for c in group for p in c.problems) for name, group in chosen.items()}


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    """The order problems are written in: by cluster, then id (stable file bytes for one seed)."""
    return sorted(problems, key=lambda p: (p.cluster_id or "", p.id))


def problem_file_bytes(problems: Iterable[Problem]) -> bytes:
    """A partition file's bytes: one row per line in :func:`sorted_problems` order. The API
    serves the public file rebuilt from the store with this, so its sha256 matches the manifest."""
    return b"".join(orjson.dumps(p.to_row()) + b"\n" for p in sorted_problems(problems))


def _without(clusters: list[_Cluster], taken: list[_Cluster]) -> list[_Cluster]:
    ids = {c.id for c in taken}
    return [c for c in clusters if c.id not in ids]


def _round(x: float) -> int:
    return math.floor(x + 0.5)  # half up, not Python's half-to-even


def _balanced_public(clusters: list[_Cluster], target: int, seed: str) -> list[_Cluster]:
    """Whole clusters adding up to ``target`` problems, balanced by intent, then by
    difficulty within an intent, as far as the clusters allow.

    Greedy: the next cluster is the one whose stratum is least filled so far
    (intent count, then cell count), preferring small clusters (a published
    cluster is spent for every secret use, so spend few problems per slot),
    then the seed's order. A cluster that would overshoot the target is skipped.
    """
    by_intent: Counter[str] = Counter()
    by_cell: Counter[tuple[str, str]] = Counter()
    # Per stratum, a queue ordered by (size, seed order): its head is its best candidate, so a
    # step looks at one cluster per stratum, not at every cluster.
    queues: dict[tuple[str, str], deque[_Cluster]] = defaultdict(deque)
    for cluster in sorted(clusters, key=lambda c: (c.size, rank(seed, "public", c.id))):
        queues[cluster.stratum].append(cluster)
    chosen: list[_Cluster] = []
    budget = target
    while budget > 0:
        heads = [q[0] for q in queues.values() if q and q[0].size <= budget]
        if not heads:
            break
        best = min(
            heads, key=lambda c: (by_intent[c.stratum[0]], by_cell[c.stratum], c.size, rank(seed, "public", c.id))
        )
        queues[best.stratum].popleft()
        chosen.append(best)
        budget -= best.size
        for problem in best.problems:
            by_intent[problem.intent.value] += 1
            by_cell[(problem.intent.value, problem.difficulty.value)] += 1
    return chosen


def _stratified(clusters: list[_Cluster], k: int, seed: str, purpose: str) -> list[_Cluster]:
    """``k`` clusters, each stratum contributing in proportion to its size
    (largest remainder), each stratum's pick in the seed's order."""
    if k <= 0:
        return []
    if k > len(clusters):
        raise PartitionError(
            f"{purpose} needs {k} clusters but only {len(clusters)} are left after the partitions chosen before it"
        )
    strata: dict[tuple[str, str], list[_Cluster]] = defaultdict(list)
    for cluster in clusters:
        strata[cluster.stratum].append(cluster)
    quotas = {s: k * len(members) / len(clusters) for s, members in strata.items()}
    take = {s: math.floor(q) for s, q in quotas.items()}
    leftover = k - sum(take.values())
    for s in sorted(quotas, key=lambda s: (-(quotas[s] - take[s]), s))[:leftover]:
        take[s] += 1
    picked: list[_Cluster] = []
    for s, members in strata.items():
        picked.extend(sorted(members, key=lambda c: rank(seed, purpose, c.id))[: take[s]])
    return picked


def partition_failures(groups: Mapping[PartitionName, Iterable[Problem]]) -> list[str]:
    """Every violation of 'a cluster, and a problem, lives in exactly one partition'."""
    failures: list[str] = []
    cluster_home: dict[str, PartitionName] = {}
    problem_home: dict[str, PartitionName] = {}
    reported: set[tuple[str, PartitionName]] = set()
    for name in PartitionName:
        for problem in groups.get(name, ()):
            if not problem.cluster_id:
                failures.append(f"{name.value}: problem {problem.id} has no leak cluster id")
                continue
            if problem.id in problem_home and problem_home[problem.id] is not name:
                failures.append(f"problem {problem.id} is in two partitions: {problem_home[problem.id]} and {name}")
            problem_home.setdefault(problem.id, name)
            home = cluster_home.setdefault(problem.cluster_id, name)
            if home is not name and (problem.cluster_id, name) not in reported:
                reported.add((problem.cluster_id, name))
                failures.append(
                    f"cluster {problem.cluster_id} is in two partitions: {home} and {name} (problem {problem.id})"
                )
    return failures
