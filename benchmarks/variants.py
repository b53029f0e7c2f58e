"""What the hard variant kinds cost to write, paired against the template kinds in one process.

    .venv/bin/python benchmarks/variants.py                  # builds a 5k synthetic catalog in a temp dir
    .venv/bin/python benchmarks/variants.py --catalog DIR --n 400 --rounds 7

Draws ``n`` solvable drafts of all four intents once, then times, interleaved
round by round, ``make_variants`` over every draft with the template kinds
(paraphrase, constraint_order, attribute_order, price_phrasing) and with the
hard kinds (deep_paraphrase, split_sentences, shop_items, riddle_reworded),
four variants per draft each. Prints the median microseconds per variant of
each, their ratio and the load average, then one JSON line with every figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.generator.candidates import CandidateContext, candidate  # noqa: E402
from arena.generator.catalog_frame import CatalogFrame  # noqa: E402
from arena.problems.draft import Draft  # noqa: E402
from arena.problems.model import Intent  # noqa: E402
from arena.problems.variants import HARD_KINDS, KINDS, make_variants  # noqa: E402
from arena.shop.index import CatalogIndex  # noqa: E402

TEMPLATE_KINDS = tuple(k for k in KINDS if k not in HARD_KINDS)


def drafts(catalog: Path, n: int) -> list[tuple[Draft, str]]:
    index = CatalogIndex(catalog)
    ctx = CandidateContext(index, CatalogFrame(catalog), seed=1)
    out: list[tuple[Draft, str]] = []
    for intent in Intent:
        i = 0
        while len(out) < n * (list(Intent).index(intent) + 1) // len(Intent) and i < 50 * n:
            outcome = candidate(ctx, intent, i)
            i += 1
            if outcome.draft is not None:
                out.append((outcome.draft, outcome.query))
    return out


def timed(pairs: list[tuple[Draft, str]], kinds) -> tuple[float, int]:
    start = time.perf_counter()
    made = sum(len(make_variants(d, q, 4, kinds)) for d, q in pairs)
    return time.perf_counter() - start, made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, help="A built catalog index (else a 5k synthetic one is built).")
    parser.add_argument("--n", type=int, default=400, help="Source drafts (all four intents).")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        catalog = args.catalog
        if catalog is None:
            from arena.taskpack.build import build_catalog

            catalog = Path(tmp) / "catalog"
            build_catalog(catalog, synthetic=5000, seed=1)
        pairs = drafts(catalog, args.n)
    per: dict[str, list[float]] = {"template": [], "hard": []}
    made: dict[str, int] = {}
    for _ in range(args.rounds):  # interleaved, so both see the same machine load
        for name, kinds in (("template", TEMPLATE_KINDS), ("hard", HARD_KINDS)):
            seconds, made[name] = timed(pairs, kinds)
            per[name].append(1e6 * seconds / max(1, made[name]))
    medians = {name: statistics.median(v) for name, v in per.items()}
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"{len(pairs)} drafts; variants per round: template {made['template']}, hard {made['hard']}")
    for name, value in medians.items():
        print(f"{name:>8}: median {value:,.0f} us per variant over {args.rounds} rounds")
    print(f"hard / template: {medians['hard'] / medians['template']:.2f}; load average {' '.join(load)}")
    figures = {"drafts": len(pairs), "made": made, "median_us": medians, "rounds": per, "loadavg": load}
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
