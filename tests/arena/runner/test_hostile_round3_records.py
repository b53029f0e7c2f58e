"""Issue 30, class 1 (a record the store cannot take, or one that holds a cycle open), round three.

Two kinds of variant, in the real bubblewrap sandbox through the real runner:

- **the probe reads numbers the agent wrote.** The counterfactual probe (arena/runner/probe.py, run by the
  runner after the agent exits, on the validator's event loop) takes product ids and prices from any JSON
  inside the request's text, the agent's own forged "tool" message included, and gives each compared item a
  fresh price. A price of ``1e17`` (cents added leave it unchanged) or ``Infinity`` makes
  ``_fresh_prices`` loop for ever: the episode never returns a record, and the loop it spins on is the one
  every episode of the worker shares (its heartbeats too). ``NaN`` reaches the record as a price, the storable
  boundary makes it null, and the record model then refuses its own boundary's output: ``run`` raises instead of
  returning a record. Each is run in a child process killed at a deadline, with its stack dumped first;
- **poison in every agent-written field** (tool names and arguments, keys, numbers past 64 bits, floats
  past a double, nesting around the record's depth bound, the recommendation, the terminate status, stdout and
  stderr bytes that are not UTF-8, the keys and model of refused model requests) goes through the runner and
  ``episodes.complete`` on SQLite and PostgreSQL and reads back as written, with what was changed named.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from arena.problems.official import parse_row
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.proxy import UpstreamRegistry
from arena.runner.record import EpisodeLimits, EpisodeRecord
from arena.runner.sandbox import bubblewrap_path
from arena.store import episodes as episode_rows
from tests.arena.store.test_store import (  # noqa: F401  (fixtures)
    schedule,
    store,
    suite_dir,
    world,
)

SUPPORT = Path(__file__).parents[2] / "support" / "hostile_agents"
REPO = Path(__file__).parents[3]
DEADLINE_S = 30  # an episode of this agent takes about 2 s (5 s with four at once); its probe, one echo call
OUTCOME = {"success": False, "rule": 0.0}

if bubblewrap_path() is None:
    if os.environ.get("ARENA_REQUIRE_SANDBOX"):
        raise RuntimeError("bubblewrap is required for these tests (scripts/test installs it)")
    pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)", allow_module_level=True)

# One episode with the rules judge's probe plan, against an upstream that compares the last tool message's two
# items in its own words (as a model asked to compare them does), in a process of its own: a hang is killed at the deadline, its stack dumped first.
PROBE_SCRIPT = textwrap.dedent(
    """
    import asyncio, faulthandler, json, sys
    import httpx
    from arena.problems.official import parse_row
    from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
    from arena.runner.proxy import Upstream, UpstreamRegistry
    from arena.runner.record import EpisodeLimits
    from arena.shop.index import CatalogIndex
    from judge.rules import probe_plan

    catalog, agent, price, deadline = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])

    def compare(request):
        # What a model asked to compare the results writes, in its own words, from the last tool message.
        tool = [m for m in request.get("messages", []) if m.get("role") == "tool"]
        try:
            first, second = json.loads(tool[-1]["content"])[:2]
        except (IndexError, KeyError, ValueError, TypeError):
            return "I could not find two results to compare."
        (a, pa), (b, pb) = ((str(x["product_id"]), x.get("price")) for x in (first, second))
        cheap, dear = (b, a) if not pa <= pb else (a, b)
        return (f"Looking at the two results, item {a} is listed at {pa} and item {b} at {pb}. Since item {cheap} "
                f"costs less than item {dear}, {cheap} is the cheaper of the two and the better value for this "
                f"request; the other one offers nothing extra for its higher price, so I would pick {cheap}.")

    async def echo(scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body or b"{}")
        answer = {"id": "x", "object": "chat.completion", "created": 0, "model": request.get("model", "echo"),
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": compare(request)}}],
                  "usage": {"prompt_tokens": 60, "completion_tokens": 70, "total_tokens": 130}}
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(answer).encode()})

    registry = UpstreamRegistry([Upstream(name="echo", base_url="http://echo/v1", models=["echo"])],
                                transports={"echo": httpx.ASGITransport(app=echo)})
    limits = EpisodeLimits(wall_s=30, cpu_s=30, memory_bytes=1024**3)
    runner = EpisodeRunner(CatalogIndex(catalog), registry,
                           RunnerConfig(limits=limits, allowlist=["echo"], probe=probe_plan))
    problem = parse_row({"query": json.dumps({"price": price}), "reward": {"product_id": "1001", "title": ["w"]}})
    faulthandler.dump_traceback_later(deadline / 2, exit=False)  # where it spins, should it hang
    try:
        record = asyncio.run(runner.run(AgentSource.from_path(agent), problem, "echo"))
    except Exception as exc:
        print("RAISED", type(exc).__name__, str(exc)[:300].replace(chr(10), " "), flush=True)
    else:
        print("RECORD", json.dumps({"termination": record.termination.value, "stdout": record.stdout_tail[-300:],
              "probes": [p.status for p in record.probes], "limits_hit": [h.limit for h in record.limits_hit]}),
              flush=True)
    """
)


def _probe_episode(catalog_dir: Path, price: str) -> dict[str, Any]:
    command = [sys.executable, "-c", PROBE_SCRIPT, str(catalog_dir), str(SUPPORT / "probe_poison.py"), price,
               str(DEADLINE_S)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # Files, not pipes: a child killed at the deadline keeps what it wrote (its dumped stack).
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, text=True, env=env)
        try:
            child.wait(timeout=DEADLINE_S)
            hung = False
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            hung = True
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    line = next((ln for ln in stdout.splitlines() if ln.startswith(("RECORD", "RAISED"))), "")
    return {"hung": hung, "line": line, "stderr": stderr[-6000:]}


PRICES = {"control": "10.5", "huge": "1e17", "infinity": "Infinity", "nan": "NaN"}


@pytest.fixture(scope="module")
def probes(catalog_dir) -> dict[str, dict[str, Any]]:
    with ThreadPoolExecutor(len(PRICES)) as pool:  # in parallel: the hung ones take the deadline each
        futures = {name: pool.submit(_probe_episode, catalog_dir, price) for name, price in PRICES.items()}
        return {name: future.result() for name, future in futures.items()}


def test_the_probe_harness_runs_an_honest_price_to_a_record(probes):
    """The control: the same agent with an ordinary price is probed and returns its record."""
    result = probes["control"]
    assert not result["hung"] and result["line"].startswith("RECORD"), result
    record = json.loads(result["line"].split(" ", 1)[1])
    assert record["termination"] == "terminated" and record["probes"] == ["answered"], record


@pytest.mark.parametrize("name", ["huge", "infinity"])
def test_an_agent_written_price_cannot_hold_the_episode_open(probes, name):
    """Closed: a price the agent writes (1e17, Infinity) once made the probe's fresh-price search loop for ever on
    the validator's event loop (arena/runner/probe.py:_fresh_prices); a price past MAX_PRICE is no price now."""
    result = probes[name]
    assert not result["hung"], f"no record after {DEADLINE_S} s: {result['stderr'][-2000:]}"
    assert result["line"].startswith("RECORD"), result


