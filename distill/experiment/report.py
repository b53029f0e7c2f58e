"""The experiment's report: report.json (the contract), report.md and report.png.

``asr_ci`` is the bootstrap 95% interval of a row's greedy ASR over the held-out problems;
``asr_gain_ci`` the paired-bootstrap 95% interval of (row - base) on the same problems
(arena.scoring.paired, shared with the race's comparisons).
"""

from __future__ import annotations

import json
import random
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
    # The paired gain against the format-control row on the same problems (None: no control configured).
    asr_gain_control_ci: tuple[float, float] | None = None


class FormatControl(BaseModel):
    """The format-control row: what it trained on and the row whose training tokens it matches."""

    row: str
    controls: str
    candidates: int  # failed or judge-rejected trajectories that passed the format gate
    examples: int  # rows trained per epoch (a candidate repeats when one pass is short of the tokens)
    tokens: int  # rendered tokens per epoch (each row cut at max_length), >= target
    target: int  # the controlled row's rendered tokens per epoch


class LeakInflation(BaseModel):
    """One checkpoint on leak-cluster mates of its own training problems, beside the guarded held-out."""

    row: str
    n: int
    asr: float
    asr_ci: tuple[float, float]
    heldout_asr: float
    inflation: float  # mates ASR - held-out ASR
    inflation_ci: tuple[float, float]  # bootstrap over both problem sets (unpaired: different problems)
    by_intent: dict[str, float]


class OfficialRow(BaseModel):
    stage: str
    asr: float
    asr_ci: tuple[float, float]
    asr_gain_ci: tuple[float, float]  # paired with the base on the same tasks
    by_intent: dict[str, float]


class OfficialTasks(BaseModel):
    n: int
    by_intent: dict[str, int]
    catalog: str  # how the tasks were made solvable
    rows: list[OfficialRow]


# Entries that appear in report.json only where the config asks for them.
OPTIONAL_ENTRIES = ("precision", "format_control", "leak_inflation", "official_tasks")


class Report(BaseModel):
    model: str
    heldout: Heldout
    rows: list[Row]
    precision: dict[str, Any] | None = None  # the training and serving precision path of this machine
    format_control: FormatControl | None = None
    leak_inflation: LeakInflation | None = None
    official_tasks: OfficialTasks | None = None

    def json_text(self) -> str:
        """report.json: the contract's keys, and the optional entries that apply."""
        payload = self.model_dump(mode="json")
        for key in OPTIONAL_ENTRIES:
            if payload.get(key) is None:
                payload.pop(key, None)
        return json.dumps(payload, indent=2) + "\n"


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


def with_control_gain(row: Row, evaluation: dict[str, Any], control: dict[str, Any]) -> Row:
    gain = paired_bootstrap_gain(control["greedy"], evaluation["greedy"])
    return row.model_copy(update={"asr_gain_control_ci": (gain.low, gain.high)})


def unpaired_difference(a: list[float], b: list[float], resamples: int = 2000, seed: str = "0") -> tuple[float, float]:
    """95% percentile bootstrap interval of mean(a) - mean(b), each side resampled on its own."""
    rng = random.Random(seed)
    diffs = sorted(
        sum(rng.choice(a) for _ in a) / len(a) - sum(rng.choice(b) for _ in b) / len(b) for _ in range(resamples)
    )
    return round(diffs[int(0.025 * (resamples - 1))], 6), round(diffs[int(round(0.975 * (resamples - 1)))], 6)


def leak_inflation(row: str, mates: dict[str, Any], heldout: dict[str, Any]) -> LeakInflation:
    values = [float(mates["greedy"][i]) for i in sorted(mates["greedy"])]
    held = [float(heldout["greedy"][i]) for i in sorted(heldout["greedy"])]
    asr, held_asr = mates["metrics"]["asr"], heldout["metrics"]["asr"]
    return LeakInflation(
        row=row,
        n=len(values),
        asr=asr,
        asr_ci=bootstrap_interval(values),
        heldout_asr=held_asr,
        inflation=round(asr - held_asr, 6),
        inflation_ci=unpaired_difference(values, held),
        by_intent={intent: part["asr"] for intent, part in mates["metrics"]["by_intent"].items()},
    )


