"""`arena catalog`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import ConfigOption, err, fail, settings_or_fail

app = typer.Typer(help="Build and query product catalogs.", no_args_is_help=True)


@app.command("build")
def catalog_build(
    out_dir: Annotated[Path, typer.Option("--out", help="Index directory to create.")],
    synthetic: Annotated[int | None, typer.Option("--synthetic", help="Generate N synthetic products.")] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the synthetic catalog, or of a task pack's filler and background.")
    ] = 0,
    from_file: Annotated[Path | None, typer.Option("--from", help="Official documents.jsonl[.gz].")] = None,
    from_tasks: Annotated[
        list[Path] | None,
        typer.Option(
            "--from-tasks",
            help="Tasks file in the official row format (repeatable): build a task-pack catalog that makes "
            "them solvable offline (see docs/taskpack.md).",
        ),
    ] = None,
    background: Annotated[
        int | None, typer.Option("--background", help="Task pack: synthetic background products to add (default 0).")
    ] = None,
    distractors: Annotated[
        int | None, typer.Option("--distractors", help="Task pack: near-miss distractors per gold product (default 3).")
    ] = None,
    strict: Annotated[
        bool | None,
        typer.Option(
            "--strict/--skip-bad-rows",
            help="Fail on the first bad row (or conflicting task), or skip and report bad rows (and conflicts).",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Build a catalog index from a synthetic generator, the official documents file, or task files."""
    from arena.taskpack.build import CatalogBuildError, build_catalog

    settings = settings_or_fail(config)
    if sum(x is not None for x in (synthetic, from_file, from_tasks)) != 1:
        fail("give exactly one of --synthetic N, --from documents.jsonl[.gz] or --from-tasks FILE")
    if from_tasks is None and (background is not None or distractors is not None):
        fail("--background and --distractors only apply to a task pack (--from-tasks FILE)")
    if (background or 0) < 0 or (distractors or 0) < 0:
        fail("--background and --distractors must be >= 0")
    try:
        report = build_catalog(
            out_dir,
            synthetic=synthetic,
            seed=seed,
            documents=from_file,
            strict=settings.catalog.strict_load if strict is None else strict,
            settings=settings.catalog,
            console=err,
            tasks=from_tasks,
            background=background or 0,
            distractors=distractors,
        )
    except CatalogBuildError as exc:
        fail(str(exc))
    err.print(f"indexed {report.products} products into {out_dir} in {report.seconds:.1f}s")
    for line in report.load_errors:
        err.print(f"[yellow]skipped[/] {line}")
    if report.skipped:
        err.print(f"[yellow]{report.skipped} bad row(s) skipped[/] (first {len(report.load_errors)} listed above)")
    if report.taskpack is not None:
        pack = report.taskpack
        err.print(
            f"task pack: {pack.tasks} tasks, {pack.gold} gold, {pack.distractors} distractors "
            f"({pack.distractors_skipped} skipped), {pack.background} background, "
            f"{pack.knowledge_documents} knowledge documents",
            highlight=False,
        )
        for line in pack.conflicts:
            err.print(f"[yellow]conflict[/] {line}", highlight=False)
        if pack.conflicts:
            err.print(f"[yellow]{len(pack.conflicts)} task(s) not solvable on this catalog[/] (listed above)")


@app.command("search")
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
        fail(str(exc))
    args = {"q": q, "page": page, "shop_id": shop_id, "price": price, "sort": sort, "service": service}
    result = env.call("find_product", {k: v for k, v in args.items() if v is not None})
    print(result.model_dump_json(indent=2))