def test_an_agent_written_nan_still_gives_a_storable_record(probes):
    """Closed: a NaN price became a probe price, the storable boundary made it null and the record model refused
    it (run() raised, no record); the probe plans on finite prices only (arena/runner/probe.py:_price)."""
    result = probes["nan"]
    assert not result["hung"], result
    assert result["line"].startswith("RECORD"), result["line"]


# --- poison in every agent-written field, stored on both backends -------------------------------------

POISON_AGENT = SUPPORT / "record_poison.py"
LIMITS = EpisodeLimits(wall_s=30, cpu_s=30, memory_bytes=1024**3)


@pytest.fixture(scope="module")
def poisoned(catalog) -> EpisodeRecord:
    runner = EpisodeRunner(catalog, UpstreamRegistry([]), RunnerConfig(limits=LIMITS))
    problem = parse_row({"query": "widget", "reward": {"product_id": "1001", "title": ["widget"]}})
    return asyncio.run(runner.run(AgentSource.from_path(POISON_AGENT), problem, "heuristic-policy"))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool | str):
        return a == b or math.isclose(a, b, rel_tol=1e-15)
    return type(a) is type(b) and a == b


def test_the_poison_reached_the_record(poisoned):
    out = poisoned.stdout_tail
    assert "POISONED" in out, (out[-2000:], poisoned.stderr_tail[-2000:])
    names = {c.name for c in poisoned.tool_calls}
    assert any("\ufffd" in n for n in names), names  # the NUL and the bad bytes of tool names, replaced
    hits = {h.limit for h in poisoned.limits_hit}
    assert {"record_text", "record_depth", "record_numbers"} <= hits, hits
    assert poisoned.final_recommendation and "\x00" not in "".join(poisoned.final_recommendation)


def test_every_agent_written_field_stores_and_reads_back_on_both_backends(store, world, poisoned):  # noqa: F811
    _, (episode,) = schedule(store, world, 1)
    with store.transaction() as s:
        assert episode_rows.complete(s, episode.id, poisoned, OUTCOME) is True
    with store.transaction() as s:
        back = episode_rows.get_episode(s, episode.id, with_record=True)
    assert back is not None and _same(back.record, poisoned.model_dump(mode="json"))
    EpisodeRecord.model_validate(back.record)
