"""Hostile agents against the episode server, the tools and the proxy, each in the real
sandbox through the real runner, next to an honest episode.

For every class of attack: the bound that stopped it is named in the attacker's
record (``limits_hit``), the validator's memory stayed within ``MEMORY_BOUND``
(the runner process's peak RSS over the run of the pair), and the honest
neighbour's record equals that of a solo run. Each attack is sized just past the
test-sized bounds below; unbounded, the socket attacks would have held 40 MiB
and 30 MB, over twice ``MEMORY_BOUND``. ``benchmarks/hostile.py`` runs the same
agents at production bounds.
"""

from __future__ import annotations

import asyncio
import gc
import json
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

from arena.policy.server import create_policy_app
from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path
from arena.scoring.outcome import ScoreMode, score_problem
from tests.support.process_memory import reset_peak, status_bytes

AGENTS = Path(__file__).parents[2] / "support" / "hostile_server_agents"
MODEL = "heuristic-policy"
MIB = 1024**2

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")

LIMITS = EpisodeLimits(
    wall_s=30,
    connections=8,
    buffered_bytes=2 * MIB,
    unsent_bytes=256 * 1024,
    tool_body_bytes=16 * 1024,
    llm_body_bytes=1 * MIB,
    tool_calls=40,
    tool_ids=20,
    tool_result_bytes=2 * 1024,
    tool_record_bytes=24 * 1024,
    llm_calls_in_flight=4,
    prompt_tokens=12_000,
)
ATTACKS = {
    # 40 connections x (1 MiB - 1) of a model-call body that never completes.
    "socket_hoarder": {"connections": 40, "body": 1 * MIB, "hold_s": 0.8},
    # 10,000 pipelined GET /episode (~3 KB answers each), none read.
    "unread_pipeliner": {"requests": 10_000, "hold_s": 0.8},
    # 30 ids, a 500 KB body, an 18-id answer over 2 KiB, 30 searches, 40 calls after terminate
    # (half of them over the body limit).
    "tool_flood": {"ids": 30, "calls": 30},
    "raising_tools": {},
    # 7 concurrent calls (7 connections, the bound is 8) of 5,000 prompt tokens each: 35,000 against 12,000.
    "prompt_flood": {"calls": 7, "prompt_chars": 5000},
}
MEMORY_BOUND = 16 * MIB
EXPECTED_LIMITS = {
    "socket_hoarder": {"connections", "buffered_bytes"},
    "unread_pipeliner": {"unsent_bytes"},
    "tool_flood": {"tool_ids", "tool_body_bytes", "tool_result_bytes", "tool_record_bytes", "tool_calls"},
    "raising_tools": set(),
    "prompt_flood": {"prompt_tokens"},
}


class SlowUpstream:
    """The offline policy, answering after a pause: concurrent calls are all in flight together."""

    def __init__(self) -> None:
        self.app = create_policy_app(seed=1)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            await anyio.sleep(0.2)
        await self.app(scope, receive, send)


@dataclass
class Pair:
    attacker: EpisodeRecord
    neighbour: EpisodeRecord
    rss_growth: int


@pytest.fixture(scope="module")
def runs(catalog) -> tuple[EpisodeRecord, dict[str, Pair]]:
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://policy/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=SlowUpstream())},
    )
    runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=LIMITS, allowlist=[MODEL]))
    honest = AgentSource.from_path(AGENTS / "honest.py")
    honest_problem = parse_row({"query": "a red widget gadget", "reward": {"product_id": "1001", "title": ["widget"]}})

    def scored(record: EpisodeRecord) -> EpisodeRecord:
        # As the race scores an episode: the outcome of the last recommendation.
        outcome = score_problem(honest_problem, record.final_recommendation, catalog, mode=ScoreMode.strict)
        record.outcome = outcome.model_dump(mode="json")
        return record

    async def go() -> tuple[EpisodeRecord, dict[str, Pair]]:
        try:
            solo = scored(await runner.run(honest, honest_problem, MODEL))  # also warms the runner's caches
            pairs = {}
            for name, spec in ATTACKS.items():
                problem = parse_row({"query": json.dumps(spec), "reward": {"product_id": "1001", "title": ["w"]}})
                gc.collect()
                reset_peak()
                before = status_bytes("VmRSS")
                attacker, neighbour = await asyncio.gather(
                    runner.run(AgentSource.from_path(AGENTS / f"{name}.py"), problem, MODEL),
                    runner.run(honest, honest_problem, MODEL),
                )
                pairs[name] = Pair(attacker, scored(neighbour), status_bytes("VmHWM") - before)
            return solo, pairs
        finally:
            await registry.aclose()

    return asyncio.run(go())


