"""The student served in-process: decode throughput by batch size, against one request at a time.

    .venv/bin/python benchmarks/student_serving.py                 # batches 1, 2, 4, 8
    .venv/bin/python benchmarks/student_serving.py --requests 8 --max-tokens 96

Loads the materialised Gemma 3 270M (``arena student materialise``) at fp32 and sends the same
``--requests`` greedy chat requests (conversations of about 300 to 1,500 prompt tokens, both sides
of the 512-token sliding window) to ``distill/serve.py``'s app through httpx's ASGI transport, all
at once, once per ``max_batch``. ``max_batch 1`` is the baseline: the server as it was, one request
at a time. Printed per batch size: wall seconds, completion tokens per second over all requests,
the speed-up over the baseline, and whether every answer equals the baseline's answer. The machine
should be quiet: these are wall-clock figures.
"""

from __future__ import annotations

import argparse
import asyncio
import time


def conversations(count: int) -> list[list[dict]]:
    topics = ["tea", "a kettle", "socks", "a lamp", "headphones", "a backpack", "running shoes", "a desk"]
    shaped = []
    for index in range(count):
        topic = topics[index % len(topics)]
        messages = [{"role": "system", "content": "You are a shopping assistant. Use the tools."}]
        for turn in range(2 + 5 * (index % 4)):
            messages += [
                {"role": "user", "content": f"I want {topic}, option {turn}, under {20 + turn} dollars, delivered."},
                {"role": "assistant", "content": f"Looking at {topic} number {turn}; it has good reviews and ships."},
            ]
        messages.append({"role": "user", "content": f"Which {topic} should I buy, and why?"})
        shaped.append(messages)
    return shaped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()

    import httpx
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from distill.serve import create_model_app
    from distill.student import apply_template, materialise

    checkpoint = materialise()
    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    apply_template(tokenizer)
    bodies = [
        {"model": "student", "messages": messages, "temperature": 0, "max_tokens": args.max_tokens}
        for messages in conversations(args.requests)
    ]

    async def ask(app) -> list[dict]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://student", timeout=None) as client:
            replies = await asyncio.gather(*(client.post("/v1/chat/completions", json=body) for body in bodies))
        return [reply.raise_for_status().json() for reply in replies]

    baseline: tuple[float, list[dict]] | None = None
    print(f"{args.requests} concurrent greedy requests, up to {args.max_tokens} new tokens each, fp32, CPU")
    print("| max_batch | wall s | prompt tokens | completion tokens | tokens/s | speed-up | same answers |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for batch in sorted(set(args.batches) | {1}):
        app = create_model_app(model, tokenizer, "student", max_new_tokens=args.max_tokens, max_batch=batch)
        started = time.perf_counter()
        replies = asyncio.run(ask(app))
        wall = time.perf_counter() - started
        completion = sum(r["usage"]["completion_tokens"] for r in replies)
        prompt = sum(r["usage"]["prompt_tokens"] for r in replies)
        rate = completion / wall
        if baseline is None:
            baseline = (rate, replies)
        same = all(
            a["choices"][0]["message"] == b["choices"][0]["message"] for a, b in zip(replies, baseline[1], strict=True)
        )
        print(f"| {batch} | {wall:.1f} | {prompt} | {completion} | {rate:.1f} | {rate / baseline[0]:.2f}x | {same} |")


if __name__ == "__main__":
    main()
