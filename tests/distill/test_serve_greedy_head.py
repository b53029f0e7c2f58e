"""The greedy LM head (distill/greedy_head.py): a bf16 copy of the head proposes, a rounding-error
bound proves, and every token is ``torch.argmax`` of the fp32 head's logits, proven or recomputed.
On the real student (Gemma 3 270M) across prompts, positions and batch widths; on crafted heads for
ties and near-ties, which must fall back; and through the server's prefix cache and continuous
batching, against the server with the fp32 head, including steps forced to fall back."""

from __future__ import annotations

import asyncio

import pytest

PROMPTS = [
    "I need a stainless steel electric kettle under 1500 pesos with free shipping.",
    "Find me wireless headphones with noise cancelling, at least 4.5 stars, under 3000.",
    '<tool_call>{"name": "find_product", "arguments": {"q": "desk lamp usb"}}</tool_call>',
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "Recommend a 20 litre hiking backpack, waterproof, under 1200 pesos. Reply in Spanish.",
    "1, 2, 3, 5, 8, 13, 21,",
]


@pytest.fixture(scope="module")
def hidden(student):
    """The decoder's last hidden state at every position of each prompt and its greedy continuation,
    [positions, 1, K]: the states a decode step hands the head."""
    import torch

    model, tokenizer = student
    states = []
    with torch.no_grad():
        for text in PROMPTS:
            ids = tokenizer(text, return_tensors="pt").input_ids
            ids = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False)
            states.append(model.get_decoder()(input_ids=ids).last_hidden_state[0, 1:])  # not the BOS
    return torch.cat(states)[:, None, :]


