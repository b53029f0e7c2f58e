"""The real student (Gemma 3 270M) as the serving tests load it: fp32 weights in eval mode and the
project's chat template, once per test module (a module may write into its model)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def student(student_checkpoint):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from distill.student import apply_template

    model = AutoModelForCausalLM.from_pretrained(student_checkpoint, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(student_checkpoint)
    apply_template(tokenizer)
    return model, tokenizer
