"""`arena export`: the judged trajectory store (or episode-record files) as a training corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.commands.common import err, fail, out
from arena.commands.model_options import model_options
from distill.export_model import ExportConfig

# The older spellings of two fields' flags (the rest are the field names): scripts use them.
FLAGS = {"formats": "--format", "gates.template": "--chat-template"}


@model_options(ExportConfig, flags=FLAGS)
def export(
    config: ExportConfig,
    database_url: Annotated[
        str | None, typer.Option("--database-url", help="Export the store at this URL (streamed in batches).")
    ] = None,
    records: Annotated[
        list[Path] | None, typer.Option("--records", help="Episode-record JSONL (arena run-agent --out); repeatable.")
    ] = None,
    judgments: Annotated[
        list[Path] | None, typer.Option("--judgments", help="`arena judge run` output for --records; repeatable.")
    ] = None,
    suite: Annotated[
        list[Path] | None, typer.Option("--suite", help="Suite directory: leak clusters and partitions for --records.")
    ] = None,
    shoppingbench: Annotated[
        list[Path] | None, typer.Option("--shoppingbench", help="ShoppingBench official rollout JSONL to import.")
    ] = None,
    subnet: Annotated[
        list[Path] | None, typer.Option("--subnet", help="Live-subnet dialogue-step JSONL (agent-reported).")
    ] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Episodes per database batch.")] = 500,
) -> None:
    """Normalise, filter, gate and split trajectories by leak cluster; write the corpus and its dataset card."""
    from distill import importers
    from distill.export import ExportError, run_export
    from distill.gates import GateError
    from distill.store_export import export_store

    out_dir, chat_template = config.out, config.gates.template
    files = [*(records or []), *(shoppingbench or []), *(subnet or [])]
    if (database_url is None) == (not files):
        fail("give either --database-url URL or input files (--records, --shoppingbench, --subnet), not both")
    for path in files + list(judgments or []) + ([chat_template] if chat_template else []):
        if not path.is_file():
            fail(f"{path} does not exist")
    if database_url is not None:
        from arena.store import StoreError, open_store

        try:
            store = open_store(database_url)
        except StoreError as exc:
            fail(str(exc))
        try:
            summary = export_store(store, config, batch_size=batch_size)
        except (ExportError, GateError) as exc:
            fail(str(exc))
        finally:
            store.dispose()
    else:
        try:
            judged = importers.read_judgments(judgments or [])
            places = importers.read_suites(suite or [])
            items = _chain(
                importers.record_items(records or [], judged, places),
                *(importers.shoppingbench_items(p) for p in shoppingbench or []),
                *(importers.subnet_items(p) for p in subnet or []),
            )
            summary = run_export(items, config)
        except (importers.CorpusFileError, ExportError, GateError) as exc:
            fail(str(exc))
    for line in summary.unreadable[:20]:
        err.print(f"[yellow]unreadable:[/] {line}", highlight=False)
    for line in summary.extras:
        err.print(line, markup=False, highlight=False)  # "[export]" in the install hint is text, not markup
    for line in summary.warnings:
        err.print("[bold yellow]warning:[/] " + escape(line), highlight=False)
    if summary.empty:
        err.print(f"not written (no rows): {', '.join(summary.empty)}", markup=False, highlight=False)
    funnel = summary.funnel
    err.print(
        f"episodes {funnel.episodes} -> agentic {funnel.agentic} -> gated {funnel.gated} -> "
        f"train {funnel.train} / eval {funnel.eval}  (sub-task {funnel.subtask}, rejected {funnel.rejected}, "
        f"held out {funnel.heldout}, unreadable {funnel.unreadable}); card: {out_dir / 'README.md'}",
        highlight=False,
    )
    out.print_json(json.dumps(funnel.model_dump()))
    if not summary.usable:
        fail("the export produced no train split (see the warning above and the card)", code=1)


def _chain(*iterables):
    for iterable in iterables:
        yield from iterable
