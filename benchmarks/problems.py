"""Problem generation rate with the solvability check on (target: >= 10,000 problems/min at 100k products).

    .venv/bin/python benchmarks/problems.py                      # builds a 100k catalog in a temp dir
    .venv/bin/python benchmarks/problems.py --catalog DIR        # reuse a built index
    .venv/bin/python benchmarks/problems.py --n 2000 --workers 2 --variants 2

Prints the catalog build time, the frame scan, generation wall time and CPU
time (this process plus worker processes), problems per minute of wall time
and per CPU-minute (the figure that does not depend on what else the machine
runs), the rejection rate by reason and the difficulty mix, then one JSON line
with every figure. Knowledge problems are included (their corpus is not
written: that is I/O, not generation).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.generator.generate import GeneratorConfig, generate  # noqa: E402
from arena.shop.index import CatalogIndex  # noqa: E402
from arena.taskpack.build import build_catalog  # noqa: E402

TARGET_PER_MINUTE = 10_000


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(catalog: Path, n: int, seed: int, workers: int, variants: int) -> dict:
    index = CatalogIndex(catalog)
    cpu, wall = _cpu_seconds(), time.perf_counter()
    result = generate(index, GeneratorConfig(n=n, seed=seed, workers=workers, variants=variants))
    wall, cpu = time.perf_counter() - wall, _cpu_seconds() - cpu
    report = result.report
    rejections: Counter[str] = Counter()
    for by in report.rejections.values():
        rejections.update(by)
    candidates = sum(report.candidates.values())
    difficulty: Counter[str] = Counter()
    for by in report.counts.values():
        difficulty.update(by)
    return {
        "catalog_products": len(index),
        "problems": report.generated,
        "variants": len(result.problems) - report.generated,
        "workers": workers,
        "frame_s": round(report.frame_seconds, 2),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "per_minute_wall": round(60 * report.generated / wall),
        "per_cpu_minute": round(60 * report.generated / cpu) if cpu else None,
        "candidates": candidates,
        "rejected_share": round(sum(rejections.values()) / candidates, 3) if candidates else 0.0,
        "rejections": dict(rejections.most_common()),
        "difficulty": dict(difficulty),
        "by_intent": {k: sum(v.values()) for k, v in report.counts.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, help="A built catalog index (else a synthetic one is built).")
    parser.add_argument("--size", type=int, default=100_000, help="Synthetic catalog size when building.")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--variants", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        catalog = args.catalog
        build_s = None
        if catalog is None:
            catalog = Path(tmp) / "catalog"
            started = time.perf_counter()
            build_catalog(catalog, synthetic=args.size, seed=1)
            build_s = round(time.perf_counter() - started, 1)
            print(f"built a {args.size:,}-product synthetic catalog in {build_s}s", file=sys.stderr)
        figures = run(catalog, args.n, args.seed, args.workers, args.variants) | {"catalog_build_s": build_s}

    ok = figures["per_minute_wall"] >= TARGET_PER_MINUTE
    print(
        f"{figures['problems']:,} problems (+{figures['variants']:,} variants) from {figures['catalog_products']:,} "
        f"products, {figures['workers']} worker(s): wall {figures['wall_s']}s (frame scan {figures['frame_s']}s), "
        f"CPU {figures['cpu_s']}s"
    )
    print(
        f"rate: {figures['per_minute_wall']:,}/min wall, {figures['per_cpu_minute']:,}/CPU-minute "
        f"(target {TARGET_PER_MINUTE:,}/min: {'met' if ok else 'NOT met'})"
    )
    print(f"candidates {figures['candidates']:,}, rejected {figures['rejected_share']:.1%}: {figures['rejections']}")
    print(f"by intent {figures['by_intent']}, difficulty {figures['difficulty']}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
