"""What the counterfactual probe and the provenance check cost per judged episode, paired in one run.

    .venv/bin/python benchmarks/probe.py [--problems 12] [--rounds 2]

The reference ``tool_calling`` agent (heuristic policy) runs each generated problem twice per round, in
the real sandbox, once with the probe on (``RunnerConfig.probe = judge.rules.probe_plan``) and once off,
interleaved. Reported:

1. the probe's upstream cost per episode: probes sent, requests, prompt and completion tokens, against
   the episode's own inference calls and tokens;
2. the wall time it adds to an episode (``timings.probe_ms``, after the agent exited), and the episode's
   wall time on and off (paired medians);
3. the rules judge's time per episode with and without the new checks (provenance, reading the probes and
   the cipher readings of the agent's text, judge.ciphers), on the same records, paired;
4. the levels and the ASR: the same with the probe on as off (the honest agent keeps both);
5. every reference agent (search_loop, shortcut, tool_calling) on ``--others`` generated problems of every
   intent, with the probe on: its level with the new checks against the text rules alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import judge.dictation  # noqa: E402
import judge.evidence  # noqa: E402
import judge.fingerprints  # noqa: E402
import judge.rules  # noqa: E402
from arena.generator.generate import GeneratorConfig, generate  # noqa: E402
from arena.policy.server import create_policy_app  # noqa: E402
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig  # noqa: E402
from arena.runner.proxy import Upstream, UpstreamRegistry  # noqa: E402
from arena.runner.record import EpisodeLimits, EpisodeRecord  # noqa: E402
from arena.runner.verdict import score_episode  # noqa: E402
from arena.shop.index import CatalogIndex  # noqa: E402
from arena.taskpack.build import build_catalog  # noqa: E402
from judge.evidence import build_evidence  # noqa: E402
from judge.rules import analyse, probe_plan  # noqa: E402

POLICY = "heuristic-policy"


def _no_decodings(text: str, keys: list[str] | None = None, undecoded: list[str] | None = None) -> list[str]:
    return []


def _checks_off() -> contextlib.ExitStack:
    """The cipher readings and the rules that read the agent's text (pointed verdicts, unread text,
    fingerprints) taken out."""
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch.object(judge.dictation, "decodings", _no_decodings))
    stack.enter_context(mock.patch.object(judge.evidence, "may_point", lambda pieces: False))
    stack.enter_context(mock.patch.object(judge.rules, "unread", lambda pieces, undecoded, vocabulary: []))
    stack.enter_context(mock.patch.object(judge.fingerprints.DataPieces, "found", lambda self, spellings: []))
    return stack


def judge_ms(record: EpisodeRecord, checks: bool, repeat: int = 20) -> tuple[float, float]:
    """Median ms of one rules judgment of ``record`` (evidence built and analysed), with the new checks or with
    them taken out (no probes, no request text for provenance, no cipher readings of the agent's text, no
    pointed-verdict reading); and its level."""
    times, level = [], 0.0
    for _ in range(repeat):
        started = time.perf_counter()
        with contextlib.nullcontext() if checks else _checks_off():
            evidence = build_evidence(record)
            if not checks:
                evidence.probes = []
                for step in evidence.steps:
                    step.request_ids = step.request_numbers = step.unheld = None
            level = analyse(evidence).level
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), level


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--others", type=int, default=8)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-probe-"))
    build_catalog(tmp / "catalog", synthetic=2000, seed=7)
    catalog = CatalogIndex(tmp / "catalog")
    problems = [p for p in generate(catalog, GeneratorConfig(n=4 * args.problems, seed=7)).problems
                if p.intent == "product"][: args.problems]  # fmt: skip
    agent = AgentSource.from_path(REPO / "arena" / "agents" / "tool_calling.py")

    async def run() -> dict[bool, list[EpisodeRecord]]:
        registry = UpstreamRegistry(
            [Upstream(name=POLICY, base_url="http://policy/v1", models=[POLICY])],
            transports={POLICY: httpx.ASGITransport(app=create_policy_app(seed=1))},
        )
        limits = EpisodeLimits(wall_s=120)
        runners = {
            on: EpisodeRunner(catalog, registry, RunnerConfig(limits=limits, allowlist=[POLICY],
                                                              probe=probe_plan if on else None))
            for on in (True, False)
        }  # fmt: skip
        found: dict[bool, list[EpisodeRecord]] = {True: [], False: []}
        try:
            for round_ in range(args.rounds):
                for i, problem in enumerate(problems):
                    order = (True, False) if (i + round_) % 2 == 0 else (False, True)
                    for on in order:
                        found[on].append(await runners[on].run(agent, problem, POLICY))
        finally:
            await registry.aclose()
        return found

    async def others() -> list[tuple[str, str, EpisodeRecord]]:
        registry = UpstreamRegistry(
            [Upstream(name=POLICY, base_url="http://policy/v1", models=[POLICY])],
            transports={POLICY: httpx.ASGITransport(app=create_policy_app(seed=1))},
        )
        runner = EpisodeRunner(catalog, registry, RunnerConfig(limits=EpisodeLimits(wall_s=120), allowlist=[POLICY],
                                                               probe=probe_plan))  # fmt: skip
        mixed = generate(catalog, GeneratorConfig(n=3 * args.others, seed=11)).problems[: args.others]
        done = []
        try:
            for name in ("search_loop", "shortcut", "tool_calling"):
                source = AgentSource.from_path(REPO / "arena" / "agents" / f"{name}.py")
                records = await asyncio.gather(*(runner.run(source, problem, POLICY) for problem in mixed))
                done += [(name, problem.intent.value, record) for problem, record in zip(mixed, records, strict=True)]
        finally:
            await registry.aclose()
        return done

    found = asyncio.run(run())
    on, off = found[True], found[False]
    by_id = {p.id: p for p in problems}
    success = {
        flag: sum(score_episode(by_id[r.problem.id], r, catalog).success for r in found[flag]) for flag in (True, False)
    }
    probes = [len(r.probes) for r in on]
    calls = [len(r.llm_calls) for r in on]
    tokens = [r.inference_tokens() for r in on]
    probe_prompt = [sum(p.prompt_tokens for p in r.probes) for r in on]
    probe_completion = [sum(p.completion_tokens for p in r.probes) for r in on]
    probe_ms = [r.timings.get("probe_ms", 0.0) for r in on]
    wall_on = [r.usage.wall_s * 1000 + r.timings.get("probe_ms", 0.0) for r in on]
    wall_off = [r.usage.wall_s * 1000 for r in off]
    n = len(on)
    print(f"load average at start of report: {Path('/proc/loadavg').read_text().split()[:3]}")
    print(f"{n} episodes with the probe, {len(off)} without (tool_calling, heuristic policy, {args.problems} problems x "
          f"{args.rounds} rounds, interleaved)")  # fmt: skip
    print(f"1. probes per episode: mean {sum(probes) / n:.2f} (max {max(probes)}); upstream requests "
          f"{sum(probes) / n:.2f} per episode against the agent's {sum(calls) / n:.2f} "
          f"(+{sum(probes) / max(1, sum(calls)):.0%}); tokens per episode: probe prompt {sum(probe_prompt) / n:.0f} + "
          f"completion {sum(probe_completion) / n:.0f}, against the agent's "
          f"{sum(t.prompt_tokens for t in tokens) / n:.0f} + {sum(t.completion_tokens for t in tokens) / n:.0f}")  # fmt: skip
    probed = [ms for ms, count in zip(probe_ms, probes, strict=True) if count]
    print(f"2. probe wall time per probed episode: median {statistics.median(probed or [0.0]):.1f} ms; episode wall "
          f"time median on {statistics.median(wall_on):.0f} ms, off {statistics.median(wall_off):.0f} ms, paired median "
          f"difference {statistics.median(a - b for a, b in zip(wall_on, wall_off, strict=True)):+.0f} ms")  # fmt: skip
    with_checks, without, levels_with, levels_without = [], [], [], []
    for record in on:
        first_ms, first_level = judge_ms(record, True)
        second_ms, second_level = judge_ms(record, False)
        with_checks.append(first_ms)
        without.append(second_ms)
        levels_with.append(first_level)
        levels_without.append(second_level)
    added = statistics.median(a - b for a, b in zip(with_checks, without, strict=True))
    print(f"3. rules judge per episode: median {statistics.median(with_checks):.2f} ms with provenance, the probe "
          f"read and the cipher readings, {statistics.median(without):.2f} ms without; paired median added {added:+.2f} ms "
          f"({added / statistics.median(without):+.0%})")  # fmt: skip
    paired_levels = [(a, b) for a, b in zip(levels_with, [judge_ms(r, True, 1)[1] for r in off], strict=True)]
    same = sum(1 for a, b in paired_levels if a == b)
    print(f"4. levels with the probe vs without it (same problem, same round): {same}/{n} equal; "
          f"with the new checks vs the text rules alone on the probed records: "
          f"{sum(1 for a, b in zip(levels_with, levels_without, strict=True) if a == b)}/{n} equal; "
          f"levels {sorted(levels_with)}; ASR with the probe {success[True]}/{n}, without {success[False]}/{n}")  # fmt: skip
    if args.others:
        rows = asyncio.run(others())
        print(f"5. reference agents on {args.others} problems of every intent, probe on (level with the checks / text "
              "rules alone):")  # fmt: skip
        for name in ("search_loop", "shortcut", "tool_calling"):
            mine = [
                (intent, judge_ms(r, True, 1)[1], judge_ms(r, False, 1)[1])
                for agent, intent, r in rows
                if agent == name
            ]
            same = sum(1 for _, a, b in mine if a == b)
            print(f"   {name}: {same}/{len(mine)} equal; " + ", ".join(f"{i} {a}/{b}" for i, a, b in mine))


if __name__ == "__main__":
    main()
