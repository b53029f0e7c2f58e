"""`arena problems generate`: solvable problems from a catalog index, the report on stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.commands.common import ConfigOption, err, fail, settings_or_fail, show


def generate(
    out_file: Annotated[Path, typer.Option("--out", help="JSONL file to write (official row shape).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Source problems to generate (variants come on top).")],
    catalog: Annotated[
        Path | None, typer.Option("--catalog", help="Catalog index directory (default: catalog.path setting).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Same seed + same catalog = byte-identical file.")] = 0,
    intents: Annotated[
        str, typer.Option("--intents", help="Comma list of product, shop, voucher, knowledge (web).")
    ] = "product,shop,voucher,knowledge",
    variants: Annotated[int, typer.Option("--variants", min=0, max=8, help="Variants per problem.")] = 0,
    variant_kinds: Annotated[
        str,
        typer.Option(
            "--variant-kinds",
            help="Comma list of variant kinds taken in turn (docs/generator.md), or all, or hard "
            "(deep_paraphrase, split_sentences, shop_items, riddle_reworded).",
        ),
    ] = "all",
    knowledge_out: Annotated[
        Path | None,
        typer.Option("--knowledge-out", help="Empty directory for the knowledge corpus and its web_search index."),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Processes checking candidates.")] = 1,
    rewrite_base_url: Annotated[
        str | None, typer.Option("--rewrite-base-url", help="OpenAI-compatible endpoint that rewrites queries.")
    ] = None,
    rewrite_model: Annotated[str | None, typer.Option("--rewrite-model", help="Model for the rewriter.")] = None,
    rewrite_api_key: Annotated[
        str | None, typer.Option("--rewrite-api-key", envvar="ARENA_REWRITE_API_KEY", help="Rewriter API key.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Generate solvable problems of every intent from a catalog index."""
    from arena.generator.generate import GenerationError, GeneratorConfig, write_knowledge, write_problems
    from arena.generator.generate import generate as run_generator
    from arena.generator.rewrite_client import RewriteError
    from arena.problems.model import Intent
    from arena.problems.variants import parse_kinds
    from arena.shop.index import CatalogIndex, CatalogIndexError

    settings = settings_or_fail(config)
    wanted = _parse_intents(intents)
    try:
        kinds = parse_kinds(variant_kinds)
    except ValueError as exc:
        fail(f"--variant-kinds: {exc}")
    if Intent.knowledge in wanted and knowledge_out is None:
        err.print("[yellow]knowledge skipped:[/] give --knowledge-out DIR for the web_search corpus its riddles need")
        wanted.remove(Intent.knowledge)
    if not wanted:
        fail("no intents left to generate")
    if knowledge_out is not None and Intent.knowledge not in wanted:
        err.print("[yellow]--knowledge-out ignored:[/] no knowledge problems requested")
        knowledge_out = None
    if knowledge_out is not None and knowledge_out.exists() and any(knowledge_out.iterdir()):
        fail(f"--knowledge-out {knowledge_out} is not empty; remove it or choose another directory")
    rewriter = _rewriter(rewrite_base_url, rewrite_model, rewrite_api_key)
    try:
        index = CatalogIndex(catalog or settings.catalog.path)
    except CatalogIndexError as exc:
        fail(str(exc))

    progress = Progress(
        TextColumn("generating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True
    )
    cfg = GeneratorConfig(n=n, seed=seed, intents=wanted, variants=variants, variant_kinds=kinds, workers=workers)
    try:
        with progress:
            task = progress.add_task("problems", total=n)
            result = run_generator(index, cfg, rewrite=rewriter, progress=lambda k: progress.advance(task, k))
        write_problems(result.problems, out_file)
        if knowledge_out is not None:
            write_knowledge(result.documents, knowledge_out)
    except (GenerationError, RewriteError, OSError) as exc:
        fail(str(exc))
    _report(result.report, out_file, len(result.problems), knowledge_out, rewriter)


def _parse_intents(text: str) -> list:
    from arena.problems.model import Intent

    out = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        try:
            intent = Intent.parse(name)
        except ValueError:
            fail(f"--intents: unknown intent {name!r}; choose from product, shop, voucher, knowledge (or web)")
        if intent not in out:
            out.append(intent)
    return out


def _rewriter(base_url: str | None, model: str | None, api_key: str | None):
    if base_url is None and model is None:
        return None
    if not base_url or not model:
        fail("the query rewriter needs both --rewrite-base-url and --rewrite-model")
    from arena.generator.rewrite_client import QueryRewriter, RewriterConfig, RewriterUnavailable

    try:
        return QueryRewriter(RewriterConfig(base_url=base_url, model=model, api_key=api_key))
    except RewriterUnavailable as exc:
        fail(str(exc))


def _report(report, out_file: Path, rows: int, knowledge_out: Path | None, rewriter) -> None:
    table = Table(title=f"{report.generated} problems + {rows - report.generated} variants -> {out_file}")
    table.add_column("intent")
    for column in ("easy", "medium", "hard", "candidates", "rejected"):
        table.add_column(column, justify="right")
    for intent, by in report.counts.items():
        rejected = sum(report.rejections.get(intent, {}).values())
        cells = [by["easy"], by["medium"], by["hard"], report.candidates.get(intent, 0), rejected]
        table.add_row(intent, *map(str, cells))
    show(table, err)
    reasons: dict[str, int] = {}
    for by in report.rejections.values():
        for reason, count in by.items():
            reasons[reason] = reasons.get(reason, 0) + count
    if reasons:
        listed = ", ".join(f"{r} {c}" for r, c in sorted(reasons.items(), key=lambda x: -x[1]))
        err.print(f"rejected by reason: {listed}")
    if report.variants:
        err.print("variants: " + ", ".join(f"{k} {v}" for k, v in report.variants.items()))
    if knowledge_out is not None:
        err.print(f"knowledge corpus: {knowledge_out / 'knowledge.jsonl'} (web_search index in {knowledge_out})")
    if rewriter is not None:
        err.print("rewriter: " + ", ".join(f"{k} {v}" for k, v in sorted(rewriter.stats.items())))
    err.print(
        f"seed {report.seed}: {report.generated} problems in {report.seconds:.1f}s "
        f"({report.per_minute():,.0f}/min; catalog frame {report.frame_seconds:.1f}s)"
    )
