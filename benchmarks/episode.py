"""Episode runner costs, measured against baselines in the same run.

    .venv/bin/python benchmarks/episode.py [--n 30] [--start-only]

1. Sandbox start to the agent's first tool call with every defence on, paired and
   interleaved round by round against a bare `python -c pass`, the same sandbox
   running `python -c pass` (defences on and off) and the episode with the defences
   off; medians, p90 and the load average, then where each millisecond of the start
   goes (the record's start milestones, see arena.runner.episode.start_phases).
   Targets: p50 within 1.5x the bare python, the defences under 10% of the start.
2. Runner overhead of a 30-step episode against an upstream that answers in
   50 ms: step time minus the upstream's own time (clocked inside the upstream
   app, from the request's arrival to its last byte sent) and the tools' own
   work, as a share of the step time (target < 5%). Everything else is the
   runner's: the socket server, the proxy's admission and recording, and its
   HTTP client hop to the upstream. The figure with the upstream's time as the
   proxy measures it (``LLMCallRecord.upstream_ms``, request sent to last byte
   received, so the client hop counts as upstream) is printed alongside.
3. 8 concurrent episodes on this machine: all finish without error.
4. The sandbox's defences (syscall filter, bounded /tmp, /proc masks, the CPU
   monitor, boot's status channel) on and off (``RunnerConfig.defences``, a
   benchmark-only switch), interleaved: the sandbox start, the whole episode's
   wall time and the 30-step runner overhead (target: start and wall within 10%).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
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
from arena.runner.launch import SandboxLaunch  # noqa: E402
from arena.runner.proxy import Upstream, UpstreamRegistry  # noqa: E402
from arena.runner.record import EpisodeLimits  # noqa: E402
from arena.shop.index import CatalogIndex  # noqa: E402
from arena.taskpack.build import build_catalog  # noqa: E402

AGENTS = Path(__file__).parent / "agents"
LATENCY_S = 0.05


class ClockedUpstream:
    """The benchmark's model server: answers a tool call after LATENCY_S, and clocks its
    own time per request so the runner's overhead is not measured by the runner."""

    def __init__(self) -> None:
        self.durations_s: list[float] = []

        async def completions(request: Request) -> JSONResponse:
            await asyncio.sleep(LATENCY_S)
            call = {"id": "call_1", "type": "function",
                    "function": {"name": "find_product", "arguments": '{"q": "shirt", "page": 1}'}}  # fmt: skip
            return JSONResponse({
                "id": "x", "object": "chat.completion", "created": 0, "model": "bench",
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                             "message": {"role": "assistant", "content": "search", "tool_calls": [call]}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            })  # fmt: skip

        self.app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])

    async def __call__(self, scope, receive, send) -> None:
        started = time.perf_counter()

        async def clocked_send(message) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.durations_s.append(time.perf_counter() - started)

        await self.app(scope, receive, clocked_send)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def bare_python(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True)
    return (time.perf_counter() - started) * 1000


def sandboxed_pass(runner: EpisodeRunner) -> float:
    """The episode's own sandbox (its launch: cgroups, uid, filter, mounts, setpriv) running
    `python -I -S -B -c pass` instead of boot: the sandbox and interpreter, no SDK, no socket."""
    workdir = Path(tempfile.mkdtemp(prefix="bench-pass-"))
    (workdir / "agent").mkdir()
    (workdir / "arena.sock").touch()
    started = time.perf_counter()
    launch = SandboxLaunch(
        limits=runner.config.limits, runtime=runner.runtime, workdir=workdir, agent_dir=workdir / "agent",
        socket_path=workdir / "arena.sock", sandbox=True, defences=runner.config.defences,
        syscall_filter=runner.syscall_filter,
    )  # fmt: skip
    try:
        python = launch.argv.index("/opt/python/bin/python3", launch.argv.index("--"))
        launch.argv = [*launch.argv[: python + 1], "-I", "-S", "-B", "-c", "pass"]
        result = launch.run()
        assert result.exit_code == 0, result.stderr_tail
        return (time.perf_counter() - started) * 1000
    finally:
        launch.close()
        subprocess.run(["rm", "-rf", str(workdir)], check=False)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# The record's start milestones (ms from the launch's first step), in order, and what each step covers.
PHASES = (
    ("launch_prepared_ms", "launch prepared: cgroups (CPU, memory) made, uid leased, argv, filter descriptor"),
    ("sandbox_spawned_ms", "spawned: the helper's (prepared) process: /tmp mount, rlimits, exec of bubblewrap"),
    ("boot_started_ms", "boot's first line: namespaces, mounts, seccomp load, setpriv, interpreter start"),
    ("episode_asked_ms", "boot asked for the episode: SDK import, first connection, round trip"),
    ("start_to_first_tool_call_ms", "first tool call arrived: agent file compiled and run, its request"),
)


