"""`arena demo`: the whole local job."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import ConfigOption, err, out, settings_or_fail


def demo(
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Where the demo's files go (default: data_dir).")
    ] = None,
    products: Annotated[int, typer.Option("--products", help="Synthetic catalog size.")] = 3000,
    problems: Annotated[int, typer.Option("--problems", help="Generated problems in the suite.")] = 96,
    seed: int = 7,
    config: ConfigOption = None,
) -> None:
    """A whole local race: catalog, suite, signed submissions, one cycle in sandboxes, leaderboard, corpus."""
    from arena.commands.demo_steps import DemoPlan, print_result, run_demo

    settings = settings_or_fail(config)
    plan = DemoPlan(products=products, problems=problems, seed=seed)
    result = run_demo(settings, out_dir or settings.data_dir, plan, console=err)
    print_result(result, console=out)
    if result.halt is not None:
        raise typer.Exit(3)  # the cycle decided nothing; print_result said why and what to fix
