"""The in-process model server batches concurrent requests, and a batched turn is the turn alone.

Run on the real student (Gemma 3 270M): its sliding-window layers (512 tokens) are where
left-padding goes wrong if it is going to, so one prompt is longer than the window.
"""

from __future__ import annotations

import asyncio

from distill.serve import _groups, _Job


def _job(sampling: tuple, seed: int | None = None) -> _Job:
    return _Job(input_ids=[1], limit=4, sampling=sampling, seed=seed, future=None)  # type: ignore[arg-type]


def test_requests_batch_only_with_requests_that_sample_alike():
    greedy, greedy2 = _job((False,)), _job((False,), seed=3)  # a seed changes nothing without sampling
    warm, warm2, cold = _job((True, 0.7, 1.0)), _job((True, 0.7, 1.0)), _job((True, 1.0, 1.0))
    seeded, seeded2 = _job((True, 0.7, 1.0), seed=1), _job((True, 0.7, 1.0), seed=1)
    groups = _groups([greedy, warm, seeded, greedy2, cold, warm2, seeded2])
    assert [[id(j) for j in g] for g in groups] == [
        [id(greedy), id(greedy2)],
        [id(warm), id(warm2)],
        [id(seeded)],  # a seeded sample is reproducible only alone
        [id(cold)],
        [id(seeded2)],
    ]


def _conversation(turns: int, topic: str) -> list[dict]:
    messages = [{"role": "system", "content": "You are a shopping assistant. Use the tools."}]
    for turn in range(turns):
        messages += [
            {
                "role": "user",
                "content": f"I want {topic}, option {turn}, under {20 + turn} dollars, with free delivery.",
            },
            {"role": "assistant", "content": f"Looking at {topic} number {turn} for you; it has good reviews."},
        ]
    messages.append({"role": "user", "content": f"Which {topic} should I buy?"})
    return messages


def _ask_all(app, bodies: list[dict]) -> list[dict]:
    import httpx

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://student") as client:
            replies = await asyncio.gather(*(client.post("/v1/chat/completions", json=body) for body in bodies))
        assert [reply.status_code for reply in replies] == [200] * len(bodies), [r.text for r in replies]
        return [reply.json() for reply in replies]

    return asyncio.run(go())


def test_concurrent_greedy_requests_share_one_generate_and_answer_as_alone(student):
    """Static batching (``continuous=False``, and the path of every backend without steps)."""
    from distill.serve import create_model_app

    model, tokenizer = student
    calls: list[int] = []
    generate = model.generate

    def counting(**kwargs):
        calls.append(int(kwargs["input_ids"].shape[0]))
        return generate(**kwargs)

    model.generate = counting
    try:
        bodies = [
            {"model": "s", "messages": _conversation(turns, topic), "temperature": 0, "max_tokens": limit}
            for turns, topic, limit in ((1, "tea", 12), (24, "a kettle", 12), (6, "socks", 7), (3, "a lamp", 12))
        ]
        app = create_model_app(
            model, tokenizer, "s", max_new_tokens=64, max_batch=4, batch_wait_s=5.0, continuous=False
        )
        together = _ask_all(app, bodies)
        assert calls == [4]  # one batch of four rows
        # Alone: the same server with no wait for a batch to fill (5 s each otherwise, for nothing).
        single = create_model_app(
            model, tokenizer, "s", max_new_tokens=64, max_batch=4, batch_wait_s=0.0, continuous=False
        )
        alone = [_ask_all(single, [body])[0] for body in bodies]
        assert calls == [4, 1, 1, 1, 1]
    finally:
        model.generate = generate
    prompts = [reply["usage"]["prompt_tokens"] for reply in together]
    assert max(prompts) > model.config.sliding_window > min(prompts)
    for joint, solo in zip(together, alone, strict=True):
        assert joint["choices"][0]["message"] == solo["choices"][0]["message"]
        assert joint["choices"][0]["finish_reason"] == solo["choices"][0]["finish_reason"]
        assert joint["usage"] == solo["usage"]
    assert together[2]["usage"]["completion_tokens"] <= 7  # each row keeps its own limit inside the batch


def test_generation_does_not_wait_for_the_loops_default_executor(student):
    """The episode runner holds the default executor's threads for whole sandboxed episodes; a
    generation queued behind them would wait for episodes that wait for it (a deadlock)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from distill.serve import create_model_app

    model, tokenizer = student
    app = create_model_app(model, tokenizer, "s", max_new_tokens=2, max_batch=2, batch_wait_s=0.01)
    answered = threading.Event()

    async def go():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        episode = asyncio.to_thread(answered.wait, 60)  # an episode holding the only default worker
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://student") as client:
            holding = asyncio.ensure_future(episode)
            body = {"model": "s", "messages": _conversation(1, "tea"), "temperature": 0}
            reply = await asyncio.wait_for(client.post("/v1/chat/completions", json=body), timeout=50)
            answered.set()
            assert await holding is True
        return reply

    reply = asyncio.run(go())
    assert reply.status_code == 200 and reply.json()["usage"]["completion_tokens"] <= 2
