"""Issue 30, class 3: an agent that keeps running after its answer, in the real bubblewrap sandbox.

- ``terminate`` ends the episode: an agent that sleeps, spins or leaves a child and a thread behind
  after terminate is stopped ``terminate_grace_s`` later, not at the wall clock, and its record names
  the stop in ``limits_hit`` (``terminate_grace_s``) while its answer stands;
- model calls (plain and streamed) and tool calls made after terminate are refused, never forwarded,
  and kept in the record (status 409 ``episode_terminated`` / ``refused: "terminated"``) with when;
- a timeout never scores as a success, whatever it recommended: in the batch runner and through the
  one scoring function the race uses too.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import httpx
import pytest

from arena.policy.server import create_policy_app
from arena.problems.model import Problem
from arena.problems.official import parse_row
from arena.runner.accounting import TreeSample
from arena.runner.batch import run_batch
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig, classify
from arena.runner.process import ProcessResult, StopSwitch, run_process
from arena.runner.proxy import Upstream, UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord, Termination
from arena.runner.sandbox import bubblewrap_path
from arena.scoring.outcome import ScoreMode, score_problem
from arena.shop.tools import ShopEnvironment
from tests.arena.runner.test_hostile_integrity import Recorder

AGENT = Path(__file__).parents[2] / "support" / "hostile_sandbox_agents" / "lingerer.py"
MODEL = "heuristic-policy"
LIMITS = EpisodeLimits(wall_s=40, cpu_s=60, memory_bytes=1024**3)
SHORT = EpisodeLimits(wall_s=8, cpu_s=60, memory_bytes=1024**3)  # the timeout's episode: its wall clock is spent
LINGERING = ("sleep", "spin", "detach")

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def problem_for(way: str, product_id: str) -> Problem:
    # The reward's gold id is the one the agent recommends: the answer is right, only the ending differs.
    query = json.dumps({"way": way, "id": product_id})
    return parse_row({"query": query, "reward": {"product_id": product_id, "title": ["widget"]}})


@pytest.fixture(scope="module")
def world(catalog):
    product_id = str(ShopEnvironment(catalog).call("find_product", {"q": "widget", "page": 1}).result[0]["product_id"])
    policy = Recorder(create_policy_app(seed=1))
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://policy/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=policy)},
    )
    runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=LIMITS, allowlist=[MODEL]))
    short = EpisodeRunner(catalog, registry, RunnerConfig(limits=SHORT, allowlist=[MODEL]))
    agent = AgentSource.from_path(AGENT)
    problems = {way: problem_for(way, product_id) for way in (*LINGERING, "calls", "timeout")}

    async def go():
        try:
            *records, batch = await asyncio.gather(
                *(runner.run(agent, problems[way], MODEL) for way in (*LINGERING, "calls")),
                run_batch(short, agent, [problems["timeout"]], model=MODEL),
            )
            return dict(zip((*LINGERING, "calls"), records, strict=True)), batch
        finally:
            await registry.aclose()

    records, batch = asyncio.run(go())
    return {"records": records, "batch": batch, "problems": problems, "policy": policy, "catalog": catalog}


def terminate_at(record: EpisodeRecord) -> float:
    return next(c.at_s for c in record.tool_calls if c.name == "terminate" and c.ok)


@pytest.mark.parametrize("way", LINGERING)
def test_an_agent_that_lingers_after_terminate_is_stopped_after_the_grace(world, way: str) -> None:
    record = world["records"][way]
    assert "TERMINATED" in record.stdout_tail, record.stderr_tail
    # Stopped long before its wall clock (the bound is generous: the grace is 2 s).
    assert record.usage.wall_s < LIMITS.wall_s / 2, (way, record.usage.wall_s, record.termination)
    assert record.termination is Termination.terminated and record.terminate_status == "success"
    stop = {hit.limit: hit for hit in record.limits_hit}.get("terminate_grace_s")
    assert stop is not None, (way, record.limits_hit)
    assert stop.first_at_s >= terminate_at(record) + LIMITS.terminate_grace_s - 0.01
    assert "after its terminate" in stop.detail and record.validator_fault is None


def test_a_lingering_agents_answer_stands(world) -> None:
    # The answer was final at terminate; what ran after it only cost the grace, bounded, and gained nothing.
    from arena.runner.verdict import score_episode

    record = world["records"]["sleep"]
    outcome = score_episode(world["problems"]["sleep"], record, world["catalog"], ScoreMode.strict)
    assert outcome.success and outcome.failed_by is None


def test_model_and_tool_calls_after_terminate_are_refused_and_recorded(world) -> None:
    record = world["records"]["calls"]
    out = record.stdout_tail
    assert "BEFORE 200" in out, (out, record.stderr_tail)
    assert "MODEL 409" in out and "STREAM 409" in out and "episode_terminated" in out, out
    assert "TOOL the episode has terminated" in out and "RECOMMEND the episode has terminated" in out, out
    ended = terminate_at(record)
    # The model calls: one forwarded before terminate, the two after refused, with when and why.
    assert [c.status_code for c in record.llm_calls] == [200, 409, 409]
    for call in record.llm_calls[1:]:
        assert call.at_s >= ended and call.response is None and call.upstream_ms is None
        assert call.error == "the episode has terminated" and call.usage.total_tokens == 0
    assert record.llm_calls[2].stream
    # The tool calls: refused unexecuted, in outline, after terminate; the answer is the one before.
    after = [c for c in record.tool_calls if c.at_s >= ended and c.name != "terminate"]
    assert [(c.name, c.refused, c.ok) for c in after] == [
        ("find_product", "terminated", False),
        ("recommend_product", "terminated", False),
    ]
    assert record.final_recommendation == [world["problems"]["calls"].rewards[0].product_id]
    assert record.termination is Termination.terminated
    # Nothing after terminate reached the model server: one request per episode, the one before it.
    asked = [json.loads(body) for body in world["policy"].bodies]
    assert len(asked) == len(LINGERING) + 2, len(asked)


def test_a_timeout_never_scores_as_a_success(world) -> None:
    records, summary = world["batch"]
    (record,) = records
    problem = world["problems"]["timeout"]
    assert record.termination is Termination.timeout and record.limit_hit == "wall_clock"
    # The recommendation itself is right: only the ending makes it a failure.
    assert record.final_recommendation == [problem.rewards[0].product_id]
    assert score_problem(problem, record.final_recommendation, world["catalog"], mode=ScoreMode.strict).success
    assert record.outcome is not None and record.outcome["success"] is False
    assert summary.asr.asr == 0.0


@pytest.mark.parametrize("ending", [Termination.timeout, Termination.limit])
def test_the_race_scores_through_the_same_rule(world, ending: Termination) -> None:
    from arena.race import episode_jobs
    from arena.runner.verdict import score_episode

    assert episode_jobs.score_episode is score_episode  # the race's worker and the batch share one rule
    problem = world["problems"]["calls"]
    record = world["records"]["calls"].model_copy(update={"termination": ending})
    outcome = score_episode(problem, record, world["catalog"], ScoreMode.strict)
    assert outcome.answered and not outcome.success and outcome.failed_by == ending.value


# --- the parts, without the sandbox: the label and the switch ------------------------------------------


def _result(**kw) -> ProcessResult:
    base = dict(exit_code=None, signal=9, timed_out=False, output_exceeded=False, stdout_tail="", stderr_tail="",
                wall_s=1.0, agent_started=True)  # fmt: skip
    return ProcessResult(**(base | kw))


@pytest.mark.parametrize(
    ("result", "terminated", "expected"),
    [
        (_result(stopped=True), True, (Termination.terminated, None)),
        # many processes left behind at the stop: still the agent that outlived its terminate, not a limit
        (_result(stopped=True, peak=TreeSample(tasks=LIMITS.processes)), True, (Termination.terminated, None)),
        (_result(timed_out=True), True, (Termination.terminated, None)),  # the wall clock came before the grace
        (_result(timed_out=True), False, (Termination.timeout, "wall_clock")),
        (_result(stopped=True, output_exceeded=True), True, (Termination.limit, "output")),  # a bound it broke first
    ],
)  # fmt: skip
def test_an_agent_that_outlived_its_terminate_is_labelled_so(result, terminated, expected) -> None:
    termination, limit, error, fault = classify(result, terminated, LIMITS)
    assert (termination, limit) == expected and fault is None
    if expected[0] is Termination.terminated:
        assert error is not None and "after its terminate call" in error


def test_the_switch_stops_only_a_running_process() -> None:
    switch = StopSwitch()
    assert switch.stop() is False  # nothing started: nothing to stop
    stopper = threading.Timer(0.2, switch.stop)
    stopper.start()
    result = run_process(["sleep", "60"], wall_s=60, output_bytes=1024, switch=switch)
    stopper.join()
    assert result.stopped and not result.timed_out and result.signal == 9
    assert switch.stop() is False  # reaped: its pid may be another process's by now