def official_row(stage: str, evaluation: dict[str, Any], base: dict[str, Any]) -> OfficialRow:
    values = [float(evaluation["greedy"][i]) for i in sorted(evaluation["greedy"])]
    gain = paired_bootstrap_gain(base["greedy"], evaluation["greedy"])
    return OfficialRow(
        stage=stage,
        asr=evaluation["metrics"]["asr"],
        asr_ci=bootstrap_interval(values),
        asr_gain_ci=(gain.low, gain.high),
        by_intent={intent: part["asr"] for intent, part in evaluation["metrics"]["by_intent"].items()},
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
        "| stage | examples | tokens | train s | ASR | ASR 95% | gain 95% | gain vs format control 95% | pass@1 "
        "| pass@k |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report.rows:
        k = f"k={row.k}: {_pct(row.pass_at_k)}" if row.k else "-"
        control = _gain(row.asr_gain_control_ci) if row.asr_gain_control_ci is not None else "-"
        lines.append(
            f"| {row.stage} | {row.train_examples} | {row.train_tokens} | {row.train_seconds:.0f} | {_pct(row.asr)} | "
            f"[{_pct(row.asr_ci[0])}, {_pct(row.asr_ci[1])}] | {_gain(row.asr_gain_ci)} | {control} "
            f"| {_pct(row.pass_at_1)} | {k} |"
        )
    intents = sorted({i for row in report.rows for i in row.by_intent})
    lines += ["", "| stage | " + " | ".join(intents) + " |", "|---|" + "---:|" * len(intents)]
    for row in report.rows:
        lines.append(f"| {row.stage} | " + " | ".join(_pct(row.by_intent.get(i)) for i in intents) + " |")
    budget = extra.get("budget")
    if budget:
        lines += [
            "",
            f"Every row generates at most {budget['turn']} tokens a turn and {budget['episode']} an episode (the "
            "train split's longest turn and longest episode, plus 16, unless the config sets them); an episode "
            "that spent its budget is refused its next call and scored as it stands."
            + (
                f" A turn makes at most {budget['calls']} tool call{'' if budget['calls'] == 1 else 's'} (the most one "
                "train turn makes, unless the config sets it): the completion ends right after the last."
                if budget.get("calls")
                else ""
            ),
        ]
    lines += [
        "",
        "| row | episodes | tokens per episode | first turns calling a tool | of which executed | spent the episode budget |",
    ]
    lines.append("|---|---:|---:|---:|---:|---:|")
    for stage, stats in extra["episodes"].items():
        # Results cached before the episode budget existed lack its count.
        spent = stats.get("episode_budget_spent")
        lines.append(
            f"| {stage} | {stats['episodes']} | {stats['tokens_per_episode']:.0f} | "
            f"{stats['first_turn_tool_calls']:.0%} | {stats['first_turn_executed']:.0%} | "
            f"{'-' if spent is None else spent} |"
        )
    lines += _extra_entries(report)
    if extra.get("skipped"):
        lines += ["", "Skipped (budget spent): " + ", ".join(extra["skipped"]) + "."]
    if extra.get("best"):
        lines += ["", f"pass@k rows: the base and the row with the best greedy ASR ({extra['best']})."]
    lines += ["", "| step | seconds | cached |", "|---|---:|---|"]
    for step, (seconds, cached) in extra["steps"].items():
        lines.append(f"| {step} | {seconds:.0f} | {'yes' if cached else ''} |")
    lines += ["", "![ASR per stage](report.png)", ""]
    return "\n".join(lines)


def _gain(interval: tuple[float, float]) -> str:
    return f"[{interval[0]:+.1%}, {interval[1]:+.1%}]"


def _extra_entries(report: Report) -> list[str]:
    lines: list[str] = []
    control = report.format_control
    if control is not None:
        lines += [
            "",
            f"Format control `{control.row}`: SFT on {control.candidates} failed or judge-rejected trajectories of "
            f"the same arena run (format gate passed, no success), {control.examples} rows and {control.tokens} "
            f"tokens an epoch against `{control.controls}`'s {control.target}.",
        ]
    leak = report.leak_inflation
    if leak is not None:
        lines += [
            "",
            f"Leak inflation: `{leak.row}` on {leak.n} leak-cluster mates of its own training problems scores "
            f"{_pct(leak.asr)} [{_pct(leak.asr_ci[0])}, {_pct(leak.asr_ci[1])}] against {_pct(leak.heldout_asr)} on "
            f"the guarded held-out: a naive split would add {leak.inflation:+.1%} {_gain(leak.inflation_ci)}.",
        ]
    official = report.official_tasks
    if official is not None:
        lines += [
            "",
            f"Official ShoppingBench test tasks ({official.n}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(official.by_intent.items()))
            + f"; {official.catalog}):",
            "",
            "| row | ASR | 95% | gain 95% (paired) | by intent |",
            "|---|---:|---:|---:|---|",
        ]
        for row in official.rows:
            intents = ", ".join(f"{k} {_pct(v)}" for k, v in sorted(row.by_intent.items()))
            lines.append(
                f"| {row.stage} | {_pct(row.asr)} | [{_pct(row.asr_ci[0])}, {_pct(row.asr_ci[1])}] | "
                f"{_gain(row.asr_gain_ci)} | {intents} |"
            )
    if report.precision:
        lines += ["", "Precision path: " + "; ".join(f"{k}: {v}" for k, v in report.precision.items()) + "."]
    return lines


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
