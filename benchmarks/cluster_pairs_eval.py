"""Per-kind pairwise precision and recall of the leak-cluster guard on a labelled pairs file.

Every row of the file is clustered together (as a suite build clusters a whole pool), then
each kind is scored over every pair of problems touching it (arena/problems/pair_scores.py):
a twin swept into another pair's cluster is a false positive of its kind.

Run: ``.venv/bin/python benchmarks/cluster_pairs_eval.py PAIRS.jsonl [--errors] [--threshold T]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.problems.clusters import ClusterConfig  # noqa: E402
from arena.problems.pair_scores import read_pairs, render_scores, score_pairs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--threshold", type=float, default=None, help="meaning_threshold (default: the library's)")
    parser.add_argument("--errors", action="store_true", help="print each labelled pair the guard gets wrong")
    args = parser.parse_args()
    config = ClusterConfig() if args.threshold is None else ClusterConfig(meaning_threshold=args.threshold)
    pair_set = read_pairs(args.pairs)
    started = time.perf_counter()
    scores, clustering = score_pairs(pair_set, config)
    elapsed = time.perf_counter() - started
    print(
        f"{args.pairs}: {len(pair_set.pairs)} pairs, {len(pair_set.problems)} problems, "
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
    if args.errors:
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


if __name__ == "__main__":
    main()
