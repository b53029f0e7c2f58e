"""The inference path from inside the real sandbox: the openai client through
the proxy to the built-in offline policy, recorded by the validator."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from arena.policy.server import create_policy_app
from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, Termination
from arena.runner.sandbox import bubblewrap_path

AGENTS = Path(__file__).parents[2] / "support" / "agents"
MODEL = "heuristic-policy"

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def run(catalog, agent: str, limits: EpisodeLimits) -> object:
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://policy/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=create_policy_app(seed=1))},
    )
    runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=limits, allowlist=[MODEL]))
    problem = parse_row({"query": "a red widget gadget", "reward": {"product_id": "1001", "title": ["widget"]}})

    async def go():
        try:
            return await runner.run(AgentSource.from_path(AGENTS / f"{agent}.py"), problem, MODEL)
        finally:
            await registry.aclose()

    return asyncio.run(go())


def test_openai_client_plain_and_streaming_through_the_proxy(catalog):
    record = run(catalog, "llm_user", EpisodeLimits(wall_s=60))
    assert record.termination is Termination.terminated, record.stderr_tail
    assert "FIRST find_product" in record.stdout_tail and "STREAMED ['" in record.stdout_tail
    assert [c.stream for c in record.llm_calls] == [False, True]
    for call in record.llm_calls:
        assert call.status_code == 200 and call.model == MODEL and call.upstream == MODEL
        assert call.usage.completion_tokens > 0 and call.response["tool_calls"]
        assert call.request["messages"] and call.request["tools"]
    # The tool call the model emitted is the one the agent executed, with its result.
    emitted = record.llm_calls[0].response["tool_calls"][0]["function"]["name"]
    assert record.tool_calls[0].name == emitted and record.tool_calls[0].ok


def test_llm_budget_holds_and_refusals_are_recorded(catalog):
    record = run(catalog, "budget_blower", EpisodeLimits(wall_s=60, llm_calls=3))
    assert "REFUSED (3, 'RateLimitError', 429)" in record.stdout_tail
    assert "OTHER MODEL 403" in record.stdout_tail
    statuses = [c.status_code for c in record.llm_calls]
    assert statuses[:3] == [200, 200, 200] and 429 in statuses and 403 in statuses
    assert sum(1 for c in record.llm_calls if c.status_code == 200) == 3
