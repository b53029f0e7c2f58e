"""Loading a checkpoint for training, and the chat-template decision.

Qwen3's stock template renders an empty ``<think>\\n\\n</think>`` block only on
assistant turns after the last user query, and drops it from earlier ones. A
multi-turn tool dialogue trained with it therefore shows the model history
that differs from what it generated, and the rendering of turn t changes when
turn t+1 is appended (not prefix-preserving, which GRPO's tool loop needs).

The choice here: every stage trains with trl's *training* variant of the
template (``get_training_chat_template``: the think block on every assistant
turn, ``{% generation %}`` markers for the assistant-only loss), and the
checkpoint is **saved with that template**, so whatever serves it (vLLM
reads ``chat_template`` from the tokenizer files; our ``distill.serve`` uses
the tokenizer's) renders prompts exactly as in training. vLLM's
``--reasoning-parser qwen3`` and ``--tool-call-parser hermes`` parse its
output unchanged, since the generated text has the stock format.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any

from distill.train.config import LoraSettings, StageConfig
from distill.train.report import stopwatch


def training_template(tokenizer) -> str:
    """The template to train and serve with (trl's training variant when trl knows the model's)."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    if tokenizer.chat_template is None:
        raise ValueError("the tokenizer has no chat template; give a chat model (e.g. Qwen/Qwen3-4B)")
    if has_generation_markers(tokenizer.chat_template):
        return tokenizer.chat_template
    patched = get_training_chat_template(tokenizer)
    if patched is None:
        raise ValueError(
            "trl has no training variant of this chat template (no {% generation %} markers for the assistant-only "
            "loss); supported: Qwen3 and the others listed in trl's chat_templates/README.md"
        )
    return patched


def load_tokenizer(name_or_path: str):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    tokenizer.chat_template = training_template(tokenizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def score_only_labelled_positions() -> bool:
    """Let trl's fused LM head project only the positions that carry a label on CPU too.

    trl (1.16) compacts to the labelled positions only on Triton devices; elsewhere it
    projects every position and masks afterwards, so that a compiler (Neuron's) sees fixed
    tile shapes. On CPU nothing recompiles, and with the assistant-only loss most positions
    (system prompt, requests, tool results) carry no label, while Gemma's head has 262k rows:
    the wasted projection was most of a step (measured: one 1,176-token row, 340 labelled,
    20.1 s -> 7.6 s forward and backward, the same loss and gradients). Returns whether
    trl has the hook this relies on (an older or newer trl without it trains unchanged).
    """
    from trl.trainer import utils

    decide = getattr(utils, "_use_triton", None)
    if decide is None:
        return False
    if not getattr(decide, "compacts_on_cpu", False):

        def compact(device) -> bool:
            return device.type == "cpu" or decide(device)

        # Marks read by the check above (one patch however often this runs) and the function it wraps;
        # through __dict__ because a function's type declares no such attributes.
        compact.__dict__.update(compacts_on_cpu=True, original=decide)
        utils._use_triton = compact
    return True


def native_bf16_on_cpu() -> bool:
    """Whether this CPU multiplies bf16 matrices natively (AVX512-BF16 or AMX, oneDNN's test)."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def precision_fields(trl_fields: dict[str, Any]) -> dict[str, Any]:
    """The trainer's mixed precision, unless the config sets ``bf16`` or ``fp16`` itself.

    trl (1.16) turns bf16 autocast on by default. On a GPU, or a CPU with native bf16 (AVX512-BF16,
    AMX), that is faster. On a CPU without it (AVX2 only, e.g. AMD EPYC Zen 3) torch multiplies bf16
    in a reference loop: measured 10 GFLOPS against 66 in fp32, and the CI experiment's SFT step went
    from minutes to over 25 minutes. There the trainer stays in fp32. The stage report records which.
    """
    import torch

    if "bf16" in trl_fields or "fp16" in trl_fields:
        return {}
    on_cpu = bool(trl_fields.get("use_cpu")) or not torch.cuda.is_available()
    return {"bf16": False} if on_cpu and not native_bf16_on_cpu() else {}


def load_model(config: StageConfig):
    import torch
    from transformers import AutoModelForCausalLM

    import distill.windowed_attention  # noqa: F401  (registers "sdpa_windowed")

    score_only_labelled_positions()
    dtype = "auto" if config.dtype == "auto" else getattr(torch, config.dtype)
    # Windowed by default: a long row's sliding layers cost its window, not its square (the module's
    # docstring); models without sliding layers run sdpa either way.
    return AutoModelForCausalLM.from_pretrained(config.model, dtype=dtype, attn_implementation=config.attention)


def peft_config(lora: LoraSettings | None):
    if lora is None:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        task_type="CAUSAL_LM",
    )


def save_final(trainer, tokenizer, out: Path, lora: LoraSettings | None) -> Path:
    """Write the stage's final model to ``out/final`` as a plain checkpoint the next stage (and vLLM) loads."""
    final = out / "final"
    model = trainer.model
    if lora is not None and lora.merge and hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(final)
    tokenizer.save_pretrained(final)
    return final


def last_checkpoint(out: Path) -> str | None:
    """The newest ``checkpoint-N`` in ``out`` for ``--resume`` (None: start fresh)."""
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(out)) if out.is_dir() else None


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def precision_path(args, model) -> dict[str, Any]:
    """What decides a stage's floating-point results on this machine, for its report.

    The same config and seed give the same numbers only along the same path: the weights' dtype, the
    autocast, torch's deterministic algorithms and its thread count (a matmul split over another
    number of threads sums in another order), the torch build and the CPU (native bf16 or not)."""
    import torch

    from distill.train.report import trainer_precision

    return {
        "weights": str(next(model.parameters()).dtype).removeprefix("torch."),
        "compute": trainer_precision(args),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "device": "cuda" if torch.cuda.is_available() and not getattr(args, "use_cpu", False) else "cpu",
        "cpu": cpu_name(),
        "native_bf16": native_bf16_on_cpu(),
        "attention": str(getattr(model.config, "_attn_implementation", None)),
    }


@contextmanager
def deterministic_algorithms():
    """torch's deterministic algorithms on for the block (an op without one warns), then as before:
    the flag is process-wide and an experiment serves its rows in the same process."""
    import torch

    before = torch.are_deterministic_algorithms_enabled()
    warn_before = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=warn_before)


def train_to_final(trainer, tokenizer, config: StageConfig) -> tuple[Path, float]:
    """Train (from the newest checkpoint when ``config.resume``), save ``output/final``; the final
    checkpoint and the training seconds, which every stage's report states. The precision path the
    stage took is left on the trainer (``trainer.precision_path``) for its report."""
    resume = last_checkpoint(config.output) if config.resume else None
    with deterministic_algorithms(), stopwatch() as elapsed:
        trainer.precision_path = precision_path(trainer.args, trainer.model)
        trainer.train(resume_from_checkpoint=resume)
    return save_final(trainer, tokenizer, config.output, config.lora), elapsed[0]
