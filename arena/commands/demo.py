"""`arena demo`: the whole local job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import ConfigOption, err, out, settings_or_fail
from arena.commands.score import print_score_table


def demo(
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Where to put the demo's files (default: data_dir).")
    ] = None,
    products: Annotated[int, typer.Option("--products", help="Synthetic catalog size.")] = 20_000,
    seed: int = 7,
    config: ConfigOption = None,
) -> None:
    """The whole local job, start to end (see README)."""
    from arena.demo import run_demo

    settings = settings_or_fail(config)
    report = run_demo(settings, out_dir or settings.data_dir, products=products, seed=seed, console=err)
    print_score_table(report, title="Search baseline on the 900 official tasks (official mode)")
    out.print(json.dumps({"asr": report.asr, "n": report.n}))
