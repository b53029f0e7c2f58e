"""SFT tokens/s of the real student (Gemma 3 270M) on long trajectories, gradient checkpointing on and off.

    .venv/bin/python benchmarks/train_long.py CORPUS_DIR [--steps 2] [--rounds 1] [--rows 4]

CORPUS_DIR is an export (an experiment's ``steps/export/corpus``); the benchmark trains on its longest
rows (train.jsonl and rejected.jsonl, the format gate's length verdict ignored), one row a step at
max_length 6144, LoRA as the experiment configs set it. Each mode runs in its own process (its peak RSS
is its own), the modes interleaved round by round; prints one JSON line per run and the medians, with
the load average, on stdout. trl turns gradient checkpointing on by default: it recomputes every
layer's forward pass during the backward pass to save activation memory, which a 270M model on a CPU
with gigabytes free does not need."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def one(corpus: Path, rows: int, steps: int, checkpointing: bool) -> dict:
    import contextlib

    from distill.experiment.controls import read_rows
    from distill.student import default_cache
    from distill.train.config import load_stage_config
    from distill.train.sft import run_sft

    student = default_cache() / "gemma-3-270m"
    candidates = read_rows(corpus / "train.jsonl") + read_rows(corpus / "rejected.jsonl")
    longest = sorted(candidates, key=lambda r: -sum(len(m.get("content") or "") for m in r["messages"]))[:rows]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in longest))
        config = load_stage_config(
            None,
            "sft",
            {"model": str(student), "data": data, "output": Path(tmp) / "out", "max_steps": steps,
             "learning_rate": 1e-3, "per_device_train_batch_size": 1, "max_length": 6144, "use_cpu": True,
             "save_strategy": "no", "packing": False, "gradient_checkpointing": checkpointing,
             "dtype": "float32", "lora": {"r": 16, "alpha": 32, "dropout": 0.05}, "report_to": "none"},
        )  # fmt: skip
        with contextlib.redirect_stdout(sys.stderr):
            report = run_sft(config)
    return {
        "gradient_checkpointing": checkpointing, "steps": report.steps, "tokens": report.tokens,
        "seconds": report.seconds, "tokens_per_s": report.tokens_per_s, "peak_rss_mb": report.peak_memory_mb,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--one", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.corpus, args.rows, args.steps, args.one == "on")))
        return
    runs: dict[str, list[dict]] = {"on": [], "off": []}
    for _ in range(args.rounds):
        for mode in ("on", "off"):
            done = subprocess.run(
                [sys.executable, __file__, str(args.corpus), "--steps", str(args.steps), "--rows", str(args.rows),
                 "--one", mode],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps(result), flush=True)
            runs[mode].append(result)
    summary = {
        mode: {
            "tokens_per_s": statistics.median(r["tokens_per_s"] for r in results),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in results),
        }
        for mode, results in runs.items()
    }
    summary["speedup"] = round(summary["off"]["tokens_per_s"] / summary["on"]["tokens_per_s"], 2)
    summary["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
