"""Held-out evaluation: the policy under test through the race's own episode runner and scorer.

Two passes over the problems, both with the tool-calling reference agent as the
harness and the inference proxy pinning the sampling temperature:

- **greedy** (temperature 0, one run per problem) gives ASR, the number the
  ShoppingBench papers report;
- **sampled** (``samples`` runs per problem at ``temperature``) gives pass@1,
  pass@k (the unbiased estimator) and pass^k.

Every record goes to ``records.jsonl`` wrapped in an ``evaluation`` envelope
(not a bare ``EpisodeRecord``): a corpus loader that reads episode records
fails on it instead of exporting held-out trajectories as training data.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from arena.agents import agent_path
from arena.problems.model import Problem
from arena.runner.batch import ks_for, run_batch
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import SamplingPin, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.scoring.metrics import mean_pass_at_k, mean_pass_hat_k
from arena.scoring.outcome import ScoreMode
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeCorpus
from distill.eval_report import render_report
from distill.eval_results import METRICS_FILE, PROBLEMS_FILE, EvalMetrics, IntentMetrics, ProblemResult

RECORDS_FILE, REPORT_FILE = "records.jsonl", "report.md"
HARNESS = "tool_calling"


class EvalSettings(BaseModel):
    """What one evaluation run is: the policy, the sampling, the scoring."""

    model: str
    base_url: str | None = None  # None: the built-in offline policy
    samples: int = Field(8, ge=0, description="Sampled runs per problem for pass@k (0: greedy ASR only).")
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    mode: ScoreMode = ScoreMode.strict
    concurrency: int = Field(2, ge=1)
    seed: int = 0
    label: str | None = None  # a name for `arena eval compare` (default: the model)


def metrics_from_results(
    results: list[ProblemResult], settings: EvalSettings, terminations: dict[str, int]
) -> EvalMetrics:
    """Aggregate per-problem results; pass@k uses the same estimator as the race (arena.scoring.metrics)."""

    def summarize(part: list[ProblemResult]) -> tuple[float, dict[int, float], dict[int, float]]:
        asr = sum(r.greedy for r in part) / len(part) if part else 0.0
        if settings.samples == 0 or not part:
            return asr, {}, {}
        attempts = {r.id: r.successes for r in part}
        ks = ks_for(settings.samples)
        return (
            asr,
            {k: mean_pass_at_k(attempts, k) for k in ks},
            {k: mean_pass_hat_k(attempts, k) for k in ks},
        )

    asr, at_k, hat_k = summarize(results)
    grouped: dict[str, list[ProblemResult]] = defaultdict(list)
    for result in results:
        grouped[result.intent].append(result)
    by_intent = {}
    for intent, part in sorted(grouped.items()):
        part_asr, part_at_k, _ = summarize(part)
        by_intent[intent] = IntentMetrics(n=len(part), asr=part_asr, pass_at_1=part_at_k.get(1), pass_at_k=part_at_k)
    return EvalMetrics(
        asr=asr,
        pass_at_1=at_k.get(1),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        n_problems=len(results),
        samples=settings.samples,
        by_intent=by_intent,
        model=settings.model,
        label=settings.label or settings.model,
        temperature=settings.temperature,
        mode=settings.mode.value,
        terminations=terminations,
    )


def evaluation_row(record: EpisodeRecord, phase: str, settings: EvalSettings) -> str:
    """One records.jsonl line: the record inside an envelope that says it is evaluation data."""
    envelope = {
        "evaluation": {"phase": phase, "model": settings.model, "label": settings.label or settings.model},
        "never_train": True,
        "record": record.model_dump(mode="json"),
    }
    return json.dumps(envelope, ensure_ascii=False)


async def evaluate(
    catalog: CatalogIndex,
    problems: list[Problem],
    registry: UpstreamRegistry,
    settings: EvalSettings,
    out_dir: Path,
    *,
    knowledge: KnowledgeCorpus | None = None,
    limits: EpisodeLimits | None = None,
    sandbox: bool = True,
    on_done: Callable[[EpisodeRecord], None] | None = None,
) -> EvalMetrics:
    """Run the greedy and sampled passes, write records/metrics/report/problems into ``out_dir``."""
    if not problems:
        raise ValueError("no problems to evaluate")
    out_dir.mkdir(parents=True, exist_ok=True)
    records_path = out_dir / RECORDS_FILE
    records_path.write_text("")
    harness = AgentSource.from_path(agent_path(HARNESS))
    results = {p.id: ProblemResult(id=p.id, intent=p.intent.value, greedy=False) for p in problems}
    terminations: dict[str, int] = defaultdict(int)

    with records_path.open("a", encoding="utf-8") as handle:
        phases = [("greedy", 0.0, 1)] + (
            [("sampled", settings.temperature, settings.samples)] if settings.samples else []
        )
        for phase, temperature, samples in phases:
            pin = SamplingPin(temperature=temperature, seed=settings.seed if temperature == 0 else None)
            config = RunnerConfig(
                limits=limits or EpisodeLimits(), sandbox=sandbox, allowlist=[settings.model], pin=pin
            )
            runner = EpisodeRunner(catalog, registry, config, knowledge=knowledge)

            def keep(record: EpisodeRecord, phase: str = phase) -> None:
                # run_batch scored the record before calling back; written at once so a crash keeps it.
                handle.write(evaluation_row(record, phase, settings) + "\n")
                handle.flush()
                terminations[record.termination.value] += 1
                if on_done is not None:
                    on_done(record)

            records, _ = await run_batch(
                runner,
                harness,
                problems,
                model=settings.model,
                samples=samples,
                concurrency=settings.concurrency,
                mode=settings.mode,
                on_done=keep,
            )
            # run_batch finishes episodes in any order; attempts are re-sorted so results are reproducible.
            for record in sorted(records, key=lambda r: (r.problem.id, r.attempt)):
                success = bool((record.outcome or {}).get("success"))
                if phase == "greedy":
                    results[record.problem.id].greedy = success
                else:
                    results[record.problem.id].successes.append(success)

    ordered = [results[p.id] for p in problems]
    metrics = metrics_from_results(ordered, settings, dict(terminations))
    (out_dir / METRICS_FILE).write_text(metrics.model_dump_json(indent=2) + "\n")
    (out_dir / PROBLEMS_FILE).write_text("".join(r.model_dump_json() + "\n" for r in ordered))
    (out_dir / REPORT_FILE).write_text(render_report(metrics))
    return metrics
