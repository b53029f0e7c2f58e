"""Sliding-window attention computed window by window, so a long row pays for the window, not the square.

Gemma 3's sliding layers (15 of the 270M student's 18) let a token see the 512 tokens before it, but
torch's attention is handed the whole masked ``T x T`` square and computes every score in it: at 6,144
tokens more than nine tenths of each sliding layer's scores are masked away, and training cost grew as
the row's length to the power 2.2 (docs/experiment.md, "Long trajectories"). Here each block of
``window`` queries attends to the keys it can reach (at most ``2 * window - 1`` of them) through the same
``sdpa_attention_forward`` transformers calls, with the block's slice of the model's own mask, so
padding, the causal edge and the window's edge all come from transformers, not from a copy of its rules.

The sum over keys is the same sum (masked keys weigh exactly zero), only shorter, so the outputs equal
the whole-square ones to float rounding; tests/distill/test_windowed_attention.py compares outputs and
gradients. Full-attention layers, decoding with a cache (queries and keys of different lengths) and rows
that fit in two windows go to sdpa unchanged.

Loading a model with ``attn_implementation=ATTENTION`` uses it; the registration happens on import.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

ATTENTION = "sdpa_windowed"


def windowed_attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    sliding_window: int | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """``sdpa_attention_forward``'s contract: query (B, H, q, D), key/value (B, Hkv, k, D) -> (B, q, H, D)."""
    q_len, k_len = query.shape[2], key.shape[2]
    if sliding_window is None or q_len != k_len or q_len <= 2 * sliding_window:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
            sliding_window=sliding_window, **kwargs,
        )  # fmt: skip
    if attention_mask is None:
        # sdpa_mask only skips a sliding mask when the row fits the window, excluded above; without one
        # the window's edge would be lost, so refuse rather than attend to the whole row.
        raise ValueError("windowed attention needs the model's sliding mask for a row longer than the window")
    outputs = []
    for start in range(0, q_len, sliding_window):
        end = min(start + sliding_window, q_len)
        # A query at position i sees keys i - window < j <= i: the block's earliest query sets the first key.
        first = max(0, start - sliding_window + 1)
        block, _ = sdpa_attention_forward(
            module, query[:, :, start:end], key[:, :, first:end], value[:, :, first:end],
            attention_mask[..., start:end, first:end], dropout=dropout, scaling=scaling, **kwargs,
        )  # fmt: skip
        outputs.append(block)
    return torch.cat(outputs, dim=1), None


AttentionInterface.register(ATTENTION, windowed_attention_forward)
# The masks are sdpa's (boolean, True = attend): the blocks slice them.
ALL_MASK_ATTENTION_FUNCTIONS.register(ATTENTION, sdpa_mask)