def essence(record: EpisodeRecord) -> dict:
    """The deterministic parts of a record: what was called, answered and recommended, and how it ended."""
    return {
        "tool_calls": [(c.name, c.arguments, c.ok, c.result, c.error, c.notice, c.refused) for c in record.tool_calls],
        "llm_calls": [
            (c.status_code, c.request, {k: v for k, v in (c.response or {}).items() if k != "id"}, c.usage)
            for c in record.llm_calls
        ],
        "final_recommendation": record.final_recommendation,
        "terminate_status": record.terminate_status,
        "termination": record.termination,
        "outcome": record.outcome,
        "limits_hit": record.limits_hit,
        "stdout": record.stdout_tail,
    }


def test_the_honest_solo_run_is_what_it_should_be(runs) -> None:
    solo, _ = runs
    assert solo.termination is Termination.terminated, solo.stderr_tail
    assert [c.name for c in solo.tool_calls] == [
        "find_product",
        "view_product_information",
        "recommend_product",
        "terminate",
    ]
    assert [c.status_code for c in solo.llm_calls] == [200] and solo.limits_hit == []
    assert solo.outcome["answered"] and solo.final_recommendation


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_each_attack_is_bounded_named_and_leaves_its_neighbour_alone(runs, attack: str) -> None:
    solo, pairs = runs
    pair = pairs[attack]
    hit = {limit.limit for limit in pair.attacker.limits_hit}
    assert EXPECTED_LIMITS[attack] <= hit, (attack, pair.attacker.limits_hit, pair.attacker.stderr_tail)
    assert pair.attacker.validator_fault is None
    assert pair.rss_growth < MEMORY_BOUND, f"{attack}: the runner grew {pair.rss_growth / MIB:.1f} MiB"
    assert essence(pair.neighbour) == essence(solo), attack


def test_socket_hoarding_holds_at_most_the_bounds(runs) -> None:
    record = runs[1]["socket_hoarder"].attacker
    assert "IDLE 40" in record.stdout_tail and "HELD 40" in record.stdout_tail
    assert record.termination is Termination.terminated
    counts = {limit.limit: limit.count for limit in record.limits_hit}
    assert counts["connections"] >= 40 - LIMITS.connections
    assert [c.status_code for c in record.llm_calls] == []  # no body ever completed: nothing was forwarded


def test_tool_floods_are_refused_and_the_record_stays_small(runs) -> None:
    record = runs[1]["tool_flood"].attacker
    out = record.stdout_tail
    assert "IDS at most 20 product ids per call, got 30" in out and "BODY tool-call body over 16384 bytes" in out
    assert "ANSWER the answer is" in out and "TERMINATE ok" in out
    # Small or over the body limit alike, until the call limit: then only counted.
    assert "AFTER ['the episode has terminated', 'tool-call limit: 40 calls made']" in out
    assert len(record.tool_calls) == LIMITS.tool_calls
    refused = [c.refused for c in record.tool_calls]
    assert refused[:3] == ["tool_ids", "tool_body_bytes", "tool_result_bytes"] and "terminated" in refused
    assert sum(len(json.dumps(c.model_dump())) for c in record.tool_calls) < LIMITS.tool_record_bytes + 40 * 1024
    assert record.termination is Termination.terminated and record.terminate_status == "success"


def test_tool_arguments_that_once_raised_are_answered_and_recorded(runs) -> None:
    record = runs[1]["raising_tools"].attacker
    assert "STATUSES [200, 200, 200, 200, 200, 200, 200]" in record.stdout_tail, record.stdout_tail
    finds = [c for c in record.tool_calls if c.name == "find_product"]
    assert len(finds) == 7 and all(c.error or c.notice or c.ok for c in finds)
    assert finds[0].arguments == {"q": "widget", "page": "\u00b2"} and not finds[0].ok
    # The 5000-digit page is answered "outside 1-5" (here its echo is over the test's 2 KiB answer limit).
    assert "outside 1-5" in (finds[1].notice or "") or finds[1].refused == "tool_result_bytes"


def test_concurrent_prompts_never_outspend_the_prompt_budget(runs) -> None:
    record = runs[1]["prompt_flood"].attacker
    forwarded = [c for c in record.llm_calls if c.status_code == 200]
    assert 1 <= len(forwarded) < ATTACKS["prompt_flood"]["calls"]
    assert sum(c.usage.prompt_tokens for c in forwarded) <= LIMITS.prompt_tokens
    assert len(record.llm_calls) == ATTACKS["prompt_flood"]["calls"]  # refusals are recorded too
