"""`rft`: rejection-sampled re-SFT.

Sample ``rollout.samples`` episodes per train problem from the current
checkpoint (through vLLM at ``rollout.base_url``, or served in-process by
``distill.serve``) with the real episode runner and the tool-calling harness,
keep the successful ones with distinct tool paths, and SFT on them. The
rollouts are written to ``OUTPUT/rollouts.jsonl`` for inspection.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from distill.train.config import StageConfig
from distill.train.data import CorpusError, StageSkipped, shape_dialogue
from distill.train.report import StageReport
from distill.train.sft import train_sft_rows


def dialogue_of(record) -> list[dict[str, Any]]:
    """The full dialogue of a tool-calling episode: the last request's messages plus the final answer.

    The harness sends the whole growing dialogue on every call, so the last request holds every earlier
    turn with its tool results; its response is the final assistant turn."""
    calls = [c for c in record.llm_calls if c.status_code == 200 and c.response is not None]
    if not calls:
        return []
    last = calls[-1]
    response = last.response
    final = {"role": "assistant", "content": response.get("content") or ""}
    if response.get("tool_calls"):
        final["tool_calls"] = response["tool_calls"]
    return [*last.request.get("messages", []), final]


def path_key(record) -> tuple:
    return tuple((c.name, json.dumps(c.arguments, sort_keys=True)) for c in record.tool_calls)


def keep_distinct_successes(records) -> list:
    seen: set[tuple] = set()
    kept = []
    for record in records:
        if not (record.outcome or {}).get("success"):
            continue
        key = (record.problem.id, path_key(record))
        if key in seen:
            continue
        seen.add(key)
        kept.append(record)
    return kept


def sample_rollouts(config: StageConfig) -> list:
    import httpx

    from arena.agents import agent_path
    from arena.problems.official import iter_problems
    from arena.runner.batch import run_batch
    from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
    from arena.runner.proxy import SamplingPin, Upstream, UpstreamRegistry
    from arena.runner.record import EpisodeLimits
    from arena.shop.index import CatalogIndex

    if config.catalog is None or config.problems_file is None:
        raise CorpusError("rft needs catalog and problems_file (the train problems to sample on)")
    problems = list(iter_problems(config.data_path(config.problems_file)))[: config.rollout.limit]
    settings = config.rollout
    name = settings.served_model or config.model
    if settings.base_url:
        registry = UpstreamRegistry([Upstream(name="checkpoint", base_url=settings.base_url, models=[name])])
    else:
        from transformers import AutoModelForCausalLM

        from distill.serve import create_model_app
        from distill.train.checkpoints import load_tokenizer

        tokenizer = load_tokenizer(config.model)
        model = AutoModelForCausalLM.from_pretrained(config.model).eval()
        app = create_model_app(
            model, tokenizer, name, max_new_tokens=settings.max_new_tokens, max_batch=settings.concurrency,
            turn_calls=settings.turn_calls,
        )  # fmt: skip
        registry = UpstreamRegistry(
            [Upstream(name="checkpoint", base_url="http://checkpoint/v1", models=[name])],
            transports={"checkpoint": httpx.ASGITransport(app=app)},
        )
    runner_config = RunnerConfig(
        limits=EpisodeLimits(wall_s=settings.wall_s),
        sandbox=settings.sandbox,
        allowlist=[name],
        pin=SamplingPin(temperature=settings.temperature),
    )
    runner = EpisodeRunner(CatalogIndex(config.catalog), registry, runner_config)

    async def go():
        try:
            return await run_batch(
                runner,
                AgentSource.from_path(agent_path("tool_calling")),
                problems,
                model=name,
                samples=settings.samples,
                concurrency=settings.concurrency,
                out=config.output / "rollouts.jsonl",
            )
        finally:
            await registry.aclose()

    (config.output / "rollouts.jsonl").unlink(missing_ok=True)
    records, _ = asyncio.run(go())
    return records


def run_rft(config: StageConfig) -> StageReport:
    records = sample_rollouts(config)
    kept = keep_distinct_successes(records)
    rows = []
    for record in kept:
        messages = dialogue_of(record)
        tools = (record.llm_calls[-1].request.get("tools") or []) if record.llm_calls else []
        rows.append({"messages": shape_dialogue(messages, f"rollout {record.episode_id}"), "tools": json.dumps(tools)})
    if not rows:
        raise StageSkipped(
            f"skipped: no successful rollout (none of {len(records)} succeeded; see {config.output / 'rollouts.jsonl'})"
        )
    report = train_sft_rows(config, rows, "rft")
    report.extra |= {"rollouts": len(records), "kept": len(rows)}
    return report
