"""Issue 30, class 3 (``terminate`` ends the episode), round three: what an agent sends after its own
terminate, in the real bubblewrap sandbox through the real runner (agent:
tests/support/hostile_sandbox_agents/after_terminate.py).

- ``bloat``: model calls whose bodies are dear to parse, sent on four connections at once during the grace.
  Before terminate the proxy reads at most ``REFUSED_BODIES_READ`` bodies' worth of requests it refuses,
  then refuses unread (tests/arena/runner/test_hostile_variants.py); after terminate every body is parsed
  (``InferenceProxy.refuse_after_terminate`` outlines what was asked), on the event loop the validator's
  other episodes share, for as long as the grace lasts. Measured: the bodies read, the loop's stalls, and
  how long past its grace the agent was stopped;
- ``paths``: late tool and model calls by other spellings of the routes are refused or unknown, never
  executed or forwarded;
- ``in_flight``: a model call sent just before terminate (the upstream answers a second later) is answered
  during the grace and kept as an answered call;
- ``pipelined``: a recommend read right behind the terminate on one connection is refused: the answer is
  the one before terminate.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from arena.policy.server import create_policy_app
from arena.problems.official import parse_row
from arena.runner import budgets
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path

AGENT = Path(__file__).parents[2] / "support" / "hostile_sandbox_agents" / "after_terminate.py"
ANSWER, LATE = "1001", "2000"
# A small body bound, so the refused-bodies bound (4 bodies) is well under what the grace lets through.
LIMITS = EpisodeLimits(wall_s=40, cpu_s=40, memory_bytes=1024**3, llm_body_bytes=256 * 1024)
BODY = LIMITS.llm_body_bytes  # each a whole body's worth (about 87 k empty lists)
SPECS = {
    "bloat": {"way": "bloat", "body": BODY - 64, "threads": 4},
    "paths": {"way": "paths"},
    "pipelined": {"way": "pipelined"},
    "in_flight": {"way": "in_flight"},
}
MODEL = "heuristic-policy"
UPSTREAM_DELAY_S = 1.0

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def _problem(spec: dict):
    return parse_row({"query": json.dumps({**spec, "id": ANSWER}), "reward": {"product_id": ANSWER, "title": ["w"]}})


async def _watch_loop(stalls: list[float], stop: asyncio.Event) -> None:
    """How long the event loop was kept from this task: each wake-up later than asked is a stall."""
    while not stop.is_set():
        asked = time.perf_counter()
        await asyncio.sleep(0.01)
        late = time.perf_counter() - asked - 0.01
        if late > 0.05:
            stalls.append(late)


def _slow(app):
    """The policy server, a second slower to answer a chat call: a call sent before terminate is in flight."""

    async def slow(scope, receive, send):
        if scope["type"] == "http" and scope["path"].endswith("/chat/completions"):
            await asyncio.sleep(UPSTREAM_DELAY_S)
        await app(scope, receive, send)

    return slow


@pytest.fixture(scope="module")
def runs(catalog) -> dict:
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://policy/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=_slow(create_policy_app(seed=1)))},
    )
    runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=LIMITS, allowlist=[MODEL]))
    agent = AgentSource.from_path(AGENT)

    async def go() -> dict:
        out: dict = {}
        for way, spec in SPECS.items():  # one at a time: the stalls are this episode's
            stalls: list[float] = []
            stop = asyncio.Event()
            watcher = asyncio.create_task(_watch_loop(stalls, stop))
            cpu = time.process_time()
            out[way] = await runner.run(agent, _problem(spec), MODEL)
            out[f"{way}_cpu_s"] = time.process_time() - cpu
            stop.set()
            await watcher
            out[f"{way}_stalls"] = stalls
        await registry.aclose()
        return out

    return asyncio.run(go())


def _terminated_at(record: EpisodeRecord) -> float:
    return next(c.at_s for c in record.tool_calls if c.name == "terminate" and c.ok)


def _late_model_calls(record: EpisodeRecord) -> list:
    ended = _terminated_at(record)
    return [c for c in record.llm_calls if c.at_s >= ended]


def test_the_bloat_attack_ran_after_terminate(runs):
    record = runs["bloat"]
    assert "TERMINATED" in record.stdout_tail and record.termination is Termination.terminated, record.stdout_tail
    late = _late_model_calls(record)
    assert late and all(c.status_code == 409 for c in late), [(c.status_code, c.error) for c in late][:5]
    assert record.final_recommendation == [ANSWER]
    read = sum(1 for c in late if c.request and "keys" in c.request)
    print(
        f"bloat after terminate: {len(late)} late model calls, {read} bodies of {BODY >> 10} KiB parsed "
        f"({read * BODY / 2**20:.0f} MiB; bound before terminate {budgets.REFUSED_BODIES_READ * BODY / 2**20:.0f} "
        f"MiB); validator CPU {runs['bloat_cpu_s']:.2f} s (paths episode: {runs['paths_cpu_s']:.2f} s); "
        f"event-loop stalls {len(runs['bloat_stalls'])}, {sum(runs['bloat_stalls']):.2f} s, longest "
        f"{max(runs['bloat_stalls'], default=0):.2f} s; stopped {record.usage.wall_s - _terminated_at(record):.2f} s "
        f"after terminate (grace {LIMITS.terminate_grace_s:g} s)"
    )


def test_bodies_sent_after_terminate_are_read_no_more_than_refused_ones_before_it(runs):
    """Closed: model calls after terminate were parsed whole every time (6 MiB in 25 bodies against the 4 MiB
    read for refused calls before it); they share that allowance now (InferenceProxy.refuse_after_terminate)."""
    late = _late_model_calls(runs["bloat"])
    read_bytes = sum(BODY for c in late if c.request and "keys" in c.request)
    assert read_bytes <= budgets.REFUSED_BODIES_READ * LIMITS.llm_body_bytes, (len(late), read_bytes)


def test_late_calls_by_other_spellings_of_the_routes_change_nothing(runs):
    record = runs["paths"]
    lines = [line for line in record.stdout_tail.splitlines() if line.startswith("LATE")]
    assert len(lines) == 6, record.stdout_tail[-2000:]
    for line in lines:
        status = line.split()[2]
        assert status in ("404", "405", "409", "200"), line
        if status == "200":  # a tool route answers 200 with the refusal in its body
            assert "terminated" in line, line
    assert record.final_recommendation == [ANSWER]
    ended = _terminated_at(record)
    assert all(not c.ok for c in record.tool_calls if c.at_s >= ended and c.name != "terminate")
    assert all(c.status_code == 409 and c.response is None for c in _late_model_calls(record))


def test_a_recommend_pipelined_behind_terminate_is_refused(runs):
    record = runs["pipelined"]
    assert "LATE pipelined" in record.stdout_tail, record.stdout_tail[-2000:]
    assert record.final_recommendation == [ANSWER], (record.final_recommendation, record.stdout_tail[-1000:])
    after = [c for c in record.tool_calls if c.at_s >= _terminated_at(record) and c.name == "recommend_product"]
    assert after and all(c.refused == "terminated" for c in after), after
    assert record.termination is Termination.terminated


def test_a_model_call_made_before_terminate_keeps_its_answer(runs):
    """Decided, not a bypass: a call the agent made before its terminate is a call of the episode, and its answer
    (arriving in the grace) is kept and judged like any other. An agent that ignores the model's answer can do so
    before terminate just as well; what terminate ends is the agent's right to ask (calls arriving after it are
    refused, above)."""
    record = runs["in_flight"]
    assert "TERMINATED" in record.stdout_tail, record.stdout_tail[-1500:]
    ended = _terminated_at(record)
    late = [c for c in record.llm_calls if c.at_s + c.latency_ms / 1000 > ended and c.response is not None]
    assert late and all(c.at_s < ended for c in late), [(c.index, c.at_s, c.latency_ms, ended) for c in late]


def test_the_in_flight_call_was_sent_before_terminate(runs):
    """The variant above is what it says: one call, sent before terminate, answered after it."""
    record = runs["in_flight"]
    (call,) = record.llm_calls
    ended = _terminated_at(record)
    assert call.at_s < ended < call.at_s + call.latency_ms / 1000, (call.at_s, call.latency_ms, ended)
    print(
        f"in flight: sent {ended - call.at_s:.2f} s before terminate, answered {call.status_code} "
        f"{call.at_s + call.latency_ms / 1000 - ended:.2f} s after it; stdout {record.stdout_tail[-200:]!r}"
    )
