"""The ``arena`` command: every user action is a subcommand.

Machine-readable output (``--json``) goes to stdout alone; logs, progress
bars and tables for people go to stderr or are printed only without --json.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from arena.config import ConfigError, describe, load_settings

app = typer.Typer(help="A ShoppingBench agent arena that manufactures judged training trajectories.", no_args_is_help=True)
config_app = typer.Typer(help="Settings.", no_args_is_help=True)
catalog_app = typer.Typer(help="Build and query product catalogs.", no_args_is_help=True)
problems_app = typer.Typer(help="Shopping problems.", no_args_is_help=True)
app.add_typer(config_app, name="config")
app.add_typer(catalog_app, name="catalog")
app.add_typer(problems_app, name="problems")

out = Console()
err = Console(stderr=True, soft_wrap=True)

ConfigOption = Annotated[Path | None, typer.Option("--config", help="TOML settings file (else ARENA_CONFIG).")]


def _settings(config: Path | None):
    try:
        return load_settings(config)
    except ConfigError as exc:
        _fail(str(exc))


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


@config_app.command("show")
def config_show(config: ConfigOption = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Print the effective settings and where each can be set."""
    settings = _settings(config)
    if as_json:
        print(settings.model_dump_json(indent=2))
        return
    table = Table(title="arena settings (env ARENA_<NAME>, nested with __; or TOML)")
    for column in ("setting", "value", "meaning"):
        table.add_column(column)
    for name, value, meaning in describe(settings):
        table.add_row(name, value, meaning)
    out.print(table)


@catalog_app.command("build")
def catalog_build(
    out_dir: Annotated[Path, typer.Option("--out", help="Index directory to create.")],
    synthetic: Annotated[int | None, typer.Option("--synthetic", help="Generate N synthetic products.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the synthetic catalog.")] = 0,
    from_file: Annotated[Path | None, typer.Option("--from", help="Official documents.jsonl[.gz].")] = None,
    strict: Annotated[bool | None, typer.Option("--strict/--skip-bad-rows", help="Fail on the first bad row, or skip and report bad rows.")] = None,
    config: ConfigOption = None,
) -> None:
    """Build a catalog index from a synthetic generator or the official documents file."""
    from arena.shop.building import CatalogBuildError, build_catalog

    settings = _settings(config)
    if (synthetic is None) == (from_file is None):
        _fail("give exactly one of --synthetic N or --from documents.jsonl[.gz]")
    try:
        report = build_catalog(
            out_dir,
            synthetic=synthetic,
            seed=seed,
            documents=from_file,
            strict=settings.catalog.strict_load if strict is None else strict,
            settings=settings.catalog,
            console=err,
        )
    except CatalogBuildError as exc:
        _fail(str(exc))
    err.print(f"indexed {report.products} products into {out_dir} in {report.seconds:.1f}s")
    for line in report.load_errors:
        err.print(f"[yellow]skipped[/] {line}")
    if report.skipped:
        err.print(f"[yellow]{report.skipped} bad row(s) skipped[/] (first {len(report.load_errors)} listed above)")


@catalog_app.command("search")
def catalog_search(
    catalog: Annotated[Path, typer.Argument(help="Catalog index directory.")],
    q: Annotated[str, typer.Argument(help="Query text.")],
    page: int = 1,
    shop_id: str | None = None,
    price: str | None = None,
    sort: str | None = None,
    service: str | None = None,
) -> None:
    """Run find_product against a catalog and print the JSON result."""
    from arena.shop.index import CatalogIndex, CatalogIndexError
    from arena.shop.tools import ShopEnvironment

    try:
        env = ShopEnvironment(CatalogIndex(catalog))
    except CatalogIndexError as exc:
        _fail(str(exc))
    args = {"q": q, "page": page, "shop_id": shop_id, "price": price, "sort": sort, "service": service}
    result = env.call("find_product", {k: v for k, v in args.items() if v is not None})
    print(result.model_dump_json(indent=2))


@problems_app.command("show")
def problems_show(files: Annotated[list[Path], typer.Argument(help="Task files (official or generated JSONL).")]) -> None:
    """Counts by intent and difficulty."""
    from arena.problems.official import ProblemFileError, load_problems

    try:
        problems = load_problems(*files)
    except (ProblemFileError, OSError) as exc:
        _fail(str(exc))
    counts = Counter((p.intent.value, p.difficulty.value) for p in problems)
    table = Table(title=f"{len(problems)} problems")
    table.add_column("intent")
    for difficulty in ("easy", "medium", "hard"):
        table.add_column(difficulty, justify="right")
    table.add_column("total", justify="right")
    for intent in ("product", "shop", "voucher", "knowledge"):
        row = [counts[(intent, d)] for d in ("easy", "medium", "hard")]
        table.add_row(intent, *map(str, row), str(sum(row)))
    out.print(table)


@app.command("score")
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
    from arena.scoring.answers import AnswerFileError, load_answers, score_answers
    from arena.scoring.outcome import ScoreMode
    from arena.scoring.similarity import similarity_from_settings
    from arena.shop.catalog import open_catalog
    from arena.shop.index import CatalogIndexError

    settings = _settings(config)
    try:
        chosen = ScoreMode(mode or settings.scoring.mode)
    except ValueError:
        _fail(f"--mode must be official or strict, not {mode!r}")
    try:
        task_list = load_problems(*problems)
        answer_map = load_answers(answers)
        lookup = open_catalog(catalog)
        similarity = similarity_from_settings(settings.scoring)
    except (ProblemFileError, AnswerFileError, CatalogIndexError, OSError, RuntimeError, ImportError) as exc:
        _fail(str(exc))
    report = score_answers(task_list, answer_map, lookup, mode=chosen, similarity=similarity)
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        return
    print_score_table(report, title=f"{answers.name} ({chosen.value} mode)")


def print_score_table(report, title: str) -> None:
    table = Table(title=title)
    for column, justify in (("intent", "left"), ("n", "right"), ("solved", "right"), ("ASR", "right")):
        table.add_column(column, justify=justify)
    solved = Counter(p.intent for p in report.problems if p.success)
    for intent, summary in report.by_intent.items():
        table.add_row(intent, str(summary.n), str(solved[intent]), f"{summary.asr:.1%}")
    table.add_row("[bold]all[/]", str(report.n), str(sum(solved.values())), f"[bold]{report.asr:.1%}[/]")
    out.print(table)
    if report.unmatched:
        err.print(f"[yellow]{len(report.unmatched)} answer(s) matched no problem[/]")


@app.command("demo")
def demo(
    out_dir: Annotated[Path | None, typer.Option("--out", help="Where to put the demo's files (default: data_dir).")] = None,
    products: Annotated[int, typer.Option("--products", help="Synthetic catalog size.")] = 20_000,
    seed: int = 7,
    config: ConfigOption = None,
) -> None:
    """The whole local job, start to end (see README)."""
    from arena.demo import run_demo

    settings = _settings(config)
    report = run_demo(settings, out_dir or settings.data_dir, products=products, seed=seed, console=err)
    print_score_table(report, title="Search baseline on the 900 official tasks (official mode)")
    out.print(json.dumps({"asr": report.asr, "n": report.n}))


def main() -> None:  # pragma: no cover - console entry
    app()
