"""SFT tokens/s of the tiny Qwen3 on this machine's CPUs (a regression signal, not a target).

    .venv/bin/python benchmarks/train_cpu.py [--steps 6]

Builds the tests' tiny random Qwen3 and tokenizer and a small corpus from a generated catalog,
runs SFT for a few steps, prints tokens/s, step time and peak RSS as JSON on stdout."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from arena.shop.documents import document_row
    from arena.shop.index import CatalogIndex
    from arena.taskpack.build import build_catalog
    from distill.train.config import load_stage_config
    from distill.train.sft import run_sft
    from tests.conftest import search_products
    from tests.support.train_support import tiny_checkpoint, train_rows, write_jsonl

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        docs = root / "documents.jsonl"
        docs.write_bytes(b"".join(document_row(p) + b"\n" for p in search_products()))
        build_catalog(root / "catalog", documents=docs, strict=True)
        tiny = tiny_checkpoint(root, root / "catalog")
        (root / "data").mkdir()
        write_jsonl(root / "data" / "train.jsonl", train_rows(CatalogIndex(root / "catalog"), n=16))
        config = load_stage_config(
            None,
            "sft",
            {"model": str(tiny), "data": root / "data", "output": root / "out", "max_steps": args.steps,
             "learning_rate": 1e-3, "per_device_train_batch_size": 2, "max_length": 2048, "use_cpu": True,
             "save_strategy": "no"},
        )  # fmt: skip
        with contextlib.redirect_stdout(sys.stderr):
            report = run_sft(config)
    print(json.dumps({
        "threads": args.threads, "steps": report.steps, "tokens": report.tokens, "seconds": report.seconds,
        "tokens_per_s": report.tokens_per_s, "s_per_step": round(report.seconds / max(report.steps, 1), 3),
        "peak_rss_mb": report.peak_memory_mb,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
