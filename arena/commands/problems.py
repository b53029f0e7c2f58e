"""`arena problems`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from arena.commands.common import fail, show

app = typer.Typer(help="Shopping problems: show, generate, cluster.", no_args_is_help=True)


@app.command("show")
def problems_show(
    files: Annotated[list[Path], typer.Argument(help="Task files (official or generated JSONL).")],
) -> None:
    """Counts by intent and difficulty."""
    from arena.problems.official import ProblemFileError, load_problems

    try:
        problems = load_problems(*files)
    except (ProblemFileError, OSError) as exc:
        fail(str(exc))
    counts = Counter((p.intent.value, p.difficulty.value) for p in problems)
    table = Table(title=f"{len(problems)} problems")
    table.add_column("intent")
    for difficulty in ("easy", "medium", "hard"):
        table.add_column(difficulty, justify="right")
    table.add_column("total", justify="right")
    for intent in ("product", "shop", "voucher", "knowledge"):
        row = [counts[(intent, d)] for d in ("easy", "medium", "hard")]
        table.add_row(intent, *map(str, row), str(sum(row)))
    show(table)


@app.command("guard-model")
def problems_guard_model() -> None:
    """Build the leak-cluster guard's meaning table now (once per machine, about 3 minutes on 2 cores) and
    print where it is cached; later clusterings load it in seconds."""
    from arena.problems import lexicon
    from arena.problems.meaning import MeaningModelUnavailable, static_embedder, table_path

    try:
        static_embedder()
        lexicon.available()  # the guard's other set-up need: WordNet's database (a Debian package)
        path = table_path()
    except MeaningModelUnavailable as exc:
        fail(str(exc))
    typer.echo(str(path))  # data on stdout, one line a script can read


# `generate` and `cluster` live in their own modules; registered here so the group is whole.
from arena.commands import problem_cluster, problem_generate  # noqa: E402

app.command("generate")(problem_generate.generate)
app.command("cluster")(problem_cluster.cluster)
