"""`arena score` and the result table other commands reuse."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import JustifyMethod
from rich.table import Table

from arena.commands.common import ConfigOption, err, fail, settings_or_fail, show


def score(
    catalog: Annotated[Path, typer.Option("--catalog", help="Index directory or documents.jsonl[.gz].")],
    problems: Annotated[list[Path], typer.Option("--problems", help="Task file(s); repeat the flag for several.")],
    answers: Annotated[Path, typer.Option("--answers", help='JSONL rows {"query", "product_ids"}.')],
    mode: Annotated[str | None, typer.Option("--mode", help="official | strict")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print exactly one JSON object on stdout.")] = False,
    config: ConfigOption = None,
) -> None:
    """Score an answer file against task files (ShoppingBench's outcome rules)."""
    from arena.problems.official import ProblemFileError, load_problems
    from arena.scoring.answer_files import AnswerFileError, load_answers, score_answers
    from arena.scoring.outcome import ScoreMode
    from arena.scoring.similarity import similarity_from_settings
    from arena.shop.catalog import open_catalog
    from arena.shop.index import CatalogIndexError

    settings = settings_or_fail(config)
    try:
        chosen = ScoreMode(mode or settings.scoring.mode)
    except ValueError:
        fail(f"--mode must be official or strict, not {mode!r}")
    try:
        task_list = load_problems(*problems)
        answer_map = load_answers(answers)
        lookup = open_catalog(catalog)
        similarity = similarity_from_settings(settings.scoring)
    except (ProblemFileError, AnswerFileError, CatalogIndexError, OSError, RuntimeError, ImportError) as exc:
        fail(str(exc))
    report = score_answers(task_list, answer_map, lookup, mode=chosen, similarity=similarity)
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        return
    print_score_table(report, title=f"{answers.name} ({chosen.value} mode)")


def print_score_table(report, title: str) -> None:
    table = Table(title=title)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("intent", "left"),
        ("n", "right"),
        ("solved", "right"),
        ("ASR", "right"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify)
    solved = Counter(p.intent for p in report.problems if p.success)
    for intent, summary in report.by_intent.items():
        table.add_row(intent, str(summary.n), str(solved[intent]), f"{summary.asr:.1%}")
    table.add_row("[bold]all[/]", str(report.n), str(sum(solved.values())), f"[bold]{report.asr:.1%}[/]")
    show(table)
    if report.unmatched:
        err.print(f"[yellow]{len(report.unmatched)} answer(s) matched no problem[/]")
