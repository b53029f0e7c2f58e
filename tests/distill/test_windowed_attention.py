"""Windowed sliding attention (distill/windowed_attention.py) against transformers' own sdpa path, on a
tiny random Gemma 3 whose window is 4 tokens: the same logits and the same LoRA-free gradients on rows
many windows long, with padding in a batch, and the unchanged paths (a row inside two windows, decoding
with a cache) left to sdpa."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from distill.windowed_attention import ATTENTION, windowed_attention_forward  # noqa: E402

WINDOW = 4


def _model(attn: str):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(
        vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=1, head_dim=16, sliding_window=WINDOW, max_position_embeddings=256,
        layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
        attn_implementation=attn,
    )  # fmt: skip
    return Gemma3ForCausalLM(config).float()


def _pair():
    reference = _model("sdpa")
    windowed = _model(ATTENTION)
    windowed.load_state_dict(reference.state_dict())
    return reference, windowed


def test_a_long_row_gives_the_same_logits_and_gradients_as_the_whole_square():
    reference, windowed = _pair()
    ids = torch.randint(0, 97, (1, 41))  # ten windows and a bit: the last block is short
    out_ref = reference(input_ids=ids, labels=ids)
    out_win = windowed(input_ids=ids, labels=ids)
    assert torch.allclose(out_ref.logits, out_win.logits, atol=1e-5, rtol=1e-5)
    out_ref.loss.backward()
    out_win.loss.backward()
    for (name, p_ref), (_, p_win) in zip(reference.named_parameters(), windowed.named_parameters(), strict=True):
        assert p_ref.grad is not None, name
        assert torch.allclose(p_ref.grad, p_win.grad, atol=1e-5, rtol=1e-4), name


def test_a_padded_batch_keeps_each_rows_padding():
    reference, windowed = _pair()
    ids = torch.randint(0, 97, (2, 30))
    mask = torch.ones_like(ids)
    mask[1, :7] = 0  # left padding, as batched serving pads
    out_ref = reference(input_ids=ids, attention_mask=mask).logits
    out_win = windowed(input_ids=ids, attention_mask=mask).logits
    assert torch.allclose(out_ref[0], out_win[0], atol=1e-5, rtol=1e-5)
    assert torch.allclose(out_ref[1, 7:], out_win[1, 7:], atol=1e-5, rtol=1e-5)


def test_the_window_is_not_the_whole_row():
    """A check that can fail: a row whose early tokens differ must give the same late logits only because
    the late tokens cannot see them through the sliding layers... except through the full layer, so the
    model here is sliding-only and the late logits must not move."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    config = Gemma3TextConfig(
        vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=1, head_dim=16, sliding_window=WINDOW, max_position_embeddings=256,
        layer_types=["sliding_attention", "sliding_attention"], attn_implementation=ATTENTION,
    )  # fmt: skip
    model = Gemma3ForCausalLM(config).float()
    ids = torch.randint(1, 97, (1, 40))
    other = ids.clone()
    other[0, :10] = (other[0, :10] + 1) % 97
    late_a = model(input_ids=ids).logits[0, 20:]
    late_b = model(input_ids=other).logits[0, 20:]
    # Two sliding layers reach 2 * (WINDOW - 1) = 6 tokens back: position 20 cannot see position 9.
    assert torch.allclose(late_a, late_b, atol=1e-6)
    assert not torch.allclose(model(input_ids=ids).logits[0, 10], model(input_ids=other).logits[0, 10])


def test_short_rows_and_decoding_go_to_sdpa_unchanged():
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    module = torch.nn.Module()
    query = torch.randn(1, 4, 1, 16)  # one query against a cache of 12 keys: decoding
    key = torch.randn(1, 1, 12, 16)
    value = torch.randn(1, 1, 12, 16)
    mask = torch.ones(1, 1, 1, 12, dtype=torch.bool)
    expected, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=0.25)
    got, _ = windowed_attention_forward(module, query, key, value, mask, scaling=0.25, sliding_window=WINDOW)
    assert torch.equal(expected, got)


def test_a_long_row_without_a_mask_is_refused():
    module = torch.nn.Module()
    query = torch.randn(1, 4, 20, 16)
    key = torch.randn(1, 1, 20, 16)
    with pytest.raises(ValueError, match="sliding mask"):
        windowed_attention_forward(module, query, key, key, None, sliding_window=WINDOW)


def test_a_long_row_is_computed_in_blocks_of_the_window(monkeypatch):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import sdpa_mask, sliding_window_causal_mask_function

    import distill.windowed_attention as windowed

    shapes: list[tuple[int, int]] = []

    def spy(module, query, key, value, mask, **kwargs):
        shapes.append((query.shape[2], key.shape[2]))
        return sdpa_attention_forward(module, query, key, value, mask, **kwargs)

    monkeypatch.setattr(windowed, "sdpa_attention_forward", spy)
    module = torch.nn.Module()
    query, key, value = torch.randn(1, 4, 22, 16), torch.randn(1, 1, 22, 16), torch.randn(1, 1, 22, 16)
    mask = sdpa_mask(1, 22, 22, mask_function=sliding_window_causal_mask_function(WINDOW), allow_is_causal_skip=False)
    got, _ = windowed.windowed_attention_forward(module, query, key, value, mask, scaling=0.25, sliding_window=WINDOW)
    expected, _ = sdpa_attention_forward(module, query, key, value, mask, scaling=0.25)
    assert shapes == [(4, 4), (4, 7), (4, 7), (4, 7), (4, 7), (2, 5)]
    assert torch.allclose(expected, got, atol=1e-6)