def test_the_proven_token_is_the_fp32_heads_argmax_at_every_position_and_batch_width(student, hidden):
    import torch

    from distill.greedy_head import GreedyHead

    model, _ = student
    head = GreedyHead(model.lm_head)
    assert GreedyHead.fits(model)
    with torch.no_grad():
        for width in (1, 3, 8):  # one row, an odd width, the evaluation's batch
            # 12 batches a width, spread over every prompt's positions (each an fp32 head's 671 MB read)
            stride = max(width, (len(hidden) - width) // 12)
            for start in range(0, len(hidden) - width + 1, stride):
                batch = hidden[start : start + width]
                expected = torch.argmax(model.lm_head(batch)[:, -1, :].float(), dim=-1).tolist()
                assert head.choose(batch) == expected, (width, start)
    # The proof carries most steps; a head that always fell back would pass the line above.
    assert head.proven > 3 * head.fallback_rows, (head.proven, head.fallback_rows)


def test_the_bf16_logits_and_the_fp32_head_stay_within_the_bounds_the_proof_uses(student, hidden):
    """The arithmetic the proof assumes, checked on this machine's kernels: the bf16 copy's logit is
    within bf16_sum * S_j + bf16_out * |a_j| of the real logit, the fp32 head's within fp32 * S_j."""
    import torch

    from distill.greedy_head import Bounds, GreedyHead

    model, _ = student
    head = GreedyHead(model.lm_head)
    head._prepare()
    weight = model.lm_head.weight.detach()
    bounds = Bounds(weight.shape[1])
    with torch.no_grad():
        for batch in hidden[::18].split(4):
            rows = batch[:, 0, :]
            real = rows.double() @ weight.double().T
            spread = rows.double().abs() @ weight.double().abs().T  # S_j
            approx = head._matmul(rows.to(torch.bfloat16)).double()
            assert bool(((approx - real).abs() <= bounds.bf16_sum * spread + bounds.bf16_out * approx.abs()).all())
            full = model.lm_head(batch)[:, -1, :].double()
            assert bool(((full - real).abs() <= bounds.fp32 * spread).all())
            # S_j <= ||h||_2 max ||w||_2, the one number a row the proof uses for every non-candidate.
            assert bool((spread.amax(1) <= rows.double().norm(dim=1) * head._row_norm).all())


def _crafted(size: int = 64, vocabulary: int = 500):
    """A random fp32 head with unit rows, and a hidden state pointing at row 100."""
    import torch

    generator = torch.Generator().manual_seed(7)
    head = torch.nn.Linear(size, vocabulary, bias=False)
    weight = torch.randn(vocabulary, size, generator=generator)
    head.weight.data = weight / weight.norm(dim=1, keepdim=True)
    return head, (head.weight.data[100] * 30)[None, None, :].clone()


def test_a_clear_winner_is_proven_without_the_fp32_head():
    from distill.greedy_head import GreedyHead

    head, state = _crafted()
    greedy = GreedyHead(head, candidates=8)
    assert greedy.choose(state) == [100]
    assert (greedy.proven, greedy.fallback_steps) == (1, 0)


@pytest.mark.parametrize("nudge", [0.0, 1e-7, -1e-7], ids=["exact tie", "a hair above", "a hair below"])
def test_a_tie_or_a_near_tie_falls_back_and_picks_what_argmax_on_the_fp32_head_picks(nudge):
    import torch

    from distill.greedy_head import GreedyHead

    head, state = _crafted()
    with torch.no_grad():
        head.weight[300] = head.weight[100] * (1 + nudge)  # a later row as good as the winner, or nearly
    greedy = GreedyHead(head, candidates=8)
    expected = int(torch.argmax(head(state)[0, -1]))
    assert expected in (100, 300)
    assert greedy.choose(state) == [expected]
    assert (greedy.proven, greedy.fallback_steps, greedy.fallback_rows) == (0, 1, 1)


def test_one_unprovable_row_sends_its_whole_step_to_the_fp32_head():
    import torch

    from distill.greedy_head import GreedyHead

    head, state = _crafted()
    with torch.no_grad():
        head.weight[300] = head.weight[100]
    other = (head.weight.data[42] * 30)[None, None, :]
    broken = torch.full_like(state, float("nan"))
    greedy = GreedyHead(head, candidates=8)
    batch = torch.cat([other, state, other])
    assert greedy.choose(batch) == torch.argmax(head(batch)[:, -1, :], dim=-1).tolist()
    assert (
        greedy.choose(torch.cat([other, broken]))
        == torch.argmax(head(torch.cat([other, broken]))[:, -1, :], dim=-1).tolist()
    )
    assert (greedy.proven, greedy.fallback_steps, greedy.fallback_rows) == (0, 2, 5)
    assert greedy.choose(other) == [42] and greedy.proven == 1


def test_a_head_written_in_place_is_copied_again():
    """The head is the tied embedding: training writes it in place, and a stale bf16 copy would
    propose the old model's tokens (the proof would then fall back on every step, or worse, prove
    against the old rows)."""
    import torch

    from distill.greedy_head import GreedyHead

    head, state = _crafted()
    greedy = GreedyHead(head, candidates=8)
    assert greedy.choose(state) == [100]
    with torch.no_grad():
        head.weight[[100, 7]] = head.weight[[7, 100]]
    assert greedy.choose(state) == [7]
    assert greedy.fallback_steps == 0


def _episodes(app, count: int, turns: int) -> list[list[dict]]:
    """``count`` episodes at once, the agent's way: each answer goes back with a tool call and a result."""
    import httpx

    async def play(client, index: int) -> list[dict]:
        messages = [{"role": "user", "content": PROMPTS[index]}]
        for turn in range(turns):
            body = {"model": "s", "messages": messages, "temperature": 0, "max_tokens": 10 + 3 * index}
            reply = await client.post("/v1/chat/completions", json=body)
            assert reply.status_code == 200, reply.text
            call = {"id": f"c{index}{turn}", "type": "function",
                    "function": {"name": "find_product", "arguments": f'{{"q": "item {turn}"}}'}}  # fmt: skip
            messages += [
                {
                    "role": "assistant",
                    "content": reply.json()["choices"][0]["message"]["content"],
                    "tool_calls": [call],
                },
                {"role": "tool", "tool_call_id": call["id"], "content": f"item {index}.{turn} costs {90 + turn} pesos"},
            ]
        return messages

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://s") as client:
            return await asyncio.gather(*(play(client, i) for i in range(count)))

    return asyncio.run(go())


def test_served_episodes_answer_token_for_token_as_with_the_fp32_head_fallbacks_included(student):
    """Four episodes of different lengths through the prefix cache and continuous batching: rows join
    and leave mid-decode, so steps have 1 to 4 rows. Every other step of one server is forced to
    fall back, so proven and recomputed steps alternate within a row's answer."""
    from distill.serve import create_model_app

    model, tokenizer = student
    apps = {
        name: create_model_app(model, tokenizer, "s", max_new_tokens=32, max_batch=4, batch_wait_s=0.0, greedy_head=on)
        for name, on in (("fp32", False), ("greedy", True), ("forced", True))
    }
    assert apps["fp32"].state.backend.head is None
    forced = apps["forced"].state.backend.head
    proven, calls = forced._proven, []

    def every_other(rows):
        calls.append(len(rows))
        return None if len(calls) % 2 else proven(rows)

    forced._proven = every_other
    generated: dict[str, dict[tuple, list[int]]] = {name: {} for name in apps}
    for name, app in apps.items():

        def stepping(running, joining, step=app.state.backend.step, seen=generated[name]):
            finished = step(running, joining)
            seen.update({tuple(job.input_ids): row for job, row in finished})
            return finished

        app.state.backend.step = stepping
    played = {name: _episodes(app, count=4, turns=2) for name, app in apps.items()}
    for name in ("greedy", "forced"):
        assert played[name] == played["fp32"]
        assert generated[name] == generated["fp32"]  # token for token, every turn of every episode
    assert len(generated["fp32"]) == 8
    greedy = apps["greedy"].state.backend
    assert greedy.head.proven > 0 and greedy.head.proven + greedy.head.fallback_rows == greedy.step_rows
    assert forced.fallback_steps >= len(calls) // 2 and forced.proven > 0
