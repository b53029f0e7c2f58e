"""`arena experiment run`: the paper's experiment as one resumable command (docs/experiment.md)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import err, fail, out

app = typer.Typer(help="The student experiment: arena corpus -> post-training -> held-out ASR.", no_args_is_help=True)


@app.command("run")
def run(
    config: Annotated[Path, typer.Option("--config", help="Experiment YAML (experiments/*.yaml).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output directory; rerun with the same one to resume.")],
) -> None:
    """Run (or resume) every step; write OUT/report.json, OUT/report.md and OUT/report.png.

    Exit 1 when the leak check finds a held-out problem clustered with a trained-on one."""
    try:
        from distill.experiment.config import load_config
        from distill.experiment.pipeline import ExperimentError, LeakFound, run_experiment
        from distill.student import StudentError
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill,student]'")
    from arena.commands.student import materialise_with_bar
    from arena.config_file import ConfigError
    from arena.runner.sandbox import SandboxUnavailable

    try:
        loaded = load_config(config)
    except ConfigError as exc:
        fail(str(exc))

    def log(line: str) -> None:
        err.print(line, markup=False, highlight=False)

    try:
        # The trainers print their log lines to stdout (transformers' PrinterCallback, tqdm.write):
        # stdout carries only the JSON report, so the command can be piped.
        with contextlib.redirect_stdout(sys.stderr):
            report = run_experiment(loaded, out_dir, log=log, materialise=materialise_with_bar)
    except LeakFound as exc:
        err.print(f"[bold red]{exc}[/] (report: {out_dir / 'report.md'})")
        raise typer.Exit(1) from None
    except (ExperimentError, StudentError, SandboxUnavailable) as exc:
        fail(str(exc))
    err.print((out_dir / "report.md").read_text(), markup=False, highlight=False)
    out.print_json(report.json_text())  # what report.json holds
