"""SFT tokens/s of the real student (Gemma 3 270M) on long trajectories: cut at 2,048 tokens (the old
limit) against whole (6,144), each with transformers' sdpa attention (the whole masked square) and the
windowed sliding attention training uses (distill/windowed_attention.py), and what step-level rows
would cost instead.

    .venv/bin/python benchmarks/train_long.py CORPUS_DIR [--steps 1] [--rounds 1] [--rows 1]
        [--lengths 2048,6144] [--attention sdpa,sdpa_windowed]

CORPUS_DIR is an export (an experiment's ``steps/export/corpus``). The benchmark trains on its longest
rows (train.jsonl and rejected.jsonl), one row a step, LoRA as the experiment configs set it, at each
max_length and attention. Each run is its own process (its peak RSS is its own), all of them
interleaved round by round; the first step's loss of each run is printed, so the attentions can be
seen to train the same model. It also counts, with the student's tokenizer and template, the tokens one
epoch processes as whole rows (every assistant turn in the loss of one pass) and as step-level rows
(each assistant turn a row with its whole context, as ShoppingBench's SFT builds them). Prints one JSON
line per run, then the medians with the load average, on stdout."""

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


def one(corpus: Path, rows: int, steps: int, max_length: int, attention: str) -> dict:
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
             "learning_rate": 1e-3, "per_device_train_batch_size": 1, "max_length": max_length, "use_cpu": True,
             "save_strategy": "no", "packing": False,
             "dtype": "float32", "lora": {"r": 16, "alpha": 32, "dropout": 0.05}, "report_to": "none",
             "attention": attention},
        )  # fmt: skip
        with contextlib.redirect_stdout(sys.stderr):
            report = run_sft(config)
    return {
        "max_length": max_length, "attention": attention, "steps": report.steps, "tokens": report.tokens,
        "first_loss": report.first_loss,
        "seconds": report.seconds, "tokens_per_s": report.tokens_per_s, "peak_rss_mb": report.peak_memory_mb,
    }  # fmt: skip


def step_level_count(corpus: Path) -> dict:
    """Tokens one epoch processes: whole rows against step-level rows, over train.jsonl."""
    from transformers import AutoTokenizer

    from distill.experiment.controls import read_rows
    from distill.student import apply_template, default_cache
    from distill.train.data import shape_dialogue

    tokenizer = AutoTokenizer.from_pretrained(default_cache() / "gemma-3-270m")
    apply_template(tokenizer)

    def size(messages: list, tools: list) -> int:
        encoded = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=True, return_dict=True)
        return len(encoded["input_ids"])

    whole = steps = 0
    for row in read_rows(corpus / "train.jsonl"):
        messages = shape_dialogue(row["messages"], "train.jsonl")
        whole += size(messages, row.get("tools"))
        steps += sum(
            size(messages[: i + 1], row.get("tools")) for i, m in enumerate(messages) if m["role"] == "assistant"
        )
    return {"whole_row_tokens": whole, "step_level_tokens": steps, "ratio": round(steps / whole, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--lengths", default="2048,6144")
    parser.add_argument("--attention", default="sdpa,sdpa_windowed")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--one-attention", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.corpus, args.rows, args.steps, args.one, args.one_attention)))
        return
    print(json.dumps(step_level_count(args.corpus)), flush=True)
    runs: dict[tuple[int, str], list[dict]] = {
        (int(length), attention): [] for length in args.lengths.split(",") for attention in args.attention.split(",")
    }
    for _ in range(args.rounds):
        for length, attention in runs:
            done = subprocess.run(
                [sys.executable, __file__, str(args.corpus), "--steps", str(args.steps), "--rows", str(args.rows),
                 "--one", str(length), "--one-attention", attention],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps(result), flush=True)
            runs[length, attention].append(result)
    summary: dict = {
        f"{length} {attention}": {
            "tokens_per_s": statistics.median(r["tokens_per_s"] for r in results),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in results),
        }
        for (length, attention), results in runs.items()
    }
    summary["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
