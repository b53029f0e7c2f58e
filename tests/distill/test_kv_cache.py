"""The running batch's key-value cache (distill/kv_cache.py) appends in place, and reads exactly as
transformers' ``DynamicLayer`` that grows by ``torch.cat``: the same tensors after appends, a batch
that changes shape, and assignments; and on the real student, the same hidden states bit for bit."""

from __future__ import annotations


def test_a_growing_layer_reads_as_a_dynamic_layer_through_appends_and_assignments():
    import torch
    from transformers.cache_utils import DynamicLayer

    from distill.kv_cache import _ROOM, GrowingLayer

    generator = torch.Generator().manual_seed(3)

    def states(batch: int, length: int):
        return [torch.randn(batch, 1, length, 8, generator=generator) for _ in range(2)]

    growing, plain = GrowingLayer(), DynamicLayer()
    for length in [5, 1, 1, _ROOM + 3, 1]:  # the fourth outgrows the room the first left
        new = states(2, length)
        got, want = growing.update(*new), plain.update(*new)
        assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
    buffer = growing._keys.buffer
    new = states(2, 1)
    got, want = growing.update(*new), plain.update(*new)
    assert growing._keys.buffer is buffer  # room left: written in place, no new buffer
    assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
    for layer in (growing, plain):  # as _Running.drop assigns: one row leaves, a padding column goes
        layer.keys, layer.values = layer.keys[1:, :, 2:], layer.values[1:, :, 2:]
    new = states(1, 1)
    got, want = growing.update(*new), plain.update(*new)
    assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
    assert growing.get_seq_length() == plain.get_seq_length() == 5 + 1 + 1 + _ROOM + 3 + 1 + 1 - 2 + 1


def test_decode_steps_on_the_growing_cache_give_the_hidden_states_of_the_concatenating_cache(student_checkpoint):
    import torch
    from transformers import AutoModelForCausalLM, DynamicCache

    from distill.kv_cache import growing_cache

    model = AutoModelForCausalLM.from_pretrained(student_checkpoint, dtype=torch.float32).eval()
    decoder = model.get_decoder()
    generator = torch.Generator().manual_seed(5)
    prompt = torch.randint(10, 20_000, (2, 600), generator=generator)  # past the 512-token window
    mask = torch.ones(2, 600, dtype=torch.long)
    mask[1, :40] = 0  # a left-padded row, as in the running batch
    runs = []
    with torch.no_grad():
        for cache in (growing_cache(), DynamicCache()):
            states = [decoder(input_ids=prompt, attention_mask=mask, cache=cache, use_cache=True).last_hidden_state]
            feed, seen = prompt[:, -1:], mask
            for step in range(6):
                seen = torch.cat([seen, torch.ones(2, 1, dtype=torch.long)], dim=1)
                positions = seen.sum(1, keepdim=True) - 1
                out = decoder(input_ids=feed, attention_mask=seen, position_ids=positions, cache=cache,
                              cache_position=torch.tensor([seen.shape[1] - 1]), use_cache=True)  # fmt: skip
                states.append(out.last_hidden_state)
                feed = torch.randint(10, 20_000, (2, 1), generator=torch.Generator().manual_seed(step))
            runs.append(states)
    assert all(torch.equal(a, b) for a, b in zip(*runs, strict=True))
