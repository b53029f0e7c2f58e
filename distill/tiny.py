"""A tiny random Qwen3-shaped checkpoint for checking the training path on CPU, made here from nothing.

Nothing is fetched: the byte-level BPE tokenizer is trained on the corpus's own text (so the tool-call
markup and the shop vocabulary are short), the model is a 2-layer Qwen3 with random weights, and the
chat template is Qwen3's (trl swaps in its training variant). It learns nothing useful: it is for
`distill/configs/tiny-cpu.yaml`, the tests and the guides, to show every stage trains, logs a loss and
writes a checkpoint. `arena distill tiny-model --data CORPUS --out DIR` makes one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Qwen3's markup tokens: added (one id each) but not special, so decoding keeps them for the parsers.
MARKUP = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
TEMPLATE_WORDS = "You may call one or more functions to assist with the user query. <tools></tools> function name"


def corpus_texts(data: Path, limit: int = 200) -> list[str]:
    """Text to train the tokenizer on: the corpus's train rows (messages and tools), as JSON."""
    from arena.shop.tools import SHOP_TOOLS, openai_tool_schemas

    texts = [json.dumps(openai_tool_schemas(SHOP_TOOLS)), TEMPLATE_WORDS]
    path = Path(data) / "train.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle):
                if number >= limit:
                    break
                row = json.loads(line)
                texts.append(json.dumps(row.get("messages", [])))
    return texts * 4


def build_tiny_model(texts: Iterable[str], out: Path, *, seed: int = 0, vocab_size: int = 600) -> Path:
    """Write the checkpoint (model + tokenizer + chat template) to ``out``; returns ``out``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    core.train_from_iterator(list(texts), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tokenizer.add_tokens(MARKUP)
    tokenizer.chat_template = qwen3_chat_template  # the stock template: training swaps in trl's variant
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen3ForCausalLM(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
