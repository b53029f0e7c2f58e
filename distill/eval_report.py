"""Evaluation tables: one run's report.md, and several runs side by side with bootstrap intervals.

The intervals resample *problems* (not episodes) with replacement: problems
differ far more than the runs of one problem, so the problem is the unit of
uncertainty. Runs being compared are resampled with the same draws (a paired
bootstrap) over the problems they share, so two checkpoints on one partition
are compared on equal footing. Each run after the first also gets its greedy
success *difference* from the first run, problem by problem, with the race's
one-sided paired test (``arena.scoring.paired``: the bootstrap bound and the
sign test on the problems where the two differ): "better" or "worse" only when
the evidence says so at the confidence, else "undecided".
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from arena.scoring.metrics import pass_at_k
from arena.scoring.paired import PairedComparison, confidently_better, confidently_worse
from arena.scoring.paired import compare as paired_compare
from distill.eval_results import EvalMetrics, ProblemResult


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def render_report(metrics: EvalMetrics) -> str:
    """report.md: the headline table, then per intent."""
    ks = sorted(metrics.pass_at_k)
    lines = [
        f"# Evaluation: {metrics.label}",
        "",
        f"model `{metrics.model}`, {metrics.n_problems} problems, {metrics.mode} scoring; ASR from one greedy run "
        f"per problem, pass@k / pass^k from {metrics.samples} run(s) per problem at temperature {metrics.temperature}.",
        "",
        "| metric | value |",
        "|---|---:|",
        f"| ASR (greedy) | {_pct(metrics.asr)} |",
        f"| pass@1 | {_pct(metrics.pass_at_1)} |",
    ]
    lines += [f"| pass@{k} | {_pct(metrics.pass_at_k[k])} |" for k in ks if k != 1]
    lines += [f"| pass^{k} | {_pct(metrics.pass_hat_k[k])} |" for k in sorted(metrics.pass_hat_k) if k != 1]
    lines += ["", "| intent | problems | ASR | pass@1 |", "|---|---:|---:|---:|"]
    for intent, part in metrics.by_intent.items():
        lines.append(f"| {intent} | {part.n} | {_pct(part.asr)} | {_pct(part.pass_at_1)} |")
    if metrics.terminations:
        ended = ", ".join(f"{k}: {v}" for k, v in sorted(metrics.terminations.items()))
        lines += ["", f"Episodes ended: {ended}."]
    return "\n".join(lines) + "\n"


class Interval(BaseModel):
    value: float
    low: float
    high: float


class RunComparison(BaseModel):
    label: str
    n_problems: int
    asr: Interval
    pass_at_1: Interval | None = None
    pass_at_k: Interval | None = None  # at the k every compared run has samples for
    k: int | None = None
    vs_first: PairedComparison | None = None  # greedy success minus the first run's, paired by problem
    verdict: str | None = None  # "better", "worse" or "undecided" than the first run, at the confidence


def _greedy(results: Sequence[ProblemResult]) -> float:
    return sum(r.greedy for r in results) / len(results)


def _pass_at(k: int) -> Callable[[Sequence[ProblemResult]], float]:
    def metric(results: Sequence[ProblemResult]) -> float:
        return sum(pass_at_k(len(r.successes), sum(r.successes), k) for r in results) / len(results)

    return metric


def compare_runs(
    runs: Sequence[tuple[EvalMetrics, list[ProblemResult]]],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[RunComparison]:
    """Point estimates with percentile bootstrap intervals over the problems all runs share."""
    if not runs:
        raise ValueError("nothing to compare")
    shared = set.intersection(*({r.id for r in results} for _, results in runs))
    if not shared:
        raise ValueError("the runs share no problem: they were not evaluated on the same partition")
    order = sorted(shared)
    rng = random.Random(seed)
    draws = [[rng.randrange(len(order)) for _ in order] for _ in range(resamples)]
    tail = (1 - confidence) / 2

    def interval(results: list[ProblemResult], metric: Callable[[Sequence[ProblemResult]], float]) -> Interval:
        stats = sorted(metric([results[i] for i in draw]) for draw in draws)
        low = stats[int(tail * (len(stats) - 1))]
        high = stats[int(round((1 - tail) * (len(stats) - 1)))]
        return Interval(value=metric(results), low=low, high=high)

    aligned_runs = [(metrics, [{r.id: r for r in results}[i] for i in order]) for metrics, results in runs]
    samples = [min((len(r.successes) for r in aligned), default=0) for _, aligned in aligned_runs]
    # One k for every run (the fewest samples any sampled run has): pass@8 beside pass@2 compares nothing.
    k = min((n for n in samples if n >= 1), default=0)
    table: list[RunComparison] = []
    first: list[float] = []
    for (metrics, aligned), n in zip(aligned_runs, samples, strict=True):
        greedy = [float(r.greedy) for r in aligned]
        row = RunComparison(label=metrics.label, n_problems=len(aligned), asr=interval(aligned, _greedy))
        if n >= 1:
            row.pass_at_1 = interval(aligned, _pass_at(1))
            row.k = k
            row.pass_at_k = interval(aligned, _pass_at(k))
        if table:
            row.vs_first = paired_compare(
                greedy, first, seed=f"eval-{seed}", confidence=confidence, resamples=resamples
            )
            row.verdict = (
                "better"
                if confidently_better(row.vs_first)
                else "worse"
                if confidently_worse(row.vs_first)
                else "undecided"
            )
        else:
            first = greedy
        table.append(row)
    return table


def versus(row: RunComparison, emphasis: str = "**") -> str:
    """The run's greedy success against the first run's: paired difference, interval, counts, verdict."""
    if row.vs_first is None:
        return "-"
    d = row.vs_first
    return (
        f"{d.mean_difference:+.1%} [{d.lower:+.1%}, {d.upper:+.1%}], {d.a_better} better / {d.b_better} "
        f"worse: {emphasis}{row.verdict}{emphasis}"
    )


def render_comparison(rows: Sequence[RunComparison], confidence: float = 0.95) -> str:
    def cell(iv: Interval | None) -> str:
        return "-" if iv is None else f"{iv.value:.1%} [{iv.low:.1%}, {iv.high:.1%}]"

    k = next((row.k for row in rows if row.k), None)
    lines = [
        f"Bootstrap {confidence:.0%} intervals over the problems all runs share (paired resampling).",
        "",
        f"| run | problems | ASR | pass@1 | pass@{k or 'k'} | ASR vs the first run (paired, one-sided) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.label} | {row.n_problems} | {cell(row.asr)} | {cell(row.pass_at_1)} | {cell(row.pass_at_k)} "
            f"| {versus(row)} |"
        )
    return "\n".join(lines) + "\n"
