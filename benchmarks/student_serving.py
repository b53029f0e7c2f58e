"""The student served in-process, end to end: multi-turn episodes before and after the prefix cache,
continuous batching and the greedy LM head.

    .venv/bin/python benchmarks/student_serving.py                 # 8 episodes of 2-7 turns, 4 at once
    .venv/bin/python benchmarks/student_serving.py --episodes 16 --concurrency 8 --max-batch 8
    .venv/bin/python benchmarks/student_serving.py --episodes 16 --modes before@2,greedy@2,greedy@8,greedy@16

Loads the materialised Gemma 3 270M (``arena student materialise``) at fp32 and plays ``--episodes``
episodes, ``--concurrency`` at a time (a new one starts as one ends, as the evaluation's
``run_batch`` does, so episodes at different turns share a batch), against ``distill/serve.py``'s app
through httpx's ASGI transport. Episode ``i`` has ``2 + (5 i mod (turns - 1))`` turns (up to
``--turns``), since real episodes differ in length (``--uniform``: all ``--turns``). Each turn
sends the whole dialogue so far (the agent's system prompt, the shop's tool schemas, the query),
appends the model's answer as the assistant's turn with a tool
call and a tool result of about 600 characters (the size the template cuts a result to), and asks
again. The dialogues grow turn by turn, so a server that re-prefills every prompt pays for the whole
dialogue at every turn; a server with the prefix cache pays for the new tokens only.

The servers (``--modes``) run in this one process, one after the other, ``--rounds`` times
interleaved, with the same ``max_batch``, unless a mode names its own width: ``greedy@8`` plays
8 episodes at a time against a server of ``max_batch`` 8 (so one run compares the evaluation's
concurrency with a wider one). ``before`` is the server as it was (every prompt
prefilled whole, static batches), ``prefix`` keeps each episode's keys and values across its turns,
``continuous`` adds continuous batching (rows join and leave the running decode between steps),
``greedy`` the greedy LM head (a bf16 copy proposes, a rounding-error bound proves the fp32 head's
argmax, the fp32 head computes the step where it cannot; the fallbacks are counted and printed).
Every generated token of every turn is recorded at the backend and compared, token for token,
with the first run; the dialogues depend on the answers, so the same prompts in every run also
mean the same answers at every earlier turn. Printed: per run the wall seconds, prompt tokens
computed and taken from the cache, completion tokens, rows per decode step, episodes per minute
and the load average; for a continuous run, its seconds prefilling joining rows and in decode
steps; the peak resident memory of the process during each run; and the median speed-up of each
server over the first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

QUERIES = [
    "I need a stainless steel electric kettle under 1500 pesos with free shipping.",
    "Find me wireless headphones with noise cancelling, at least 4.5 stars, under 3000.",
    "Looking for running shoes for women, size 7, breathable, from a shop with COD.",
    "I want a desk lamp with a USB port and warm light, cheapest with good reviews.",
    "Recommend a 20 litre hiking backpack, waterproof, under 1200 pesos.",
    "Buy loose leaf green tea, 250 g, from a shop that also sells a tea infuser.",
    "I need cotton socks, pack of 6, black, and a voucher that applies to them.",
    "Which air fryer of 4 litres has the most sold, under 2500 pesos?",
]


def tool_result(episode: int, turn: int) -> str:
    """A find_product answer cut to 600 characters, as the student's template cuts every result."""
    products = [
        {
            "product_id": f"p{episode}{turn}{i}",
            "shop_id": f"s{(episode + i) % 5}",
            "title": f"Item {i} for query {episode}, model {turn}{i}",
            "price": 199 + 37 * i + turn,
            "service": ["COD", "free shipping"][i % 2],
            "sold_count": 1000 - 91 * i,
        }  # fmt: skip
        for i in range(6)
    ]
    return json.dumps(products)[:600]


def parse_mode(spec: str, concurrency: int, max_batch: int) -> tuple[str, int, int]:
    """``greedy@8`` -> ("greedy@8", 8, 8): its own width; ``greedy`` -> the command's width."""
    mode, _, width = spec.partition("@")
    if mode not in ("before", "prefix", "continuous", "greedy"):
        raise SystemExit(f"unknown server {mode!r} in --modes")
    if not width:
        return mode, concurrency, max_batch
    return spec, int(width), int(width)


