"""`arena run-agent`: run an agent file on problems, score, report ASR and pass@k."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
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


def run_agent(
    agent: Annotated[Path, typer.Argument(help="The agent file (defines agent_main(problem)).")],
    catalog: Annotated[Path, typer.Option("--catalog", help="Catalog index directory.")],
    problems: ProblemsOption = None,
    suite: SuiteOption = None,
    partition: Annotated[str, typer.Option("--partition", help="Suite partition to run (with --suite).")] = "public",
    limit: LimitOption = None,
    model: Annotated[str, typer.Option("--model", help="Model name the agent is told to use.")] = POLICY_MODEL,
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
    samples: SamplesOption = SAMPLES,
    mode: ModeOption = "strict",
    concurrency: ConcurrencyOption = 2,
    knowledge: KnowledgeOption = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write one episode record per line (JSONL).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the built-in policy.")] = 0,
    unsafe_no_sandbox: UnsafeNoSandboxOption = False,
    config: ConfigOption = None,
) -> None:
    """Run an agent on problems in the sandbox, score every episode, print ASR and pass@k."""
    from arena.miner.client import MinerClientError, read_agent
    from arena.runner.batch import run_batch
    from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
    from arena.runner.sandbox import SandboxUnavailable
    from arena.shop.index import CatalogIndex, CatalogIndexError
    from judge.rules import probe_plan

    settings = settings_or_fail(config)
    score_mode = score_mode_or_fail(mode)
    if not agent.is_file():
        fail(f"agent file {agent} does not exist")
    if samples < 1:
        fail("--samples must be at least 1: run-agent has no greedy pass besides its samples")
    try:
        # The intake's content checks (size, UTF-8, syntax, agent_main, imports the sandbox has), with the
        # line `arena submit` prints: an agent a validator would refuse is refused here, before it can
        # crash in every episode (an `import numpy` used to).
        read_agent(agent)
    except MinerClientError as exc:
        fail(str(exc))
    task_list = problems_or_fail(problems, suite, partition)[:limit]
    try:
        index = CatalogIndex(catalog)
    except (CatalogIndexError, OSError) as exc:
        fail(str(exc))
    knowledge_base, registry = upstream_or_fail(catalog, knowledge, model, base_url, api_key, seed)
    if unsafe_no_sandbox:
        err.print("[bold red]WARNING: --unsafe-no-sandbox runs the agent with YOUR user's full access. "
                  "Never use it for code you did not write.[/]")  # fmt: skip
    runner_config = RunnerConfig(
        limits=settings.runner.limits, sandbox=not unsafe_no_sandbox, allowlist=[model], probe=probe_plan
    )
    try:
        runner = EpisodeRunner(index, registry, runner_config, knowledge=knowledge_base)
    except SandboxUnavailable as exc:
        fail(str(exc))
    source = AgentSource.from_path(agent)
    if out_file is not None:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text("")

    progress = Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err)
    with progress:
        task = progress.add_task("run", total=len(task_list) * samples)
        records, summary = asyncio.run(
            run_batch(
                runner,
                source,
                task_list,
                model=model,
                samples=samples,
                concurrency=concurrency,
                mode=score_mode,
                out=out_file,
                on_done=lambda _: progress.advance(task),
            )  # fmt: skip
        )
        asyncio.run(registry.aclose())
    if problems is not None:
        source_name = problems.name
    else:
        assert suite is not None  # problems_or_fail took exactly one of the two
        source_name = f"{suite.name} {partition}"
    table = Table(title=f"{agent.name} on {source_name} ({score_mode.value} mode, {samples} sample(s) each)")
    for column in ("intent", "episodes", "ASR"):
        table.add_column(column, justify="left" if column == "intent" else "right")
    for intent, part in summary.asr.by_intent.items():
        table.add_row(intent, str(part.n), f"{part.asr:.1%}")
    table.add_row("[bold]all[/]", str(summary.asr.n), f"[bold]{summary.asr.asr:.1%}[/]")
    show(table)
    out.print("pass@k  " + "  ".join(f"k={k}: {v:.1%}" for k, v in summary.pass_at_k.items()))
    out.print("pass^k  " + "  ".join(f"k={k}: {v:.1%}" for k, v in summary.pass_hat_k.items()))
    out.print("ended   " + ", ".join(f"{k}: {v}" for k, v in sorted(summary.terminations.items())))
    sys.stdout.flush()
    _show_first_failure(records, out_file)
    _fail_when_every_episode_crashed(records)


TAIL_LINES = 15


def _fail_when_every_episode_crashed(records) -> None:
    """Exit non-zero when no episode got past a crash, so a script (CI, a loop over agents) sees it in
    the exit status, not only in the table: 1 when the agent crashed, 2 when every crash was this
    machine's (the sandbox, the model server: arena/runner/faults.py tells them apart from validator-side
    signals only), which is never the agent's to fix. Some crashes among finished episodes are a result
    (the ASR says it), not a failure of the command."""
    from arena.runner.faults import record_fault
    from arena.runner.record import Termination

    if not records or any(r.termination != Termination.crash for r in records):
        return
    faults = [fault for r in records if (fault := record_fault(r)) is not None]
    if len(faults) == len(records):
        first = faults[0]
        fix = RUN_AGENT_FAULT_FIXES.get(first.kind.value, "rerun; if it persists, rerun with --debug and report it")
        fail(
            f"every episode ({len(records)}) failed on this machine's side, not the agent's "
            f"({first.kind.value}: {first.detail}); {fix}"
        )
    fail(
        f"every episode ({len(records)}) crashed: the agent fails before it finishes any problem; "
        "fix the error in the traceback above and rerun",
        code=1,
    )


RUN_AGENT_FAULT_FIXES = {
    "upstream": "check that the model server at --base-url answers for --model (or leave out --base-url for "
    "the built-in offline policy)",
    "sandbox": "check that bubblewrap runs here (docs/security.md)",
}


def _show_first_failure(records, out_file: Path | None) -> None:
    """The first crashed (or limit-stopped) episode's error tail, so a broken agent is
    visible without opening the records; and where every record is."""
    from arena.runner.record import Termination

    failed = [r for r in records if r.termination in (Termination.crash, Termination.limit, Termination.timeout)]
    if not failed:
        return
    first = failed[0]
    err.print(
        f"[bold red]{len(failed)} episode(s) did not end normally.[/] The first, on problem "
        f"{first.problem.id} ({first.termination.value}{', ' + first.limit_hit if first.limit_hit else ''}):",
        highlight=False,
    )
    tail = "\n".join((first.stderr_tail or first.error or "(no output)").rstrip().splitlines()[-TAIL_LINES:])
    err.print(tail, markup=False, highlight=False)
    where = (
        f"every record, with full stdout/stderr tails, is in {out_file}"
        if out_file
        else ("rerun with --out records.jsonl to keep every record with its stdout/stderr tails")
    )
    err.print(where, markup=False, highlight=False)
