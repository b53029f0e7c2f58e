"""Per-kind pairwise precision and recall of the leak-cluster guard on a labelled pairs file.

Every row of the file is clustered together (as a suite build clusters a whole pool), then
each kind is scored over every pair of problems touching it (arena/problems/pair_scores.py):
a twin swept into another pair's cluster is a false positive of its kind.

With ``--groups GROUPS.json`` (or the ``.groups.json`` beside the pairs file; the hand-labelled cross-pair groups, see arena/problems/pair_scores.py)
the truth is complete and the pool line gives pairwise precision and recall over every pair of problems
of the file; ``--errors`` then also prints each false-positive cluster and each split group.

``--causes`` puts each missed pair (one true group, two clusters) down to its cause and rule
(arena/problems/split_causes.py): no candidate, another intent, a veto (by rule) or a member's veto.
Given several pairs files, each is clustered on its own (its groups file is the ``.groups.json`` beside
it) and ``--causes`` also prints the causes summed over all of them.

Run: ``.venv/bin/python benchmarks/cluster_pairs_eval.py PAIRS.jsonl [PAIRS.jsonl ...] [--groups GROUPS.json]
[--errors] [--causes] [--threshold T]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.problems.clusters import ClusterConfig  # noqa: E402
from arena.problems.pair_scores import (  # noqa: E402
    read_groups,
    read_pairs,
    render_scores,
    score_pairs,
    score_pool,
    true_groups,
)
from arena.problems.split_causes import SplitCause, render_causes, split_causes, tally  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", type=Path, nargs="+")
    parser.add_argument("--threshold", type=float, default=None, help="meaning_threshold (default: the library's)")
    parser.add_argument("--groups", type=Path, default=None, help="cross-pair groups file: completes the truth")
    parser.add_argument("--errors", action="store_true", help="print each labelled pair the guard gets wrong")
    parser.add_argument("--causes", action="store_true", help="why each missed pair was missed (needs groups)")
    args = parser.parse_args()
    if args.groups and len(args.pairs) > 1:
        parser.error("--groups names one pool's groups: give one pairs file (several find theirs beside them)")
    config = ClusterConfig() if args.threshold is None else ClusterConfig(meaning_threshold=args.threshold)
    total: Counter[tuple[str, str]] = Counter()
    for path in args.pairs:
        groups_path = args.groups or _beside(path)
        if args.causes and groups_path is None:
            parser.error(f"--causes needs the pool's groups: no {path.name[: -len(path.suffix)]}.groups.json")
        for cause in evaluate(path, groups_path, config, args.errors, args.causes):
            total[cause.cause, cause.rule] += cause.pairs
    if args.causes and len(args.pairs) > 1:
        print(f"\nmissed pairs by cause, {len(args.pairs)} pools\n{render_causes(tally(total))}")


def _beside(pairs: Path) -> Path | None:
    groups = pairs.with_name(pairs.name[: -len(pairs.suffix)] + ".groups.json")
    return groups if groups.exists() else None


def evaluate(
    path: Path, groups_path: Path | None, config: ClusterConfig, errors: bool, causes: bool
) -> list[SplitCause]:
    """Score one pairs file (printing as the module says); its missed pairs' causes when asked."""
    pair_set = read_pairs(path)
    groups = read_groups(groups_path, pair_set) if groups_path else None
    started = time.perf_counter()
    scores, clustering = score_pairs(pair_set, config, groups)
    elapsed = time.perf_counter() - started
    print(
        f"{path}: {len(pair_set.pairs)} pairs, {len(pair_set.problems)} problems, "
        f"{len(clustering.members())} clusters, meaning_threshold {config.meaning_threshold} ({elapsed:.1f} s)"
    )
    print(render_scores(scores))
    merge = [s for s in scores if s.direction != "apart"]
    apart = [s for s in scores if s.direction == "apart"]
    print(
        f"min precision {min(s.precision for s in scores):.3f}, min recall over merge kinds "
        f"{min((s.recall for s in merge), default=1.0):.3f}, apart pairs kept apart "
        f"{sum(s.labelled_right for s in apart)}/{sum(s.pairs for s in apart)}"
    )
    if groups is not None:
        pool = score_pool(pair_set, clustering, groups)
        print(
            f"pool (every pair of the {len(pair_set.problems)} problems): precision {pool.precision:.3f}, "
            f"recall {pool.recall:.3f} (tp {pool.tp}, fp {pool.fp}, fn {pool.fn})"
        )
    if errors and groups is not None:
        _print_pool_errors(pair_set, clustering, groups)
    if errors:
        from arena.problems.meaning import static_embedder
        from arena.problems.twins import conflict, read_request

        embedder = static_embedder(config.meaning_dims)

        by_id = {p.id: p for p in pair_set.problems}
        for pair, (a, b) in zip(pair_set.pairs, pair_set.sides, strict=True):
            joined = clustering.cluster_of[a] == clustering.cluster_of[b]
            if joined == (pair["direction"] == "merge"):
                continue
            ra, rb = read_request(by_id[a]), read_request(by_id[b])
            why = conflict(ra, rb)
            va, vb = embedder.embed([ra.text, rb.text])
            print(f"\n[{pair['kind']} {pair['direction']}] joined={joined} cosine={float(va @ vb):.3f} conflict={why}")
            print(f"  a: {by_id[a].query!r}\n  b: {by_id[b].query!r}")
    if not causes or groups is None:
        return []
    found = split_causes(pair_set.problems, clustering, true_groups(pair_set, groups), config)
    print(f"missed pairs by cause\n{render_causes(found)}")
    return found


def _print_pool_errors(pair_set, clustering, groups) -> None:
    """Each predicted cluster holding two true groups (false positives), then each true group split."""
    from arena.problems.pair_scores import _groups

    truth = true_groups(pair_set, groups)
    query = {p.id: p.query for p in pair_set.problems}
    for members in _groups(clustering.cluster_of):
        if len({truth[m] for m in members}) > 1:
            print("\n[false positive cluster]")
            for m in sorted(members, key=lambda m: (truth[m], m)):
                print(f"  {truth[m][-28:]:>28} {m}: {query[m]!r}")
    for members in _groups(truth):
        if len({clustering.cluster_of[m] for m in members}) > 1:
            print("\n[split group]")
            for m in sorted(members, key=lambda m: (clustering.cluster_of[m], m)):
                print(f"  {clustering.cluster_of[m]} {m}: {query[m]!r}")


if __name__ == "__main__":
    main()