def rss_bytes() -> int:
    """This process's resident memory now (Linux)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--turns", type=int, default=7, help="the longest episode's turns")
    parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight at once")
    parser.add_argument("--uniform", action="store_true", help="every episode has --turns turns (lockstep)")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--max-batch", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="before/after pairs, interleaved")
    parser.add_argument("--modes", default="before,continuous,greedy",
                        help="servers to play, in order, each optionally MODE@N (N episodes at a time, max_batch "
                             "N; otherwise --concurrency and --max-batch): before (every prompt prefilled whole, static batches), "
                             "prefix (the prefix cache, static batches), continuous (the prefix cache, continuous "
                             "batching: rows join and leave the running decode between steps; the fp32 LM head), "
                             "greedy (continuous, and greedy steps take their token from the bf16 head proven "
                             "exact, the fp32 head where the proof fails)")  # fmt: skip
    args = parser.parse_args()

    import httpx
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from arena.agents.tool_calling import SYSTEM_PROMPT
    from arena.shop.tools import TOOL_SCHEMAS
    from distill.serve import create_model_app
    from distill.student import apply_template, materialise

    checkpoint = materialise()
    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    apply_template(tokenizer)
    tools = [{"type": "function", "function": {"name": name, **schema}} for name, schema in TOOL_SCHEMAS.items()]

    async def episode(client, index: int, gate: asyncio.Semaphore) -> None:
        async with gate:
            turns = args.turns if args.uniform else 2 + (5 * index) % max(1, args.turns - 1)
            await play_episode(client, index, turns)

    async def play_episode(client, index: int, turns: int) -> None:
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": QUERIES[index % len(QUERIES)]},
        ]
        for turn in range(turns):
            body = {"model": "student", "messages": messages, "tools": tools, "temperature": 0,
                    "max_tokens": args.max_tokens}  # fmt: skip
            reply = (await client.post("/v1/chat/completions", json=body)).raise_for_status().json()
            answer = reply["choices"][0]["message"]
            # The base student rarely writes a call; the agent's next turn is shaped as after one.
            call = {"id": f"call_{index}_{turn}", "type": "function",
                    "function": {"name": "find_product", "arguments": json.dumps({"q": f"item {turn}"})}}  # fmt: skip
            messages.append({"role": "assistant", "content": answer["content"], "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": tool_result(index, turn)})

    def play(mode: str, concurrency: int, max_batch: int) -> tuple[float, dict, dict[tuple, list[int]]]:
        app = create_model_app(model, tokenizer, "student", max_new_tokens=args.max_tokens,
                               max_batch=max_batch, prefix_cache=mode != "before",
                               continuous=mode in ("continuous", "greedy"), greedy_head=mode == "greedy")  # fmt: skip
        backend = app.state.backend
        answers: dict[tuple, list[int]] = {}
        generate, step = backend.generate, backend.step
        rows_per_step: list[int] = []

        def recording(group):
            rows = generate(group)
            for job, row in zip(group, rows, strict=True):
                row = row[: job.limit]
                stop = next((i for i, token in enumerate(row) if token in backend.stops), None)
                answers[tuple(job.input_ids)] = row if stop is None else row[: stop + 1]
            return rows

        def stepping(running, joining):
            finished = step(running, joining)
            rows_per_step.append(len(running.rows) + len(finished))
            answers.update({tuple(job.input_ids): row for job, row in finished})
            return finished

        backend.generate, backend.step = recording, stepping

        async def go() -> None:
            gate = asyncio.Semaphore(concurrency)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://student", timeout=None) as client:
                await asyncio.gather(*(episode(client, i, gate) for i in range(args.episodes)))

        peak = [rss_bytes()]
        done = threading.Event()

        def watch() -> None:  # the process's resident memory, sampled through the run
            while not done.wait(0.2):
                peak[0] = max(peak[0], rss_bytes())

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        started = time.perf_counter()
        asyncio.run(go())
        wall = time.perf_counter() - started
        done.set()
        watcher.join()
        peak[0] = max(peak[0], rss_bytes())
        counts = {"prefilled": backend.prefilled, "reused": backend.reused,
                  "completion": sum(len(row) for row in answers.values()),
                  "rows/step": statistics.mean(rows_per_step) if rows_per_step else None,
                  "prefill_s": backend.prefill_s, "decode_s": backend.decode_s, "steps": backend.steps,
                  "head": backend.head, "rss": peak[0]}  # fmt: skip
        return wall, counts, answers

    # One short request first: the first forward pays for lazy initialisation, on neither side's clock.
    warm = create_model_app(model, tokenizer, "student", max_new_tokens=2, prefix_cache=False)
    asyncio.run(
        httpx.AsyncClient(transport=httpx.ASGITransport(app=warm), base_url="http://student").post(
            "/v1/chat/completions", json={"model": "student", "messages": [{"role": "user", "content": "hi"}]}
        )
    )
    print(f"machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, "
          f"loadavg before: {Path('/proc/loadavg').read_text().split()[:3]}")  # fmt: skip
    modes = [parse_mode(spec, args.concurrency, args.max_batch) for spec in args.modes.split(",")]
    widths = sorted({(concurrency, max_batch) for _, concurrency, max_batch in modes})
    width = ", ".join(f"{c} at a time, max_batch {b}" for c, b in widths)
    print(f"{args.episodes} episodes ({width}), {'' if args.uniform else '2 to '}{args.turns} turns each, up to {args.max_tokens} new tokens a "
          f"turn, greedy, fp32, transformers")  # fmt: skip
    print("| run | server | episodes at once | wall s | prompt tokens computed | from cache | completion tokens "
          "| rows per decode step | episodes/min | same tokens as the first run | peak RSS GiB | loadavg |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
    labels = [label for label, _, _ in modes]
    if len(set(labels)) != len(labels):
        parser.error(f"--modes names a server twice: {args.modes}")
    reference: dict[tuple, list[int]] | None = None
    walls: dict[str, list[float]] = {label: [] for label in labels}
    identical = True
    timing: list[str] = []  # where a continuous run's wall time went
    shown = 0
    for round_ in range(args.rounds):
        for label, concurrency, max_batch in modes:
            mode = label.split("@")[0]
            wall, counts, answers = play(mode, concurrency, max_batch)
            reference = answers if reference is None else reference
            same = answers == reference
            identical = identical and same
            walls[label].append(wall)
            per_step = "-" if counts["rows/step"] is None else f"{counts['rows/step']:.2f}"
            if not same:  # which turns: a changed answer also changes every later prompt of its episode
                changed = sum(1 for key, row in answers.items() if key in reference and reference[key] != row)
                same = (f"False: {changed} of {len(answers)} turns answered otherwise, "
                        f"{len(answers.keys() - reference.keys())} prompts unseen in the first run")  # fmt: skip
            print(f"| {round_ + 1} | {label} | {concurrency} | {wall:.1f} | "
                  f"{counts['prefilled']} | {counts['reused']} | {counts['completion']} | {per_step} | "
                  f"{args.episodes / wall * 60:.2f} | {same} | {counts['rss'] / 2**30:.2f} | "
                  f"{Path('/proc/loadavg').read_text().split()[0]} |", flush=True)  # fmt: skip
            if counts["steps"]:
                timing.append(f"{label}: prefilling joining rows {counts['prefill_s']:.1f} s, "
                              f"{counts['steps']} decode steps {counts['decode_s']:.1f} s "
                              f"({counts['decode_s'] / counts['steps'] * 1000:.0f} ms a step), "
                              f"the rest {wall - counts['prefill_s'] - counts['decode_s']:.1f} s")  # fmt: skip
            if counts["head"] is not None:
                head = counts["head"]
                timing.append(f"{label}: greedy head proved {head.proven} row tokens; {head.fallback_steps} of "
                              f"{counts['steps']} steps ({head.fallback_steps / max(1, counts['steps']):.1%}, "
                              f"{head.fallback_rows} rows) fell back to the fp32 head")  # fmt: skip
            for line in timing[shown:]:  # at once too (stderr), so a run stopped early keeps them
                print(line, file=sys.stderr, flush=True)
            shown = len(timing)
    print(*timing, sep="\n")
    for label in labels[1:]:
        speedup = statistics.median(walls[labels[0]]) / statistics.median(walls[label])
        print(f"median speed-up of {label} over {labels[0]}, episodes per minute: {speedup:.2f}x")
    print(f"every turn's tokens identical in every run: {identical}; "
          f"loadavg after: {Path('/proc/loadavg').read_text().split()[:3]}")  # fmt: skip


if __name__ == "__main__":
    main()