async def start_breakdown(catalog, registry, problem, n: int) -> None:
    limits = EpisodeLimits(wall_s=120)
    runners = {
        on: EpisodeRunner(catalog, registry, RunnerConfig(limits=limits, allowlist=["bench"], defences=on))
        for on in (True, False)
    }
    first = AgentSource.from_path(AGENTS / "first_call.py")
    bare, isolated = [sys.executable, "-c", "pass"], [sys.executable, "-I", "-S", "-B", "-c", "pass"]
    for on in (True, False):  # warm: the library tree, the page cache
        await runners[on].run(first, problem, "bench")
    series: dict[str, list[float]] = {name: [] for name in (
        "episode, defences on", "episode, defences off", "sandbox `python -I -S -B -c pass`, defences on",
        "sandbox `python -I -S -B -c pass`, defences off", "bare `python -c pass`", "bare `python -I -S -B -c pass`",
    )}  # fmt: skip
    phases: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    load_before = loadavg()
    for _ in range(n):  # interleaved, round by round: the machine's load falls on all alike
        for on in (True, False):
            record = await runners[on].run(first, problem, "bench")
            assert record.termination.value == "terminated", record.stderr_tail
            series[f"episode, defences {'on' if on else 'off'}"].append(record.timings["start_to_first_tool_call_ms"])
            for name, _ in PHASES:
                if name in record.timings:
                    phases[on].setdefault(name, []).append(record.timings[name])
            series[f"sandbox `python -I -S -B -c pass`, defences {'on' if on else 'off'}"].append(
                await asyncio.to_thread(sandboxed_pass, runners[on])
            )
        series["bare `python -c pass`"].append(await asyncio.to_thread(bare_python, bare))
        series["bare `python -I -S -B -c pass`"].append(await asyncio.to_thread(bare_python, isolated))
    load_after = loadavg()
    print(
        f"machine: {platform.node()}, {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(f"load average before {load_before}, after {load_after}; n={n} rounds, interleaved")
    bare50 = statistics.median(series["bare `python -c pass`"])
    print(f"  {'':52s} {'p50':>7s} {'p90':>7s} {'min':>7s} {'x bare p50':>10s}")
    for name, values in series.items():
        med = statistics.median(values)
        print(f"  {name:52s} {med:7.1f} {pct(values, 0.9):7.1f} {min(values):7.1f} {med / bare50:9.2f}x")
    on, off = series["episode, defences on"], series["episode, defences off"]
    paired = statistics.median(a - b for a, b in zip(on, off, strict=True))
    on50 = statistics.median(on)
    print(
        f"start to first tool call, defences on: p50 {on50:.1f} ms = {on50 / bare50:.2f}x bare python (target <= 1.5x)"
    )
    print(
        f"defences' cost, paired median of on - off: {paired:+.1f} ms = {paired / on50:.1%} of the start (target < 10%)"
    )
    print("where the start goes (median ms of each step; steps' medians need not add up to the total's):")
    print(f"  {'step':98s} {'on':>6s} {'off':>6s}")
    for index, (name, what) in enumerate(PHASES):
        step = {}
        for flag in (True, False):
            marks = phases[flag]
            if name not in marks or (index and PHASES[index - 1][0] not in marks):
                step[flag] = float("nan")
                continue
            before = marks[PHASES[index - 1][0]] if index else [0.0] * len(marks[name])
            step[flag] = statistics.median(b - a for a, b in zip(before, marks[name], strict=True))
        print(f"  {what:98s} {step[True]:6.1f} {step[False]:6.1f}")


async def main_async(n: int, start_only: bool = False) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-episode-"))
    build_catalog(workdir / "catalog", synthetic=2000, seed=1)
    catalog = CatalogIndex(workdir / "catalog")
    upstream = ClockedUpstream()
    registry = UpstreamRegistry(
        [Upstream(name="bench", base_url="http://bench/v1", models=["bench"])],
        transports={"bench": httpx.ASGITransport(app=upstream)},
    )
    problem = parse_row({"query": "cotton shirt", "reward": {"product_id": "1", "title": ["x"]}})
    await start_breakdown(catalog, registry, problem, n)
    if start_only:
        await registry.aclose()
        return
    runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=EpisodeLimits(wall_s=120), allowlist=["bench"]))
    for label, agent_file in (("stdlib HTTP client", "thirty_steps_raw.py"), ("openai SDK client", "thirty_steps.py")):
        steps = AgentSource.from_path(AGENTS / agent_file)
        overheads, by_proxy, startups = [], [], []
        for _ in range(3):
            upstream.durations_s.clear()
            record = await runner.run(steps, problem, "bench")
            assert len(record.llm_calls) == 30 and len(record.tool_calls) == 31, record.stderr_tail
            assert len(upstream.durations_s) == 30  # one upstream request per call, in order
            calls, tools = record.llm_calls, record.tool_calls
            # Steady state, step to step: the agent's own start (imports) is its cost, not the runner's.
            step = calls[-1].at_s - calls[0].at_s
            tool_work = sum(t.duration_ms for t in tools[:29]) / 1000
            overheads.append((step - sum(upstream.durations_s[:29]) - tool_work) / step)
            by_proxy.append((step - sum(c.upstream_ms for c in calls[:-1]) / 1000 - tool_work) / step)
            startups.append(calls[0].at_s)
        print(f"30-step episode, 50 ms upstream, agent with the {label}: wall {record.usage.wall_s:.2f} s, "
              f"first LLM call at {statistics.median(startups):.2f} s; overhead per step "
              f"{statistics.median(overheads):.1%} of step time (median of 3; target < 5%; "
              f"{statistics.median(by_proxy):.1%} with the upstream time the proxy measured)")  # fmt: skip
    print("  (overhead = step time minus the upstream's own time, clocked inside it, and the tools' own execution;")
    print("   with the stdlib client it is the runner's alone, with the SDK it includes the SDK's own work)")

    started = time.perf_counter()
    records = await asyncio.gather(*(runner.run(steps, problem, "bench") for _ in range(8)))
    wall = time.perf_counter() - started
    bad = [r.termination for r in records if r.termination.value != "terminated"]
    print(f"8 concurrent 30-step episodes: {wall:.1f} s wall, {len(records) - len(bad)}/8 terminated normally"
          + (f", others: {bad}" if bad else ""))  # fmt: skip
    await defences_on_and_off(catalog, registry, problem, n)
    await registry.aclose()


