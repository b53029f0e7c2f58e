"""Hostile and honest agents, each once, on one generated product problem, against a test model server.

The judge's hostile-agent tests (tests/judge/test_hostile_*.py, test_redteam_*.py) all run the same way: every
agent of a module on the same problem, in the real sandbox, through the real runner with the validator's probe on,
against one OpenAI-compatible test app standing for the model. This is that run, written once.
"""

from __future__ import annotations

import asyncio
import re
import textwrap
from collections.abc import Collection
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from arena.generator.generate import GeneratorConfig, generate
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.shop.index import CatalogIndex
from arena.taskpack.build import build_catalog
from judge.rules import probe_plan

MODEL = "capable-model"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def chat_completion(body: dict[str, Any], answer: str) -> dict[str, Any]:
    """The test model's reply to a chat request: ``answer`` as choice 0, its completion tokens counted as words and
    marks, as a tokenizer would near enough."""
    tokens = len(_TOKEN.findall(answer))
    return {
        "id": "chatcmpl-capable",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": tokens, "total_tokens": 50 + tokens},
    }


def agent_source(folder: Path, name: str, prelude: str, body: str) -> AgentSource:
    """An agent file: ``prelude``, then ``agent_main(problem)`` running ``body``."""
    code = textwrap.indent(textwrap.dedent(body).strip(), "    ")
    path = folder / f"{name.replace('-', '_')}.py"
    path.write_text(prelude + "\n\ndef agent_main(problem):\n" + code + "\n")
    return AgentSource.from_path(path)


def run_agents(
    folder: Path, app: FastAPI, agents: dict[str, str], prelude: str, may_fail: Collection[str] = ()
) -> dict[str, EpisodeRecord]:
    """Each agent (name -> body) once on the same product problem; every record but ``may_fail``'s must have
    ended without an error or a validator fault."""
    build_catalog(folder / "catalog", synthetic=2000, seed=7)
    catalog = CatalogIndex(folder / "catalog")
    problem = [p for p in generate(catalog, GeneratorConfig(n=24, seed=7)).problems if p.intent == "product"][1]
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://capable/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=app)},
    )
    runner = EpisodeRunner(
        catalog, registry, RunnerConfig(limits=EpisodeLimits(wall_s=90), allowlist=[MODEL], probe=probe_plan)
    )
    sources = {name: agent_source(folder, name, prelude, body) for name, body in agents.items()}

    async def go() -> list[EpisodeRecord]:
        try:
            return await asyncio.gather(*(runner.run(sources[name], problem, MODEL) for name in agents))
        finally:
            await registry.aclose()

    found = {}
    for name, record in zip(agents, asyncio.run(go()), strict=True):
        if name not in may_fail:
            assert record.error is None and record.validator_fault is None, (name, record.error, record.stderr_tail)
        found[name] = record
    return found
