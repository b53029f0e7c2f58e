"""`recipe`: the configured stages in order, each from the previous stage's ``final`` checkpoint,
then a run report (table, loss-curve PNG, JSON).

Each finished stage leaves ``stage.json`` (its report) beside its ``final``
checkpoint. ``--resume`` skips a stage that left both and started from the
model the recipe would give it now; the first stage that did not finish resumes
from its newest checkpoint, and every later stage trains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from distill.train.config import StageConfig, load_stage_config, stage_names
from distill.train.data import StageSkipped
from distill.train.report import StageReport, plot_losses, render_run_report
from distill.train.stages import run_stage


class RecipeResult(BaseModel):
    output: str
    final_model: str
    report: str
    stages: list[StageReport]


STAGE_REPORT = "stage.json"  # written once the stage saved its final checkpoint


def finished_stage(config: StageConfig) -> StageReport | None:
    """The report of this stage's earlier finished run, when it trained from the same model; else None."""
    try:
        report = StageReport.model_validate_json((config.output / STAGE_REPORT).read_text())
    except (OSError, ValueError):
        return None
    if report.skipped or report.model_in != config.model or not Path(report.model_out).is_dir():
        return None  # skipped (cheap to decide again), its input changed, or its checkpoint is gone: run it again
    return report


def run_recipe(path: Path, overrides: dict[str, Any] | None = None) -> RecipeResult:
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    names = stage_names(path)
    base = load_stage_config(path, names[0], overrides)  # validates the shared keys before any training
    root = base.output
    model = base.model
    reports: list[StageReport] = []
    for name in names:
        stage_overrides = overrides | {"model": model, "output": root / name}
        config = load_stage_config(path, name, stage_overrides)
        report = finished_stage(config) if config.resume else None
        if report is None:
            try:
                report = run_stage(config)
            except StageSkipped as skipped:  # nothing to learn from: the next stage starts from this stage's input
                report = StageReport.skipped_stage(name, model, str(skipped))
            config.output.mkdir(parents=True, exist_ok=True)
            (config.output / STAGE_REPORT).write_text(report.model_dump_json(indent=2))
        reports.append(report)
        model = report.model_out
    plot = plot_losses(reports, root / "loss.png")
    report_path = root / "report.md"
    report_path.write_text(render_run_report(reports, plot))
    result = RecipeResult(output=str(root), final_model=model, report=str(report_path), stages=reports)
    (root / "report.json").write_text(result.model_dump_json(indent=2))
    return result
