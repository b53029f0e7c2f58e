"""find_product against the official search stack (pyserini 1.0.0 / Anserini 1.0.0), on one documents file.

    .venv/bin/python benchmarks/search_fidelity.py --install             # the peer env, once (~5 min)
    .venv/bin/python benchmarks/search_fidelity.py                       # 100k and 1M
    .venv/bin/python benchmarks/search_fidelity.py --sizes 20000 --workdir /tmp/f --keep   # quick, reusable
    .venv/bin/python benchmarks/search_fidelity.py --fixtures            # regenerate the Lucene token fixture
    .venv/bin/python benchmarks/search_fidelity.py --dev-tokens out.jsonl   # Lucene tokens of tasks + catalog

pyserini runs in its own virtual environment (default ~/.cache/arena/pyserini-env, made by
--install), in a child process (benchmarks/lucene_peer.py): the project venv never imports it.
The project side uses only its public surface: build_catalog, CatalogIndex, ShopEnvironment.

For each size: write the synthetic catalog (seeded) as one official documents file, build the
project index and the Lucene index (build_index.sh's options) from it, then print
(a) fidelity per query family (the 900 official task requests, >= 2,000 keyword queries of
    2-4 title words): same page-1 set, same page-1 order, Jaccard@10, same top-50, against
    pyserini's search(q, k=100000, remove_dups=True) as the official server calls it;
(b) filtered and sorted requests: the project's page vs the official server's logic run on
    pyserini (price bounds incl. "nan", services incl. an untrimmed " COD", sorts, pages 1-5);
(c) latency p50/p99: project find_product unfiltered and filtered, pyserini k=50, official logic;
and both builds' wall time and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.lucene_client import DEFAULT_ENV, Peer, install  # noqa: E402
from benchmarks.lucene_texts import fixture_texts, task_queries, task_titles  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "lucene_english_tokens.json"
OFFICIAL_DEPTH = 100_000  # server.py's CAPACITY
TOP = 50  # server.py keeps 50 survivors (5 pages of 10)


# --- Lucene tokens: the committed fixture and the dev file -------------------------------------


def write_fixtures(env: Path) -> None:
    texts = fixture_texts()
    with Peer(env) as peer:
        tokens = peer.request({"op": "analyze", "texts": texts})["tokens"]
    rows = [{"text": t, "tokens": k} for t, k in zip(texts, tokens, strict=True)]
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(rows, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{FIXTURE.relative_to(REPO)}: {len(rows)} texts, {FIXTURE.stat().st_size / 1024:.0f} KiB")


def write_dev_tokens(env: Path, out: Path, products: int, seed: int) -> None:
    """Lucene's tokens for every official request and title, the fixture's texts, and the
    contents of ``products`` synthetic products: a larger check than the fixture."""
    from arena.shop.synthetic import generate_products

    texts = list(dict.fromkeys([*fixture_texts(), *task_queries(), *task_titles()]))
    texts += [p.contents() for p in generate_products(products, seed)]
    with Peer(env) as peer, out.open("w", encoding="utf-8") as handle:
        for start in range(0, len(texts), 2000):
            batch = texts[start : start + 2000]
            for text, tokens in zip(batch, peer.request({"op": "analyze", "texts": batch})["tokens"], strict=True):
                handle.write(json.dumps({"text": text, "tokens": tokens}, ensure_ascii=False) + "\n")
    print(f"{out}: {len(texts)} texts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install", action="store_true", help="create the pyserini peer environment and exit")
    parser.add_argument("--env", type=Path, default=DEFAULT_ENV, help="the peer environment (default %(default)s)")
    parser.add_argument("--fixtures", action="store_true", help=f"rewrite {FIXTURE.relative_to(REPO)} and exit")
    parser.add_argument("--dev-tokens", type=Path, help="write Lucene tokens of tasks and catalog texts and exit")
    parser.add_argument("--dev-products", type=int, default=20_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keyword-queries", type=int, default=2000)
    parser.add_argument("--filtered-requests", type=int, default=600)
    parser.add_argument("--official-timing", type=int, default=300, help="requests timed through the official logic")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the documents and both indexes; reuse them next run")
    args = parser.parse_args()
    if args.install:
        install(args.env)
        return
    if args.fixtures:
        write_fixtures(args.env)
        return
    if args.dev_tokens:
        write_dev_tokens(args.env, args.dev_tokens, args.dev_products, args.seed)
        return
    from fidelity_run import run_sizes

    run_sizes(args)


if __name__ == "__main__":
    main()
