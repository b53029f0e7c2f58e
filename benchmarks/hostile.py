"""Hostile agents against the episode server, tools and proxy, at production bounds.

    .venv/bin/python benchmarks/hostile.py [--server-only]

(then the sandbox classes of benchmarks/hostile_sandbox.py, in the same run)

Each class of attack (the agents of tests/support/hostile_server_agents, sized as the
issue measured them on main) runs in the real sandbox next to an honest episode,
one class at a time, with the default ``EpisodeLimits``. Printed per class: the
attacker's effect (the runner's peak RSS growth, the longest stall of the shared
event loop, bytes kept in the record, prompt tokens forwarded) next to the bound
that held it, the limits the record names, and whether the honest neighbour's
record equals its solo run. Memory is the runner process's own (VmHWM, reset
before each class); the stall is the worst lateness of a 5 ms timer on the loop
every episode shares (a garbage-collector pass stops the whole process, whoever
made the garbage, so the longest one is printed beside it). Figures on a busy
shared machine are noisy: the bounds, not the timings, are the point.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.problems.official import parse_row  # noqa: E402
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig  # noqa: E402
from arena.runner.proxy import Upstream, UpstreamRegistry  # noqa: E402
from arena.runner.record import EpisodeLimits, EpisodeRecord  # noqa: E402
from arena.shop.index import CatalogIndex  # noqa: E402
from arena.taskpack.build import build_catalog  # noqa: E402
from tests.support.process_memory import reset_peak, status_bytes  # noqa: E402

AGENTS = REPO / "tests" / "support" / "hostile_server_agents"
MODEL = "heuristic-policy"
MIB = 1024**2
LIMITS = EpisodeLimits()  # production bounds

# The attacks as the issue measured them on main (the agent's own RLIMIT_NOFILE, 256, caps the connections).
ATTACKS = {
    "socket memory": ("socket_hoarder", {"connections": 240, "body": 4 * MIB, "hold_s": 2.0}),
    "unread answers": ("unread_pipeliner", {"requests": 100_000, "hold_s": 2.0}),
    "tool calls": ("tool_flood", {"ids": 100_000, "calls": 400, "view_ids": 50, "q": "shirt"}),
    "raising tools": ("raising_tools", {}),
    "prompt tokens": ("prompt_flood", {"calls": 40, "prompt_chars": 40_000}),
}


class SlowUpstream:
    """The model server: answers after 200 ms (so concurrent calls are in flight together) and
    reports a prompt token a character, as a byte-level tokenizer would for a prompt of commas.
    Out of process in production; here its own work is kept to a JSON parse, so the loop's
    stalls are the runner's."""

    def __init__(self) -> None:
        async def completions(request: Request) -> JSONResponse:
            body = await request.json()
            await asyncio.sleep(0.2)
            prompt = sum(len(str(m.get("content") or "")) for m in body["messages"])
            message = {"role": "assistant", "content": f"{len(body['messages'])} messages"}
            return JSONResponse({
                "id": "x", "object": "chat.completion", "created": 0, "model": MODEL,
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3},
            })  # fmt: skip

        self.app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


class GcPauses:
    """The longest garbage-collector pass: it stops every thread of the process, so it shows
    in the loop's stall whoever made the garbage (a big record is many objects to scan)."""

    def __init__(self) -> None:
        self.worst, self._started = 0.0, 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.worst = max(self.worst, time.perf_counter() - self._started)


