"""The in-process server's prefix cache on the real student (Gemma 3 270M): an episode's next turn
prefills only its new tokens, and every turn's greedy tokens are those of a server that prefills the
whole dialogue again. The dialogues cross the 512-token sliding window of Gemma 3's local layers, the
place where reusing keys and values goes wrong if it is going to."""

from __future__ import annotations

import asyncio


def _episodes(app, openings: list[list[dict]], turns: int) -> list[list[dict]]:
    """Each opening played ``turns`` turns at once, the agent's way: the answer goes back into the
    dialogue with a tool call and a tool result, and the whole dialogue is sent again."""
    import httpx

    async def play(client, messages: list[dict], index: int) -> list[dict]:
        messages = list(messages)
        for turn in range(turns):
            body = {"model": "s", "messages": messages, "temperature": 0, "max_tokens": 6}
            reply = await client.post("/v1/chat/completions", json=body)
            assert reply.status_code == 200, reply.text
            answer = reply.json()["choices"][0]["message"]
            call = {"id": f"c{index}{turn}", "type": "function",
                    "function": {"name": "find_product", "arguments": f'{{"q": "lamp {turn}"}}'}}  # fmt: skip
            result = " ".join(f"lamp {index}.{turn}.{i} costs {100 + 7 * i} pesos, ships free;" for i in range(18))
            messages += [
                {"role": "assistant", "content": answer["content"], "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "content": result},
            ]
        return messages

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://s") as client:
            return await asyncio.gather(*(play(client, m, i) for i, m in enumerate(openings)))

    return asyncio.run(go())


def test_turns_reuse_the_cached_prefix_and_answer_token_for_token_as_a_whole_prefill(student):
    from distill.serve import create_model_app

    model, tokenizer = student
    system = {"role": "system", "content": "You are a shopping assistant. Use the tools. " * 20}
    openings = [
        [system, {"role": "user", "content": "A desk lamp with a USB port, under 900 pesos."}],
        [system, {"role": "user", "content": "Running shoes for women, size 7, breathable."}],
    ]
    # The whole-prefill server, the prefix cache with static batches, and with continuous batching.
    modes = {"whole": {"prefix_cache": False}, "static": {"continuous": False}, "continuous": {}}
    apps = {mode: create_model_app(model, tokenizer, "s", max_new_tokens=6, max_batch=2, **options)
            for mode, options in modes.items()}  # fmt: skip
    generated: dict[str, dict[tuple, list[int]]] = {mode: {} for mode in modes}
    for mode, app in apps.items():
        backend, generate, step = app.state.backend, app.state.backend.generate, app.state.backend.step

        def recording(group, generate=generate, seen=generated[mode]):
            rows = generate(group)
            seen.update({tuple(job.input_ids): row[: job.limit] for job, row in zip(group, rows, strict=True)})
            return rows

        def stepping(running, joining, step=step, seen=generated[mode]):
            finished = step(running, joining)
            seen.update({tuple(job.input_ids): row for job, row in finished})
            return finished

        backend.generate, backend.step = recording, stepping
    played = {mode: _episodes(app, openings, turns=3) for mode, app in apps.items()}

    stops = apps["whole"].state.backend.stops
    for mode in ("static", "continuous"):
        assert played[mode] == played["whole"]  # the same answers at every turn, so the same dialogues
        assert generated[mode].keys() == generated["whole"].keys()
        for prompt, tokens in generated["whole"].items():  # token for token, not only the decoded text
            cut = next((i for i, t in enumerate(tokens) if t in stops), len(tokens) - 1) + 1
            assert generated[mode][prompt][:cut] == tokens[:cut]
    lengths = sorted(len(prompt) for prompt in generated["whole"])
    assert lengths[0] < model.config.sliding_window < lengths[-1]
    plain = apps["whole"].state.backend
    assert plain.reused == 0 and plain.prefilled == sum(lengths)
    for mode in ("static", "continuous"):
        reusing = apps[mode].state.backend
        # Each later turn took its dialogue so far from the cache: at least the first turn's prompt.
        assert reusing.reused >= 4 * lengths[0] and reusing.prefilled + reusing.reused == sum(lengths)


def test_a_prompt_that_leaves_a_cached_prefix_midway_reuses_only_the_common_part(student):
    """A sampled run of the same problem shares the opening and then goes its own way: the cache
    serves the shared tokens, never the other branch's."""
    from distill.serve import TransformersBackend, _Job

    model, tokenizer = student
    backend = TransformersBackend(model, tokenizer, slots=2)
    plain = TransformersBackend(model, tokenizer, prefix_cache=False)
    text = "Compare these two kettles by price, capacity and reviews before you choose. " * 12
    stem = tokenizer(text, add_special_tokens=False)["input_ids"]
    first, branch = stem + [235274, 235284, 235304], stem[:-5] + [235308, 235318]

    def job(ids):
        return _Job(list(ids), 5, (False,), None, None)  # type: ignore[arg-type]

    assert backend.generate([job(first)])[0][:5] == plain.generate([job(first)])[0][:5]
    assert backend.generate([job(branch)])[0][:5] == plain.generate([job(branch)])[0][:5]
    assert backend.reused == len(stem) - 5  # the branch reused the common part only
    assert len(backend.slots) == 2  # the branch did not supersede the first, which it does not extend
