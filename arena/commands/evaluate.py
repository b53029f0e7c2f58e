"""`arena eval`: a policy on held-out problems -> ASR, pass@1, pass@k, pass^k; `arena eval compare`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.commands.common import ConfigOption, err, fail, out, settings_or_fail, show
from arena.commands.policy_run import (
    POLICY_MODEL,
    SAMPLES,
    ApiKeyOption,
    BaseUrlOption,
    ConcurrencyOption,
    KnowledgeOption,
    LimitOption,
    ModeOption,
    ProblemsOption,
    SamplesOption,
    SuiteOption,
    UnsafeNoSandboxOption,
    problems_or_fail,
    score_mode_or_fail,
    upstream_or_fail,
)

app = typer.Typer(
    help="Evaluate a policy (any OpenAI-compatible endpoint) on a held-out partition.",
    invoke_without_command=True,
    no_args_is_help=False,
)


@app.callback()
def run(
    ctx: typer.Context,
    catalog: Annotated[Path | None, typer.Option("--catalog", help="Catalog index directory. \\[required]")] = None,
    problems: ProblemsOption = None,
    suite: SuiteOption = None,
    partition: Annotated[str, typer.Option("--partition", help="Suite partition to evaluate on.")] = "heldout",
    base_url: BaseUrlOption = None,
    model: Annotated[str, typer.Option("--model", help="Model name served at --base-url.")] = POLICY_MODEL,
    api_key: ApiKeyOption = None,
    samples: SamplesOption = SAMPLES,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, max=2.0)] = 0.7,
    mode: ModeOption = "strict",
    limit: LimitOption = None,
    concurrency: ConcurrencyOption = 2,
    label: Annotated[
        str | None, typer.Option("--label", help="Name of this run in `compare` (default: model).")
    ] = None,
    knowledge: KnowledgeOption = None,
    # Not typer-required: `arena eval compare` shares this callback. The help says it, and the body checks it.
    out_dir: Annotated[Path | None, typer.Option("--out", help="Output directory. \\[required]")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the greedy pass and of the built-in policy.")] = 0,
    unsafe_no_sandbox: UnsafeNoSandboxOption = False,
    config: ConfigOption = None,
) -> None:
    """Run the policy under test through the race's episode runner and scorer; write metrics.json,
    report.md and records.jsonl (evaluation episodes, never training data) into --out."""
    if ctx.invoked_subcommand is not None:
        return
    from arena.runner.sandbox import SandboxUnavailable
    from arena.shop.index import CatalogIndex, CatalogIndexError
    from distill.evaluate import EvalSettings, evaluate

    missing = [flag for flag, value in (("--catalog", catalog), ("--out", out_dir)) if value is None]
    if missing:
        fail(f"{' and '.join(missing)} required (or use `arena eval compare DIR DIR ...`)")
    assert catalog is not None and out_dir is not None  # checked above
    settings = settings_or_fail(config)
    score_mode = score_mode_or_fail(mode)
    task_list = problems_or_fail(problems, suite, partition)
    try:
        index = CatalogIndex(catalog)
    except (CatalogIndexError, OSError) as exc:
        fail(str(exc))
    task_list = task_list[:limit]
    if not task_list:
        fail("no problems to evaluate")
    knowledge_base, registry = upstream_or_fail(catalog, knowledge, model, base_url, api_key, seed)
    eval_settings = EvalSettings(
        model=model,
        base_url=base_url,
        samples=samples,
        temperature=temperature,
        mode=score_mode,
        concurrency=concurrency,
        seed=seed,
        label=label,
    )
    total = len(task_list) * (1 + samples)
    done = [0]

    def progress(_record) -> None:
        done[0] += 1
        if done[0] % max(1, total // 20) == 0 or done[0] == total:
            err.print(f"episodes {done[0]}/{total}", highlight=False)

    async def go():
        try:
            return await evaluate(
                index,
                task_list,
                registry,
                eval_settings,
                out_dir,
                knowledge=knowledge_base,
                limits=settings.runner.limits,
                sandbox=not unsafe_no_sandbox,
                on_done=progress,
            )
        finally:
            await registry.aclose()

    try:
        metrics = asyncio.run(go())
    except SandboxUnavailable as exc:
        fail(str(exc))
    err.print((out_dir / "report.md").read_text(), markup=False, highlight=False)
    out.print_json(json.dumps(metrics.model_dump(mode="json")))


@app.command("compare")
def compare(
    runs: Annotated[list[Path], typer.Argument(help="`arena eval` output directories (base model first).")],
    resamples: Annotated[int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")] = 2000,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999)] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of the table.")] = False,
) -> None:
    """Put several evaluation runs side by side, with bootstrap confidence intervals over problems."""
    from distill.eval_report import compare_runs
    from distill.eval_results import EvalRunError, load_run

    try:
        loaded = [load_run(path) for path in runs]
        rows = compare_runs(loaded, resamples=resamples, confidence=confidence)
    except (EvalRunError, ValueError) as exc:
        fail(str(exc))
    if as_json:
        out.print_json(json.dumps([row.model_dump(mode="json") for row in rows]))
    else:
        show(comparison_table(rows, confidence))
        if (against := versus_table(rows)) is not None:
            show(against)


def cell(interval) -> str:
    return "-" if interval is None else f"{interval.value:.1%} [{interval.low:.1%}, {interval.high:.1%}]"


def comparison_table(rows, confidence: float) -> Table:
    """The runs side by side: a rich table (it fits its columns to the terminal; a markdown row would wrap
    mid-row), with the one k of pass@k in its header."""
    k = next((row.k for row in rows if row.k), None)
    table = Table(
        title=f"bootstrap {confidence:.0%} intervals over the problems all runs share",
        caption="paired resampling; value [low, high]",
    )
    table.add_column("run", overflow="fold")
    table.add_column("problems", justify="right")
    # pass@k only when some run sampled more than once: with k = 1 it is pass@1 again, a second column of it.
    wide = k is not None and k > 1
    for name in ("ASR", "pass@1", *([f"pass@{k}"] if wide else [])):
        table.add_column(name, justify="right")
    for row in rows:
        cells = [cell(row.asr), cell(row.pass_at_1), *([cell(row.pass_at_k)] if wide else [])]
        table.add_row(row.label, str(row.n_problems), *cells)
    return table


def versus_table(rows) -> Table | None:
    """Each later run's greedy success against the first run's (paired by problem), in a table of its own:
    beside the intervals it would not fit 80 columns."""
    from distill.eval_report import versus

    later = [row for row in rows if row.vs_first is not None]
    if not later:
        return None
    table = Table(title=f"ASR against {rows[0].label} (paired, one-sided)")
    table.add_column("run", overflow="fold")
    # escaped: rich would read "[interval]" as a style tag and drop it ("difference , better")
    table.add_column(escape("difference [interval], better / worse: verdict"), overflow="fold")
    for row in later:
        table.add_row(row.label, escape(versus(row, emphasis="")))
    return table
