"""Scoring the leak-cluster guard on a file of labelled pairs, clustered as a whole.

A pairs file holds one JSON object per line: ``kind`` (what variant or twin it is),
``direction`` (``merge``: one problem; ``apart``: two problems), ``a`` and ``b`` (rows
in the official ShoppingBench shape, or query-only rows with their ``intent``). Every
row of the file is clustered *together* (:func:`score_pairs`), as a suite build would,
so a twin that joins another pair's cluster through a third problem counts against
the guard: scoring pair by pair would never see that chaining.

The truth is the transitive closure of the ``merge`` pairs (and of rows written twice
with the same content under two ids). Per kind, every pair of problems that touches a
row of that kind is counted: joined and truly one problem is a true positive, joined
and not is a false positive, split and truly one is a false negative. A false positive
is *known* when the labels say the two differ (an ``apart`` pair, or a problem joined to
one labelled apart from its group: a twin chained in), *unlabelled* otherwise (two rows
of different pairs that no label relates, which a person may have written as the same
ask): ``precision`` counts both, ``precision_known`` only the first.

A **groups file** completes the truth: ``{"groups": [[id, ...], ...]}`` lists problems of
*different* pairs that ask exactly the same thing (labelled by hand). With it, the truth
is the closure of the merge pairs and those groups, every other pair of problems is two
asks, and every false positive is known: :func:`score_pool` then measures pairwise
precision and recall over every pair of problems in the pool, as a hidden check does.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from pydantic import BaseModel

from arena.problems.clusters import ClusterConfig, Clustering, cluster_problems
from arena.problems.model import Problem, content_id
from arena.problems.official import parse_row


class KindScore(BaseModel):
    kind: str
    direction: str
    pairs: int
    labelled_right: int  # labelled pairs the guard got right (joined if merge, apart if apart)
    tp: int
    fp: int  # known and unlabelled
    fn: int
    fp_unlabelled: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def precision_known(self) -> float:
        known = self.fp - self.fp_unlabelled
        return self.tp / (self.tp + known) if self.tp + known else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


class PairSet(BaseModel):
    pairs: list[dict]
    problems: list[Problem]
    sides: list[tuple[str, str]]  # problem ids of each pair's a and b


def read_pairs(path: str | Path) -> PairSet:
    """The pairs and the distinct problems they name; ValueError names the line of a bad row."""
    pairs: list[dict] = []
    by_id: dict[str, Problem] = {}
    sides: list[tuple[str, str]] = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        pair = json.loads(line)
        ids = []
        for side in ("a", "b"):
            row = dict(pair[side])
            if "intent" not in row and pair.get("intent") and "reward" not in row:
                row["intent"] = pair["intent"]
            # A row without an id is named by its content, so a source written in two pairs is one problem.
            row.setdefault("id", content_id(row))
            try:
                problem = parse_row(row, source=f"{Path(path).name}:{number}", query_only=True)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: side {side}: {exc}") from None
            if problem.knowledge is None and isinstance(row.get("Knowledge_Attribute"), str):
                # A query-only riddle keeps the fact it asks: the guard compares it (arena.problems.twins).
                problem.extra["Knowledge_Attribute"] = row["Knowledge_Attribute"]
            if problem.id in by_id and by_id[problem.id].query != problem.query:
                raise ValueError(f"{path}:{number}: side {side}: id {problem.id!r} names two different rows")
            by_id.setdefault(problem.id, problem)
            ids.append(problem.id)
        pairs.append(pair)
        sides.append((ids[0], ids[1]))
    return PairSet(pairs=pairs, problems=list(by_id.values()), sides=sides)


def read_groups(path: str | Path, pair_set: PairSet) -> list[list[str]]:
    """The hand-labelled cross-pair groups of a pairs file; ValueError names an unknown id."""
    try:
        groups = json.loads(Path(path).read_text())["groups"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a groups file ({{'groups': [[id, ...], ...]}}): {exc}") from None
    known = {p.id for p in pair_set.problems}
    for number, group in enumerate(groups, 1):
        unknown = sorted(set(group) - known)
        if unknown:
            raise ValueError(f"{path}: group {number} names problems not in the pairs file: {', '.join(unknown)}")
    return [list(group) for group in groups]


def true_groups(pair_set: PairSet, groups: list[list[str]] | None) -> dict[str, str]:
    """Each problem -> a representative of its true group (merge pairs, equal rows, groups)."""
    truth_parent: dict[str, str] = {p.id: p.id for p in pair_set.problems}

    def root(x: str) -> str:
        while truth_parent[x] != x:
            truth_parent[x] = truth_parent[truth_parent[x]]
            x = truth_parent[x]
        return x

    for pair, (a, b) in zip(pair_set.pairs, pair_set.sides, strict=True):
        if pair["direction"] == "merge":
            truth_parent[root(a)] = root(b)
    by_content: dict[str, str] = {}
    for problem in pair_set.problems:
        key = content_id({**problem.to_row(), "id": None, "cluster_id": None, "difficulty": None})
        if key in by_content:
            truth_parent[root(problem.id)] = root(by_content[key])
        by_content.setdefault(key, problem.id)
    for group in groups or []:
        for other in group[1:]:
            truth_parent[root(other)] = root(group[0])
    return {x: root(x) for x in truth_parent}


def score_pool(pair_set: PairSet, clustering: Clustering, groups: list[list[str]]) -> KindScore:
    """Pairwise precision and recall over every pair of problems of the pool (the truth completed by
    ``groups``): any two problems of different true groups in one cluster are a false positive."""
    truth = true_groups(pair_set, groups)
    cluster_of = clustering.cluster_of
    counts: Counter = Counter()
    for members in _groups(cluster_of):
        for k, x in enumerate(members):
            for y in members[k + 1 :]:
                counts["tp" if truth[x] == truth[y] else "fp"] += 1
    for members in _groups(truth):
        for k, x in enumerate(members):
            for y in members[k + 1 :]:
                counts["fn"] += int(cluster_of[x] != cluster_of[y])
    return KindScore(
        kind="all",
        direction="both",
        pairs=len(pair_set.pairs),
        labelled_right=0,
        tp=counts["tp"],
        fp=counts["fp"],
        fn=counts["fn"],
    )


def score_pairs(
    pair_set: PairSet, config: ClusterConfig | None = None, groups: list[list[str]] | None = None
) -> tuple[list[KindScore], Clustering]:
    """Cluster every problem of the file at once and score each kind (see the module docstring).
    With ``groups`` the truth is complete and no false positive is unlabelled."""
    clustering = cluster_problems(pair_set.problems, config)
    cluster_of = clustering.cluster_of
    truth = true_groups(pair_set, groups)

    def root(x: str) -> str:
        return truth[x]

    apart_groups: set[tuple[str, str]] = set()
    for pair, (a, b) in zip(pair_set.pairs, pair_set.sides, strict=True):
        if pair["direction"] == "apart":
            ra, rb = root(a), root(b)
            apart_groups.update({(ra, rb), (rb, ra)})
    kinds_of: dict[str, set[str]] = defaultdict(set)
    for pair, (a, b) in zip(pair_set.pairs, pair_set.sides, strict=True):
        kinds_of[a].add(pair["kind"])
        kinds_of[b].add(pair["kind"])
    counts: dict[str, Counter] = defaultdict(Counter)
    ids = sorted(truth)
    # Pairs of problems that are joined or truly one: the only ones that count (the rest are
    # true negatives), found per predicted cluster and per truth group instead of all n^2.
    relevant: set[tuple[str, str]] = set()
    for partition in (_groups(cluster_of), _groups({i: root(i) for i in ids})):
        for members in partition:
            relevant.update((x, y) for k, x in enumerate(members) for y in members[k + 1 :])
    for x, y in sorted(relevant):
        joined = cluster_of[x] == cluster_of[y]
        same = root(x) == root(y)
        outcome = "tp" if joined and same else "fp" if joined else "fn"
        for kind in kinds_of[x] | kinds_of[y]:
            counts[kind][outcome] += 1
            if outcome == "fp" and groups is None and (root(x), root(y)) not in apart_groups:
                counts[kind]["fp_unlabelled"] += 1
    per_kind: dict[str, Counter] = defaultdict(Counter)
    direction: dict[str, str] = {}
    for pair, (a, b) in zip(pair_set.pairs, pair_set.sides, strict=True):
        joined = cluster_of[a] == cluster_of[b]
        per_kind[pair["kind"]]["pairs"] += 1
        per_kind[pair["kind"]]["right"] += int(joined == (pair["direction"] == "merge"))
        direction.setdefault(pair["kind"], pair["direction"])
        if direction[pair["kind"]] != pair["direction"]:
            direction[pair["kind"]] = "both"
    scores = [
        KindScore(
            kind=kind,
            direction=direction[kind],
            pairs=per_kind[kind]["pairs"],
            labelled_right=per_kind[kind]["right"],
            tp=counts[kind]["tp"],
            fp=counts[kind]["fp"],
            fn=counts[kind]["fn"],
            fp_unlabelled=counts[kind]["fp_unlabelled"],
        )
        for kind in sorted(per_kind)
    ]
    return scores, clustering


def _groups(assignment: dict[str, str]) -> list[list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for item, group in assignment.items():
        groups[group].append(item)
    return [sorted(members) for members in groups.values() if len(members) > 1]


def render_scores(scores: list[KindScore]) -> str:
    lines = [
        "| kind | direction | pairs | labelled pairs right | precision | precision (known) | recall | tp | fp "
        "(unlabelled) | fn |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in scores:
        lines.append(
            f"| {s.kind} | {s.direction} | {s.pairs} | {s.labelled_right} | {s.precision:.3f} "
            f"| {s.precision_known:.3f} | {s.recall:.3f} | {s.tp} | {s.fp} ({s.fp_unlabelled}) | {s.fn} |"
        )
    return "\n".join(lines)
