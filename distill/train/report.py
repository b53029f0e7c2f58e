"""What a stage reports: data size, loss curve, time, tokens/s, peak memory; and the recipe's run report."""

from __future__ import annotations

import resource
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, Field


class StageReport(BaseModel):
    stage: str
    model_in: str
    model_out: str
    examples: int
    steps: int
    seconds: float
    tokens: int
    tokens_per_s: float
    peak_memory_mb: float
    peak_memory_kind: str  # "cuda" or "cpu-rss"
    precision: str = "fp32"  # "bf16-mixed", "fp16-mixed" or "fp32": what the trainer computed in
    # dtype, autocast, deterministic algorithms, threads, torch, CPU: what fixes the numbers on a machine
    precision_path: dict[str, str | int | bool] = Field(default_factory=dict)
    losses: list[tuple[int, float]] = Field(default_factory=list)  # (step, loss)
    extra: dict[str, float | int | str] = Field(default_factory=dict)
    skipped: str | None = None  # why the stage trained nothing (its checkpoint is its input)

    @classmethod
    def skipped_stage(cls, stage: str, model: str, reason: str) -> StageReport:
        return cls(stage=stage, model_in=model, model_out=model, examples=0, steps=0, seconds=0.0, tokens=0,
                   tokens_per_s=0.0, peak_memory_mb=0.0, peak_memory_kind="-", skipped=reason)  # fmt: skip

    @property
    def first_loss(self) -> float | None:
        return self.losses[0][1] if self.losses else None

    @property
    def last_loss(self) -> float | None:
        return self.losses[-1][1] if self.losses else None


def peak_memory() -> tuple[float, str]:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20, "cuda"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / (2**20 if sys.platform == "darwin" else 2**10), "cpu-rss"


@contextmanager
def stopwatch():
    """Yields a one-item list that holds the elapsed seconds once the block ends."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    elapsed = [0.0]
    try:
        yield elapsed
    finally:
        elapsed[0] = time.perf_counter() - started


def trainer_precision(args) -> str:
    if getattr(args, "bf16", False):
        return "bf16-mixed"
    return "fp16-mixed" if getattr(args, "fp16", False) else "fp32"


def stage_report(
    stage: str, config_model: str, final: Path, trainer, examples: int, seconds: float, **extra
) -> StageReport:
    state = trainer.state
    losses = [(int(e["step"]), float(e["loss"])) for e in state.log_history if "loss" in e and "step" in e]
    tokens = int(getattr(state, "num_input_tokens_seen", 0) or 0)
    memory, kind = peak_memory()
    return StageReport(
        stage=stage,
        model_in=config_model,
        model_out=str(final),
        examples=examples,
        steps=int(state.global_step),
        seconds=round(seconds, 3),
        tokens=tokens,
        tokens_per_s=round(tokens / seconds, 2) if seconds > 0 else 0.0,
        peak_memory_mb=round(memory, 1),
        peak_memory_kind=kind,
        precision=trainer_precision(trainer.args),
        precision_path=getattr(trainer, "precision_path", None) or {},
        losses=losses,
        extra=extra,
    )


def plot_losses(reports: list[StageReport], out: Path) -> Path | None:
    """One PNG with every stage's loss curve on a shared step axis (None if matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axis = plt.subplots(figsize=(8, 4.5))
    offset = 0
    for report in reports:
        if report.losses:
            axis.plot(
                [offset + s for s, _ in report.losses], [v for _, v in report.losses], marker=".", label=report.stage
            )
        offset += report.steps
    axis.set_xlabel("optimizer step (stages end to end)")
    axis.set_ylabel("training loss")
    axis.set_title("post-training run")
    axis.legend()
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out


def render_run_report(reports: list[StageReport], plot: Path | None) -> str:
    lines = [
        "# Post-training run",
        "",
        "| stage | examples | steps | first loss | last loss | time (s) | tokens/s | peak memory (MB) | checkpoint |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in reports:
        if r.skipped:
            lines.append(f"| {r.stage} | 0 | 0 | - | - | - | - | - | {r.skipped} |")
            continue
        first = "-" if r.first_loss is None else f"{r.first_loss:.4f}"
        last = "-" if r.last_loss is None else f"{r.last_loss:.4f}"
        lines.append(
            f"| {r.stage} | {r.examples} | {r.steps} | {first} | {last} | {r.seconds:.1f} | {r.tokens_per_s:.1f} "
            f"| {r.peak_memory_mb:.0f} ({r.peak_memory_kind}) | `{r.model_out}` |"
        )
    extras = [f"- {r.stage}: " + ", ".join(f"{k}={v}" for k, v in r.extra.items()) for r in reports if r.extra]
    if extras:
        lines += ["", *extras]
    if plot is not None:
        lines += ["", f"![loss curves]({plot.name})"]
    return "\n".join(lines) + "\n"
