"""The experiment's report: report.json (the contract), report.md and report.png.

``asr_ci`` is the bootstrap 95% interval of a row's greedy ASR over the held-out problems;
``asr_gain_ci`` the paired-bootstrap 95% interval of (row - base) on the same problems
(arena.scoring.paired, shared with the race's comparisons).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from arena.scoring.paired import bootstrap_interval, paired_bootstrap_gain


class Heldout(BaseModel):
    n: int
    clusters: int
    leak_check: str  # "ok" or the first leak, in words


class Row(BaseModel):
    stage: str
    train_examples: int
    train_tokens: int
    train_seconds: float
    asr: float
    asr_ci: tuple[float, float]
    asr_gain_ci: tuple[float, float]
    pass_at_1: float | None = None
    pass_at_k: float | None = None
    k: int | None = None
    by_intent: dict[str, float]


class Report(BaseModel):
    model: str
    heldout: Heldout
    rows: list[Row]


def make_row(stage: str, evaluation: dict[str, Any], base: dict[str, Any], train: dict[str, Any] | None) -> Row:
    greedy: dict[str, bool] = evaluation["greedy"]
    values = [float(greedy[i]) for i in sorted(greedy)]
    gain = paired_bootstrap_gain(base["greedy"], greedy)
    metrics = evaluation["metrics"]
    report = (train or {}).get("report") or {}
    return Row(
        stage=stage,
        train_examples=int(report.get("examples", 0)),
        train_tokens=int(report.get("tokens", 0)),
        train_seconds=float(report.get("seconds", 0.0)),
        asr=metrics["asr"],
        asr_ci=bootstrap_interval(values),
        asr_gain_ci=(gain.low, gain.high),
        by_intent={intent: part["asr"] for intent, part in metrics["by_intent"].items()},
    )


def add_sampled(row: Row, sampled: dict[str, Any], k: int) -> Row:
    metrics = sampled["metrics"]
    at_k = {int(key): value for key, value in metrics["pass_at_k"].items()}
    return row.model_copy(update={"pass_at_1": metrics["pass_at_1"], "pass_at_k": at_k.get(k), "k": k})


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def render_markdown(report: Report, extra: dict[str, Any]) -> str:
    held = report.heldout
    lines = [
        f"# Experiment: {extra['name']}",
        "",
        f"Student `{report.model}`; {held.n} held-out problems in {held.clusters} leak clusters; "
        f"leak check: **{held.leak_check}**. Greedy ASR, {extra['mode']} scoring, every row served the same way "
        f"(fp32 checkpoint, in-process transformers, one template). Intervals: bootstrap 95% over problems; the "
        f"gain is paired with the base on the same problems.",
        "",
        "| stage | examples | tokens | train s | ASR | ASR 95% | gain 95% | pass@1 | pass@k |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report.rows:
        k = f"k={row.k}: {_pct(row.pass_at_k)}" if row.k else "-"
        lines.append(
            f"| {row.stage} | {row.train_examples} | {row.train_tokens} | {row.train_seconds:.0f} | {_pct(row.asr)} | "
            f"[{_pct(row.asr_ci[0])}, {_pct(row.asr_ci[1])}] | [{row.asr_gain_ci[0]:+.1%}, {row.asr_gain_ci[1]:+.1%}] "
            f"| {_pct(row.pass_at_1)} | {k} |"
        )
    intents = sorted({i for row in report.rows for i in row.by_intent})
    lines += ["", "| stage | " + " | ".join(intents) + " |", "|---|" + "---:|" * len(intents)]
    for row in report.rows:
        lines.append(f"| {row.stage} | " + " | ".join(_pct(row.by_intent.get(i)) for i in intents) + " |")
    lines += ["", "| row | episodes | tokens per episode | first turns calling a tool | of which executed |"]
    lines.append("|---|---:|---:|---:|---:|")
    for stage, stats in extra["episodes"].items():
        lines.append(
            f"| {stage} | {stats['episodes']} | {stats['tokens_per_episode']:.0f} | "
            f"{stats['first_turn_tool_calls']:.0%} | {stats['first_turn_executed']:.0%} |"
        )
    if extra.get("skipped"):
        lines += ["", "Skipped (budget spent): " + ", ".join(extra["skipped"]) + "."]
    if extra.get("best"):
        lines += ["", f"pass@k rows: the base and the row with the best greedy ASR ({extra['best']})."]
    lines += ["", "| step | seconds | cached |", "|---|---:|---|"]
    for step, (seconds, cached) in extra["steps"].items():
        lines.append(f"| {step} | {seconds:.0f} | {'yes' if cached else ''} |")
    lines += ["", "![ASR per stage](report.png)", ""]
    return "\n".join(lines)


def plot(report: Report, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = [row.stage for row in report.rows]
    asr = [row.asr for row in report.rows]
    low = [row.asr - row.asr_ci[0] for row in report.rows]
    high = [row.asr_ci[1] - row.asr for row in report.rows]
    figure, axis = plt.subplots(figsize=(1.4 * len(stages) + 2, 3.5))
    axis.bar(stages, asr, yerr=[low, high], capsize=4, color="#4c72b0")
    axis.set_ylabel("greedy ASR (strict)")
    axis.set_ylim(0, 1)
    axis.set_title(f"{report.model} on {report.heldout.n} held-out problems")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
