"""`arena export`: the judged trajectory store (or episode-record files) as a training corpus."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.commands.common import err, fail, out


def _time(text: str | None, flag: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        fail(f"{flag} {text!r} is not an ISO-8601 time (e.g. 2025-06-01T00:00:00Z)")


def export(
    out_dir: Annotated[
        Path, typer.Option("--out", help="Directory for train/eval/subtask/rejected/kto and README.md.")
    ],
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
    formats: Annotated[str, typer.Option("--format", help="Comma list of jsonl, parquet, hf.")] = "jsonl",
    min_coefficient: Annotated[
        float, typer.Option("--min-coefficient", min=0.0, max=1.0, help="Reasoning gate (0: unjudged pass).")
    ] = 0.7,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the eval-cluster draw, dedup and cap sampling.")] = 0,
    cycles: Annotated[str | None, typer.Option("--cycles", help="Cycle range A:B (inclusive).")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Episodes started at or after (ISO-8601).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Episodes started before (ISO-8601).")] = None,
    suites: Annotated[str | None, typer.Option("--suites", help="Comma list of suite ids to select.")] = None,
    max_agent_share: Annotated[
        float, typer.Option("--max-agent-share", min=0.01, max=1.0, help="Cap on one agent's share of train.")
    ] = 0.5,
    eval_fraction: Annotated[float, typer.Option("--eval-fraction", min=0.0, max=0.9)] = 0.1,
    min_attribution: Annotated[float, typer.Option("--min-attribution", min=0.0, max=1.0)] = 0.9,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Format gate's length limit.")] = 32_768,
    tokenizer: Annotated[
        Path | None, typer.Option("--tokenizer", help="tokenizer.json to count tokens (else ceil(chars/3)).")
    ] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Episodes per database batch.")] = 500,
    chat_template: Annotated[
        Path | None,
        typer.Option("--chat-template", help="Template the format gate renders with (default: Qwen3's)."),
    ] = None,
) -> None:
    """Normalise, filter, gate and split trajectories by leak cluster; write the corpus and its dataset card."""
    from pydantic import ValidationError

    from distill import importers
    from distill.export import ExportError, run_export
    from distill.export_model import ExportConfig
    from distill.gates import GateConfig, GateError
    from distill.split import Selection, SplitError
    from distill.structure import FilterConfig

    files = [*(records or []), *(shoppingbench or []), *(subnet or [])]
    if (database_url is None) == (not files):
        fail("give either --database-url URL or input files (--records, --shoppingbench, --subnet), not both")
    try:
        selection = Selection(
            cycles=Selection.parse_cycles(cycles),
            since=_time(since, "--since"),
            until=_time(until, "--until"),
            suites=[s for s in (suites or "").split(",") if s],
        )
        config = ExportConfig(
            out=out_dir,
            formats=[f.strip() for f in formats.split(",") if f.strip()],
            seed=seed,
            eval_fraction=eval_fraction,
            max_agent_share=max_agent_share,
            filter=FilterConfig(min_attribution=min_attribution),
            gates=GateConfig(
                min_coefficient=min_coefficient, max_tokens=max_tokens, tokenizer=tokenizer, template=chat_template
            ),
            selection=selection,
        )
    except (SplitError, ValidationError) as exc:
        fail(str(exc))
    for path in files + list(judgments or []) + ([chat_template] if chat_template else []):
        if not path.is_file():
            fail(f"{path} does not exist")
    store = None
    try:
        if database_url is not None:
            from arena.store import StoreError, open_store

            try:
                store = open_store(database_url)
            except StoreError as exc:
                fail(str(exc))
            items = importers.store_items(
                store, cycles=selection.cycles, suites=selection.suites, batch_size=batch_size
            )
        else:
            judged = importers.read_judgments(judgments or [])
            places = importers.read_suites(suite or [])
            items = _chain(
                importers.record_items(records or [], judged, places),
                *(importers.shoppingbench_items(p) for p in shoppingbench or []),
                *(importers.subnet_items(p) for p in subnet or []),
            )
        if store is not None:
            summary = _export_recording_verdicts(store, items, config, out_dir)
        else:
            summary = run_export(items, config)
    except (importers.ImportError_, ExportError, GateError) as exc:
        fail(str(exc))
    finally:
        if store is not None:
            store.dispose()
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


def _export_recording_verdicts(store, items, config, out_dir: Path):
    """The database path: the run and every episode's verdicts are stored, so the API can show them."""
    from arena.store.exports import add_verdicts, finish_export_run, start_export_run
    from distill.export import run_export

    with store.transaction() as session:
        run_id = start_export_run(session, str(out_dir), config.model_dump(mode="json"))
    batch: list[dict] = []

    def flush() -> None:
        with store.transaction() as session:
            add_verdicts(session, run_id, batch)
        batch.clear()

    def on_verdict(verdict) -> None:
        batch.append(verdict.model_dump(mode="json"))
        if len(batch) >= 500:
            flush()

    summary = run_export(items, config, on_verdict=on_verdict)
    flush()
    with store.transaction() as session:
        finish_export_run(session, run_id, summary.funnel.model_dump())
    return summary


def _chain(*iterables):
    for iterable in iterables:
        yield from iterable
