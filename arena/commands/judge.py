"""`arena judge`: judge episode records' reasoning, and calibrate a judge on a labelled set.

stdout carries machine output only (one JSON object per episode for ``run``,
one report object for ``calibrate``); progress, tables and warnings go to stderr.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.table import Table

from arena.commands.common import ConfigOption, err, fail, settings_or_fail, show

if TYPE_CHECKING:
    from judge.batch import Judge
    from judge.calibration.agreement import CalibrationReport
    from judge.settings import JudgeSettings

T = TypeVar("T")

app = typer.Typer(help="The reasoning judge: judge episode records, calibrate against labels.", no_args_is_help=True)

JudgeKind = Annotated[str | None, typer.Option("--judge", help="rules (offline, default) | openai (LLM judge).")]
BaseUrl = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible judge server (vLLM).")]
Models = Annotated[
    list[str] | None, typer.Option("--model", help="Judge model; repeat for a fallback order (or the panel).")
]
Panel = Annotated[bool, typer.Option("--panel", help="Ask every --model; median level, disagreement recorded.")]
Concurrency = Annotated[int | None, typer.Option("--concurrency", min=1, help="Judge requests in flight at once.")]
ApiKey = Annotated[str | None, typer.Option("--api-key", envvar="ARENA_JUDGE__API_KEY", help="Judge server key.")]
PendingRounds = Annotated[
    int | None, typer.Option("--pending-rounds", min=0, help="Extra passes over episodes left judgment pending.")
]
Timeout = Annotated[float | None, typer.Option("--timeout", min=0.001, help="Deadline of one judge request (s).")]


def _settings(
    config: Path | None,
    kind: str | None,
    base_url: str | None,
    models: list[str] | None,
    panel: bool,
    concurrency: int | None,
    api_key: str | None,
    pending_rounds: int | None = None,
    timeout: float | None = None,
) -> JudgeSettings:
    from pydantic import ValidationError

    from judge.settings import JudgeSettings

    settings = settings_or_fail(config)
    base = settings.judge
    overrides: dict = {}
    if kind is not None:
        overrides["kind"] = kind
    if base_url is not None:
        overrides["base_url"] = base_url
    if models:
        overrides["models"] = models
    if panel:
        overrides["panel"] = True
    if concurrency is not None:
        overrides["concurrency"] = concurrency
    if api_key is not None:
        overrides["api_key"] = api_key
    if pending_rounds is not None:
        overrides["pending_rounds"] = pending_rounds
    if timeout is not None:
        overrides["timeout_s"] = timeout
    try:
        return JudgeSettings.model_validate({**base.model_dump(), **overrides})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "(top)"
        fail(f"judge settings: {where}: {first['msg']} (--judge takes rules or openai)" if where == "kind" else
             f"judge settings: {where}: {first['msg']}")  # fmt: skip


def _judge(settings: JudgeSettings, llm_flags: bool = False) -> Judge:
    from judge.factory import open_judge

    if settings.kind == "rules" and llm_flags:
        err.print("[yellow]--base-url/--model/--panel only apply to --judge openai; using the rules judge[/]")
    return open_judge(settings)


def _batch_options(settings: JudgeSettings) -> dict:
    """How a batch of judgments runs; only the LLM judge can leave an episode pending, so only it retries."""
    return {
        "concurrency": settings.concurrency,
        "pending_rounds": settings.pending_rounds if settings.kind == "openai" else 0,
        "pending_pause_s": settings.pending_pause_s,
    }


def _run_then_close(chosen: Judge, work: Awaitable[T]) -> T:
    """Run ``work`` to the end, then release the judge's connections whatever happened."""

    async def go() -> T:
        try:
            return await work
        finally:
            await chosen.aclose()

    return asyncio.run(go())