async def loop_stall(stop: asyncio.Event, worst: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(0.005)
        worst[0] = max(worst[0], time.perf_counter() - started - 0.005)


def essence(record: EpisodeRecord) -> tuple:
    return (
        [(c.name, c.arguments, c.ok, c.result, c.error, c.refused) for c in record.tool_calls],
        [(c.status_code, {k: v for k, v in (c.response or {}).items() if k != "id"}) for c in record.llm_calls],
        record.final_recommendation,
        record.termination,
        record.stdout_tail,
    )


def effect(name: str, record: EpisodeRecord) -> str:
    tool_bytes = sum(len(json.dumps(c.model_dump())) for c in record.tool_calls)
    forwarded = [c for c in record.llm_calls if c.status_code == 200]
    if name == "prompt tokens":
        tokens = sum(c.usage.prompt_tokens for c in forwarded)
        asked = ATTACKS[name][1]["calls"] * ATTACKS[name][1]["prompt_chars"]
        return (
            f"prompt tokens forwarded {tokens:,} of {asked:,} asked in {len(forwarded)} calls "
            f"(bound: prompt_tokens {LIMITS.prompt_tokens:,}, llm_calls_in_flight {LIMITS.llm_calls_in_flight})"
        )
    if name in ("tool calls", "raising tools"):
        return (
            f"{len(record.tool_calls)} tool calls recorded, {tool_bytes / MIB:.2f} MiB "
            f"(bounds: tool_calls {LIMITS.tool_calls}, tool_record_bytes {LIMITS.tool_record_bytes / MIB:.0f} MiB, "
            f"tool_ids {LIMITS.tool_ids}, tool_body_bytes {LIMITS.tool_body_bytes // 1024} KiB)"
        )
    if name == "socket memory":
        return (
            f"bounds: connections {LIMITS.connections}, buffered_bytes {LIMITS.buffered_bytes / MIB:.0f} MiB, "
            f"llm_body_bytes {LIMITS.llm_body_bytes / MIB:.0f} MiB"
        )
    return f"bound: unsent_bytes {LIMITS.unsent_bytes / MIB:.0f} MiB over the episode's connections"


async def main_async() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    build_catalog(workdir / "catalog", synthetic=2000, seed=1)
    catalog = CatalogIndex(workdir / "catalog")
    registry = UpstreamRegistry(
        [Upstream(name=MODEL, base_url="http://policy/v1", models=[MODEL])],
        transports={MODEL: httpx.ASGITransport(app=SlowUpstream().app)},
    )
    runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=LIMITS, allowlist=[MODEL]))
    honest = AgentSource.from_path(AGENTS / "honest.py")
    honest_problem = parse_row({"query": "cotton shirt", "reward": {"product_id": "1", "title": ["x"]}})
    solo = await runner.run(honest, honest_problem, MODEL)
    print(f"honest solo run: {solo.termination.value}, {len(solo.tool_calls)} tool calls, {solo.usage.wall_s:.2f} s")
    print("issue's figures on main: socket 139 -> 1,743 MB RSS; unread answers 117 -> 366 MB; a 100,000-id view")
    print("72.8 MB in 8.2 s, other episodes frozen 19.6 s; 1,000,300 prompt tokens forwarded against 400,000\n")
    pauses = GcPauses()
    for name, (agent, spec) in ATTACKS.items():
        problem = parse_row({"query": json.dumps(spec), "reward": {"product_id": "1", "title": ["x"]}})
        gc.collect()
        pauses.worst = 0.0  # after our own collection: only those during the pair count
        reset_peak()
        before = status_bytes("VmRSS")
        stop, worst = asyncio.Event(), [0.0]
        watcher = asyncio.create_task(loop_stall(stop, worst))
        started = time.perf_counter()
        attacker, neighbour = await asyncio.gather(
            runner.run(AgentSource.from_path(AGENTS / f"{agent}.py"), problem, MODEL),
            runner.run(honest, honest_problem, MODEL),
        )
        wall = time.perf_counter() - started
        stop.set()
        await watcher
        growth = status_bytes("VmHWM") - before
        hits = ", ".join(f"{h.limit} x{h.count}" for h in attacker.limits_hit) or "none"
        same = "equal" if essence(neighbour) == essence(solo) else "DIFFERENT"
        print(
            f"{name}: runner RSS +{growth / MIB:.1f} MiB, event-loop stall max {worst[0] * 1000:.1f} ms "
            f"(of which a GC pass {pauses.worst * 1000:.1f} ms), {wall:.1f} s for the pair"
        )
        print(f"  {effect(name, attacker)}")
        print(f"  limits named in the record: {hits}; attacker ended {attacker.termination.value}")
        print(f"  honest neighbour vs its solo run: {same}")
        if name == "raising tools":
            print(f"  agent saw: {attacker.stdout_tail.strip().splitlines()[0]}")
    await registry.aclose()


def main() -> None:
    """Every class of issue 14 in one run: the server, tool and proxy attacks here, then the sandbox's
    (benchmarks/hostile_sandbox.py: /tmp, CPU, kernel calls, /proc), each next to its bound."""
    asyncio.run(main_async())
    if "--server-only" not in sys.argv:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import hostile_sandbox

        print("\n== the sandbox's bounds (benchmarks/hostile_sandbox.py) ==")
        hostile_sandbox.main()


if __name__ == "__main__":
    main()