async def defences_on_and_off(catalog, registry, problem, n: int) -> None:
    limits = EpisodeLimits(wall_s=120)
    runners = {
        on: EpisodeRunner(catalog, registry, RunnerConfig(limits=limits, allowlist=["bench"], defences=on))
        for on in (True, False)
    }
    first = AgentSource.from_path(AGENTS / "first_call.py")
    steps = AgentSource.from_path(AGENTS / "thirty_steps_raw.py")
    starts: dict[bool, list[float]] = {True: [], False: []}
    walls: dict[bool, list[float]] = {True: [], False: []}
    overheads: dict[bool, list[float]] = {True: [], False: []}
    for on in (True, False):
        await runners[on].run(first, problem, "bench")  # warm
    for _ in range(n):
        for on in (True, False):  # interleaved: the machine's load falls on both alike
            record = await runners[on].run(first, problem, "bench")
            starts[on].append(record.timings["start_to_first_tool_call_ms"])
            walls[on].append(record.usage.wall_s * 1000)
    for _ in range(3):
        for on in (True, False):
            record = await runners[on].run(steps, problem, "bench")
            calls = record.llm_calls
            step = calls[-1].at_s - calls[0].at_s
            tool_work = sum(t.duration_ms for t in record.tool_calls[:29]) / 1000
            overheads[on].append((step - sum(c.upstream_ms for c in calls[:-1]) / 1000 - tool_work) / step)
    for label, figures in (("sandbox start -> first tool call", starts), ("whole episode wall", walls)):
        on, off = pct(figures[True], 0.5), pct(figures[False], 0.5)
        # Paired by round (each round runs both back to back): the median of the differences
        # is the least disturbed by a busy machine; the minimum shows the cost without noise.
        paired = statistics.median(a - b for a, b in zip(figures[True], figures[False], strict=True))
        best_on, best_off = min(figures[True]), min(figures[False])
        print(f"defences on/off, {label}: p50 {on:.1f} vs {off:.1f} ms ({(on - off) / off:+.1%}), "
              f"paired median {paired:+.1f} ms ({paired / off:+.1%}), "
              f"best {best_on:.1f} vs {best_off:.1f} ms ({(best_on - best_off) / best_off:+.1%}); target < 10%")  # fmt: skip
    on, off = statistics.median(overheads[True]), statistics.median(overheads[False])
    print(f"defences on/off, 30-step runner overhead: {on:.1%} vs {off:.1%} of step time "
          f"({(on - off) * 100:+.1f} points)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--start-only", action="store_true", help="only part 1, the sandbox start")
    args = parser.parse_args()
    asyncio.run(main_async(args.n, args.start_only))


if __name__ == "__main__":
    main()
