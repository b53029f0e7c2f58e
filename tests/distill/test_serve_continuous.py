"""Continuous batching in the in-process server, on the real student (Gemma 3 270M): a request that
arrives while another decodes joins the running batch at the next step and leaves when it is done,
and every row's greedy tokens are those of the row alone, prefilled whole. A seeded sample draws
from its own generator: the same seed gives the same tokens whatever shares its steps."""

from __future__ import annotations

import asyncio
import threading


def _body(text: str, limit: int, **sampling) -> dict:
    return {"model": "s", "messages": [{"role": "user", "content": text}], "max_tokens": limit,
            "temperature": 0, **sampling}  # fmt: skip


def _ask(app, bodies: list[dict]) -> list[dict]:
    import httpx

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://s") as client:
            replies = await asyncio.gather(*(client.post("/v1/chat/completions", json=body) for body in bodies))
        assert [reply.status_code for reply in replies] == [200] * len(bodies), [r.text for r in replies]
        return [reply.json() for reply in replies]

    return asyncio.run(go())


def test_a_request_arriving_mid_decode_joins_the_running_batch_and_answers_as_alone(student):
    import httpx

    from distill.serve import create_model_app

    model, tokenizer = student
    app = create_model_app(model, tokenizer, "s", max_new_tokens=64, max_batch=2, batch_wait_s=0.0)
    backend, step = app.state.backend, app.state.backend.step
    steps: list[tuple[int, int]] = []  # (rows decoded, rows that joined) per step
    first_step = threading.Event()

    def recording(running, joining):
        finished = step(running, joining)
        steps.append((len(running.rows) + len(finished), len(joining)))
        first_step.set()
        return finished

    backend.step = recording
    # "long" is far longer than the window of the sliding layers, "late" is short: the late row's
    # cache is left-padded into the running batch, which is where joining goes wrong if it does.
    long = _body("Count from one to two hundred in words, one number a line. " * 60, 24)
    late = _body("Name a colour.", 4)
    order: list[str] = []

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://s") as client:

            async def post(name: str, body: dict) -> dict:
                reply = await client.post("/v1/chat/completions", json=body)
                order.append(name)
                assert reply.status_code == 200, reply.text
                return reply.json()

            running = asyncio.ensure_future(post("long", long))
            await asyncio.get_running_loop().run_in_executor(None, first_step.wait, 60)
            return await asyncio.gather(running, post("late", late))

    together = asyncio.run(go())
    assert steps[0] == (1, 1) and (2, 1) in steps  # the late request joined a decode already running
    assert order == ["late", "long"]  # and left it first, without waiting for the long row
    assert together[1]["usage"]["completion_tokens"] <= 4 < together[0]["usage"]["completion_tokens"]
    assert len(steps) == together[0]["usage"]["completion_tokens"]  # one step per token of the long row
    assert len(tokenizer(long["messages"][0]["content"])["input_ids"]) > model.config.sliding_window

    whole = create_model_app(model, tokenizer, "s", max_new_tokens=64, prefix_cache=False)
    alone = [_ask(whole, [body])[0] for body in (long, late)]
    for joint, solo in zip(together, alone, strict=True):
        assert joint["choices"][0]["message"] == solo["choices"][0]["message"]
        assert joint["choices"][0]["finish_reason"] == solo["choices"][0]["finish_reason"]
        assert joint["usage"] == solo["usage"]


def test_a_seeded_sample_is_the_same_alone_or_batched_and_another_seed_draws_another(student):
    from distill.serve import create_model_app

    model, tokenizer = student
    app = create_model_app(model, tokenizer, "s", max_new_tokens=12, max_batch=4, batch_wait_s=1.0)
    question = "Suggest a gift for a friend who likes tea."
    seeded = _body(question, 12, temperature=1.0, seed=7)
    alone = _ask(app, [seeded])[0]
    company = [
        _body("Name a colour.", 12),
        _body(question, 12, temperature=1.0, seed=8),
        _body(question, 12, temperature=0.7),
    ]
    batched = _ask(app, [seeded, *company])
    again = _ask(app, [seeded])[0]
    text = [reply["choices"][0]["message"]["content"] for reply in (alone, batched[0], again, batched[2])]
    assert text[0] == text[1] == text[2]  # the same seed, the same sample, whatever shared its steps
    assert text[3] != text[0]  # another attempt's seed draws another sample