@app.command("run")
def run(
    records: Annotated[
        list[Path] | None, typer.Option("--records", help="Episode records (JSONL, as run-agent --out writes).")
    ] = None,
    database_url: Annotated[
        str | None, typer.Option("--database-url", help="Judge the store's pending episodes (with the store).")
    ] = None,
    judge: JudgeKind = None,
    base_url: BaseUrl = None,
    model: Models = None,
    panel: Panel = False,
    concurrency: Concurrency = None,
    api_key: ApiKey = None,
    pending_rounds: PendingRounds = None,
    timeout: Timeout = None,
    config: ConfigOption = None,
) -> None:
    """Judge episodes; print {"episode_id", "level", "coefficient", "explanation", "judge", "rubric_version"} per line.

    Exit 0 when every episode was judged, 1 when some stayed "judgment pending" (printed with level null)."""
    from judge.batch import judge_batch
    from judge.records import RecordFileError, load_records

    if database_url is not None and records:
        fail("give --records or --database-url, not both")
    if database_url is None and not records:
        fail("give the episodes to judge: --records FILE (repeatable) or --database-url URL")
    settings = _settings(config, judge, base_url, model, panel, concurrency, api_key, pending_rounds, timeout)
    if database_url is not None:
        _judge_store(database_url, _judge(settings, bool(base_url or model or panel)))
        return
    assert records is not None
    try:
        loaded = load_records(*records)
    except RecordFileError as exc:
        fail(str(exc))
    chosen = _judge(settings, bool(base_url or model or panel))
    err.print(f"judging {len(loaded)} episode(s) from {len(records)} file(s) with the {chosen.name} judge")

    # One line per episode in the files' order, each printed once it and every episode before it are
    # judged: concurrent judging finishes in any order, and a reader pairs the lines with its records.
    position = {record.episode_id: k for k, record in enumerate(loaded)}
    finished: dict[int, object] = {}
    printed = 0

    def write(outcome) -> None:
        sys.stdout.write(json.dumps(outcome.line(), ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def emit(outcome) -> None:
        nonlocal printed
        if len(position) != len(loaded):  # an id repeated across the files: no order to keep
            write(outcome)
            return
        finished[position[outcome.episode_id]] = outcome
        while printed in finished:
            write(finished.pop(printed))
            printed += 1

    outcomes = _run_then_close(chosen, judge_batch(chosen, loaded, on_final=emit, **_batch_options(settings)))
    for k in sorted(finished):  # after one the batch never finished (it prints every episode it judged)
        write(finished.pop(k))
    pending = [o for o in outcomes if o.status == "pending"]
    if pending:
        err.print(
            f"[yellow]{len(pending)} of {len(outcomes)} episode(s) are judgment pending; judge them again later[/]"
        )
        raise typer.Exit(1)
    err.print(f"judged {len(outcomes)} episode(s)")


def _judge_store(database_url: str, chosen: Judge) -> None:
    """Judge every finished episode of the store that has no judgment yet, storing each judgment
    (a new version; a failure stays pending, never a silent 0)."""
    from arena.store import StoreError, open_store
    from arena.store import episodes as episode_rows
    from arena.store.db import safe_url
    from arena.store.models_race import EpisodeStatus
    from judge.stored_episodes import judge_stored_episode
    from judge.verdict import JudgmentPending

    try:
        store = open_store(database_url)
        with store.transaction() as session:
            done = [e.id for e in episode_rows.list_episodes(session, status=EpisodeStatus.done)]
    except (StoreError, Exception) as exc:  # an unreachable or unmigrated database
        fail(f"cannot read episodes from {safe_url(database_url)}: {str(exc).splitlines()[0]}")
    pending = judged = 0

    async def go() -> None:
        nonlocal pending, judged
        try:
            for episode_id in done:
                outcome = await judge_stored_episode(store, chosen, episode_id)
                if outcome is None:
                    continue
                line = outcome.line() | {"store_episode_id": episode_id}  # the record id stays the contract field
                sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
                sys.stdout.flush()
                if isinstance(outcome, JudgmentPending):
                    pending += 1
                else:
                    judged += 1
        finally:
            await chosen.aclose()
            store.dispose()

    asyncio.run(go())
    err.print(f"judged {judged} stored episode(s); {pending} pending")
    if pending:
        raise typer.Exit(1)


@app.command("calibrate")
def calibrate(
    labels: Annotated[Path, typer.Option("--labels", help="Labelled set (JSONL: case, gold, note, record).")],
    judge: JudgeKind = None,
    base_url: BaseUrl = None,
    model: Models = None,
    panel: Panel = False,
    concurrency: Concurrency = None,
    api_key: ApiKey = None,
    pending_rounds: PendingRounds = None,
    timeout: Timeout = None,
    config: ConfigOption = None,
) -> None:
    """Agreement with labelled trajectories: accuracy, quadratic-weighted kappa, confusion matrix, cost, latency.

    The report is one JSON object on stdout; a readable summary goes to stderr. Exits 0 whatever the agreement."""
    from judge.calibration.agreement import calibrate as run_calibration
    from judge.records import RecordFileError, load_labels

    settings = _settings(config, judge, base_url, model, panel, concurrency, api_key, pending_rounds, timeout)
    try:
        labelled = load_labels(labels)
    except RecordFileError as exc:
        fail(str(exc))
    chosen = _judge(settings, bool(base_url or model or panel))
    err.print(f"calibrating the {chosen.name} judge on {len(labelled)} labelled episode(s) from {labels}")

    report = _run_then_close(chosen, run_calibration(chosen, labelled, **_batch_options(settings)))
    sys.stdout.write(report.model_dump_json() + "\n")
    _print_report(report)


def _print_report(report: CalibrationReport) -> None:
    err.print(
        f"{report.judge}: {report.judged}/{report.n} judged ({report.pending} pending), accuracy "
        f"{report.accuracy:.1%}, within one level {report.within_one_level:.1%}, "
        f"quadratic kappa {report.kappa_quadratic:.3f}"
    )
    table = Table(title="confusion (rows: gold, columns: judged)")
    table.add_column("gold")
    for level in report.confusion.levels:
        table.add_column(str(level), justify="right")
    for level, row in zip(report.confusion.levels, report.confusion.matrix, strict=True):
        table.add_row(str(level), *(str(count) if count else "." for count in row))
    show(table, err)
    err.print(
        f"cost: {report.cost.requests} request(s), {report.cost.prompt_tokens} prompt + "
        f"{report.cost.completion_tokens} completion tokens ({report.cost.tokens_per_episode} per episode); "
        f"latency per episode mean {report.latency.mean_ms:.1f} ms, p95 {report.latency.p95_ms:.1f} ms; "
        f"wall {report.wall_s:.2f} s"
    )
    for usage in report.by_model:
        err.print(
            f"  {usage.model}: {usage.requests} request(s), {usage.failures} failed, "
            f"{usage.prompt_tokens}+{usage.completion_tokens} tokens, p50 {usage.latency.p50_ms:.1f} ms"
        )
    for miss in report.misses:
        err.print(f"  miss {miss.case}: gold {miss.gold}, judged {miss.predicted}: {miss.explanation}", markup=False)
    if report.pending_cases:
        err.print(f"  pending: {', '.join(report.pending_cases)}")
