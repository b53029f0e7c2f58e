"""Held-out evaluation: the policy under test through the race's own episode runner and scorer.

Two passes over the problems, both with the tool-calling reference agent as the
harness and the inference proxy pinning the sampling temperature:

- **greedy** (temperature 0, one run per problem) gives ASR, the number the
  ShoppingBench papers report;
- **sampled** (``samples`` runs per problem at ``temperature``) gives pass@1,
  pass@k (the unbiased estimator) and pass^k. Each sampled attempt carries its own seed
  (``sample_seed``: the config's seed, the problem, the attempt), pinned by the proxy on every call,
  so a run twice draws the same samples and a problem's k attempts differ.

Every record goes to ``records.jsonl`` wrapped in an ``evaluation`` envelope
(not a bare ``EpisodeRecord``): a corpus loader that reads episode records
fails on it instead of exporting held-out trajectories as training data.

An episode the infrastructure lost (``infrastructure_loss``: the sandbox or the model server failed,
or the agent hung up on a call the model server was still working on, its client's timer or the
episode's wall clock having run out while the server worked through its queue) is the validator's
failure, never the policy's: it is run again, up to ``max_reruns`` times, written to
``infra_lost.jsonl`` and counted in ``metrics.json`` (``infra_reruns``), and never scored.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from arena.agents import agent_path
from arena.problems.model import Problem
from arena.runner.batch import ks_for, run_batch
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.faults import record_fault
from arena.runner.proxy import SamplingPin, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.scoring.metrics import mean_pass_at_k, mean_pass_hat_k
from arena.scoring.outcome import ScoreMode
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeCorpus
from distill.eval_report import render_report
from distill.eval_results import METRICS_FILE, PROBLEMS_FILE, EvalMetrics, IntentMetrics, ProblemResult

RECORDS_FILE, REPORT_FILE, LOST_FILE = "records.jsonl", "report.md", "infra_lost.jsonl"
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
    max_reruns: int = Field(
        3, ge=0, description="Re-runs of one episode the infrastructure lost, before the evaluation gives up."
    )


class EvalInfraError(RuntimeError):
    """The infrastructure lost an episode on every try: no honest score can be given for the run."""


def infrastructure_loss(record: EpisodeRecord) -> str | None:
    """Why the infrastructure, not the policy, ended this episode; None when it did not.

    From validator-side signals only: the runner's and the proxy's faults (``record_fault``: the
    sandbox, the model server's 502 or 504, the proxy's own bug), and a call the proxy had forwarded
    to the model server and was still waiting on when the agent hung up (499 with an upstream time).
    The harness is the project's reference agent, which hangs up mid-call only when its client's
    timer or the episode's wall clock ran out: the model server's delay (a miner's agent hanging up
    would be its own doing, which is why the race does not read a 499 this way)."""
    fault = record_fault(record)
    if fault is not None:
        return f"{fault.kind.value}: {fault.detail}"
    for call in record.llm_calls:
        if call.status_code == 499 and call.upstream_ms is not None:
            return (
                f"the agent hung up on inference call {call.index} after {call.latency_ms / 1000:.1f} s, "
                f"the model server still working on it"
            )
    return None


def sample_seed(seed: int, problem_id: str, attempt: int) -> int:
    """The seed of one sampled attempt: fixed by the config's seed, the problem and the attempt, so a
    run twice draws the same samples, while a problem's k attempts (and two problems) draw their own."""
    digest = hashlib.sha256(f"{seed}:{problem_id}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits: every server's seed type holds it


class _RerunningRunner(EpisodeRunner):
    """The episode runner, running an episode again while the infrastructure lost it; a sampled
    phase's episodes each get their own seed (``sample_seed``), which a re-run keeps."""

    def __init__(
        self,
        *args,
        max_reruns: int,
        on_lost: Callable[[EpisodeRecord, str], None],
        sample_seed: int | None = None,
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.max_reruns, self.on_lost, self.sample_seed = max_reruns, on_lost, sample_seed

    def pin(self, problem: Problem, attempt: int) -> SamplingPin | None:
        pin = self.config.pin
        if pin is None or self.sample_seed is None:
            return pin
        return pin.model_copy(update={"seed": sample_seed(self.sample_seed, problem.id, attempt)})

    async def run(self, agent: AgentSource, problem: Problem, model: str, attempt: int = 0) -> EpisodeRecord:
        for _ in range(self.max_reruns + 1):
            record = await super().run(agent, problem, model, attempt=attempt)
            cause = infrastructure_loss(record)
            if cause is None:
                return record
            self.on_lost(record, cause)
        raise EvalInfraError(
            f"problem {problem.id} (attempt {attempt}): the infrastructure lost the episode "
            f"{self.max_reruns + 1} times, last: {cause}; see {LOST_FILE}"
        )


def metrics_from_results(
    results: list[ProblemResult], settings: EvalSettings, terminations: dict[str, int], infra_reruns: int = 0
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
        infra_reruns=infra_reruns,
    )


def evaluation_row(record: EpisodeRecord, phase: str, settings: EvalSettings, lost: str | None = None) -> str:
    """One records.jsonl (or, with ``lost``, infra_lost.jsonl) line: the record inside an envelope
    that says it is evaluation data."""
    described = {"phase": phase, "model": settings.model, "label": settings.label or settings.model}
    envelope = {
        "evaluation": described | ({"infra_lost": lost} if lost is not None else {}),
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
    lost_path = out_dir / LOST_FILE
    lost_path.write_text("")
    reruns = 0
    harness = AgentSource.from_path(agent_path(HARNESS))
    results = {p.id: ProblemResult(id=p.id, intent=p.intent.value, greedy=False) for p in problems}
    terminations: dict[str, int] = defaultdict(int)

    with records_path.open("a", encoding="utf-8") as handle, lost_path.open("a", encoding="utf-8") as lost_handle:
        phases = [("greedy", 0.0, 1)] + (
            [("sampled", settings.temperature, settings.samples)] if settings.samples else []
        )
        for phase, temperature, samples in phases:
            pin = SamplingPin(temperature=temperature, seed=settings.seed if temperature == 0 else None)
            config = RunnerConfig(
                limits=limits or EpisodeLimits(), sandbox=sandbox, allowlist=[settings.model], pin=pin
            )

            def lost(record: EpisodeRecord, cause: str, phase: str = phase) -> None:
                nonlocal reruns
                reruns += 1
                lost_handle.write(evaluation_row(record, phase, settings, lost=cause) + "\n")
                lost_handle.flush()

            runner = _RerunningRunner(
                catalog,
                registry,
                config,
                knowledge=knowledge,
                max_reruns=settings.max_reruns,
                on_lost=lost,
                sample_seed=settings.seed if temperature > 0 else None,
            )

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
    metrics = metrics_from_results(ordered, settings, dict(terminations), infra_reruns=reruns)
    (out_dir / METRICS_FILE).write_text(metrics.model_dump_json(indent=2) + "\n")
    (out_dir / PROBLEMS_FILE).write_text("".join(r.model_dump_json() + "\n" for r in ordered))
    report = render_report(metrics)
    if reruns:
        report += (
            f"\n{reruns} episode(s) lost to the infrastructure (the model server's delay or failure, the "
            f"sandbox) were run again and are not scored; each lost run is in {LOST_FILE}.\n"
        )
    (out_dir / REPORT_FILE).write_text(report)
    return metrics
