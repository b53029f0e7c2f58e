"""Throughput of the reasoning judges.

1. LLM judge: judgments per second against the scripted OpenAI-compatible
   server (``judge.calibration.scripted_server``, its own process) answering every call
   after a fixed latency (default 300 ms, a realistic vLLM judge reply), with
   the default concurrency. Target: >= 30 judgments/s on 2 cores. The episodes
   are the shipped labelled set's records with model output, replicated.
2. Rules judge: judgments per second over the same records, one core.

Run: ``.venv/bin/python benchmarks/judge.py [--episodes 300] [--latency-ms 300] [--concurrency 16]``
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge.batch import judge_batch  # noqa: E402
from judge.calibration.agreement import Latency  # noqa: E402
from judge.calibration.labelset import LABELLED  # noqa: E402
from judge.calibration.scripted_server import free_port  # noqa: E402
from judge.llm import OpenAIJudge  # noqa: E402
from judge.records import load_labels  # noqa: E402
from judge.rules import RulesJudge  # noqa: E402
from judge.settings import JudgeSettings  # noqa: E402
from judge.verdict import ReasoningJudgment  # noqa: E402


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def start_server(latency_ms: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = "judge.calibration.scripted_server"
    command = [sys.executable, "-m", server, "--port", str(port), "--latency-ms", str(latency_ms)]
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1])
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the scripted judge server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--latency-ms", type=float, default=300.0)
    parser.add_argument("--concurrency", type=int, default=JudgeSettings().concurrency)
    parser.add_argument("--rules-repeats", type=int, default=40, help="Passes of the rules judge over the records.")
    args = parser.parse_args()

    labels = [label for label in load_labels(LABELLED) if label.gold > 0]  # level 0 never reaches the server
    records = [
        labels[i % len(labels)].record.model_copy(update={"episode_id": f"bench-{i}"}) for i in range(args.episodes)
    ]

    process, url = start_server(args.latency_ms)
    try:
        settings = JudgeSettings(kind="openai", base_url=url, models=["bench-judge"], concurrency=args.concurrency)

        async def run() -> list:
            async with OpenAIJudge(settings) as judge:
                await judge.judge(records[0])  # connection set-up and imports off the clock
                return await judge_batch(judge, records, concurrency=args.concurrency)

        cpu0, wall0 = _cpu_s(), time.perf_counter()
        outcomes = asyncio.run(run())
        wall, cpu = time.perf_counter() - wall0, _cpu_s() - cpu0
    finally:
        process.terminate()
        process.wait(timeout=10)
    judged = [o for o in outcomes if isinstance(o, ReasoningJudgment)]
    latency = Latency.of([o.latency_ms for o in judged])
    ceiling = args.concurrency / (args.latency_ms / 1000.0)
    print(
        f"LLM judge: {len(judged)}/{len(records)} judged in {wall:.2f} s = {len(judged) / wall:.1f} judgments/s "
        f"(server latency {args.latency_ms:.0f} ms, concurrency {args.concurrency}, ceiling {ceiling:.1f}/s); "
        f"latency p50 {latency.p50_ms:.0f} ms p95 {latency.p95_ms:.0f} ms; "
        f"client CPU {1000 * cpu / max(1, len(judged)):.2f} ms per judgment"
    )

    rules = RulesJudge()
    corpus = [label.record for label in load_labels(LABELLED)]
    started = time.perf_counter()
    for _ in range(args.rules_repeats):
        for record in corpus:
            rules.judge_now(record)
    elapsed = time.perf_counter() - started
    count = args.rules_repeats * len(corpus)
    print(
        f"rules judge: {count} judgments in {elapsed:.2f} s = {count / elapsed:.0f} judgments/s "
        f"({1000 * elapsed / count:.2f} ms each; labelled records, {sum(len(r.model_dump_json()) for r in corpus) // len(corpus):,} bytes on average)"
    )


if __name__ == "__main__":
    main()
