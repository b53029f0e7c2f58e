"""A trained student checkpoint written back as GGUF, for the llama.cpp backend.

Every row of an experiment must be served by one backend at one precision: the base in Q4_K_M on
llama.cpp against fp32 checkpoints in transformers would skew the gain. So with the llama.cpp
backend *every* checkpoint, the base's included (the fp32 model materialised from the Q4_K_M
file), is written by this module at the same type (``f32``, ``f16`` or ``q8_0``).

What is kept and what is rewritten:
- the metadata (architecture hyper-parameters, tokenizer vocabulary, special tokens) is copied
  from the GGUF the student was made from, so llama.cpp tokenizes and stops as it does for that
  file; only ``general.file_type`` changes;
- the tensors come from the checkpoint, named by gguf-py's own table for the architecture, with
  the one transform llama.cpp's converter applies to Gemma: an RMSNorm weight is stored as
  ``1 + w`` (transformers subtracts the 1 again when it reads a GGUF);
- the tied output head is not written (the GGUF had none).

The written file must hold exactly the source file's tensor names and shapes: anything else is an
``ExportError`` naming the difference, never a file llama.cpp loads and answers wrongly from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

Precision = Literal["f32", "f16", "q8_0"]

_SKIPPED_KEYS = ("GGUF.", "general.architecture", "general.file_type", "general.quantization_version")


class ExportError(ValueError):
    """The checkpoint cannot be written as a GGUF like its source (the message says what differs)."""


def _ftype(precision: Precision):
    import gguf

    return {
        "f32": gguf.LlamaFileType.ALL_F32,
        "f16": gguf.LlamaFileType.MOSTLY_F16,
        "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
    }[precision]


def _tensor_type(precision: Precision, name: str, data):
    """The stored type: 1-D tensors (norms) stay f32 at every precision, as llama.cpp's converter does."""
    import gguf

    if precision == "f32" or data.ndim < 2:
        return gguf.GGMLQuantizationType.F32
    if precision == "f16":
        return gguf.GGMLQuantizationType.F16
    if data.shape[-1] % gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q8_0][0]:
        raise ExportError(f"{name}: rows of {data.shape[-1]} do not split into q8_0 blocks")
    return gguf.GGMLQuantizationType.Q8_0


def _architecture(reader) -> str:
    field = reader.get_field("general.architecture")
    if field is None:
        raise ExportError("the source GGUF names no general.architecture")
    return str(field.contents())


def export_gguf(checkpoint: Path, source: Path, out: Path, *, precision: Precision = "f32") -> Path:
    """Write ``checkpoint`` (safetensors, the student's architecture) as ``out`` with ``source``'s metadata."""
    import gguf
    import numpy as np
    from safetensors.numpy import load_file

    reader = gguf.GGUFReader(source)
    arch_name = _architecture(reader)
    arch = next((key for key, value in gguf.MODEL_ARCH_NAMES.items() if value == arch_name), None)
    if arch is None:
        raise ExportError(f"gguf-py knows no architecture {arch_name!r}")
    expected = {t.name: tuple(int(n) for n in reversed(t.shape.tolist())) for t in reader.tensors}
    config = json.loads((checkpoint / "config.json").read_text())
    names = gguf.get_tensor_name_map(arch, int(config["num_hidden_layers"]))

    weights: dict[str, np.ndarray] = {}
    for file in sorted(checkpoint.glob("*.safetensors")):
        weights |= load_file(file)
    tensors: dict[str, np.ndarray] = {}
    for hf_name, data in weights.items():
        if hf_name == "lm_head.weight" and config.get("tie_word_embeddings", True):
            continue  # the head is the embedding
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:
            raise ExportError(f"{checkpoint}: no GGUF name for tensor {hf_name}")
        data = data.astype(np.float32)
        if name.endswith("norm.weight"):
            data = data + np.float32(1.0)  # Gemma's RMSNorm scales by 1 + w; llama.cpp stores the sum
        tensors[name] = data
    got = {name: tuple(data.shape) for name, data in tensors.items()}
    if got != expected:
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        shapes = sorted(n for n in set(got) & set(expected) if got[n] != expected[n])
        raise ExportError(f"{checkpoint} does not match {source.name}: missing {missing[:5]}, extra {extra[:5]}, "
                          f"other shapes {shapes[:5]}")  # fmt: skip

    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    writer = gguf.GGUFWriter(partial, arch_name)
    for field in reader.fields.values():
        if field.name.startswith(_SKIPPED_KEYS):
            continue
        kind = field.types[0]
        sub_type = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=sub_type)
    writer.add_file_type(_ftype(precision))
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    for tensor in reader.tensors:  # the source's order: llama.cpp reads by name, people diff by eye
        data = tensors[tensor.name]
        kind = _tensor_type(precision, tensor.name, data)
        if kind == gguf.GGMLQuantizationType.F16:
            data = data.astype(np.float16)
        elif kind == gguf.GGMLQuantizationType.Q8_0:
            data = gguf.quants.quantize(data, kind)
        writer.add_tensor(tensor.name, data, raw_dtype=kind if kind == gguf.GGMLQuantizationType.Q8_0 else None)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.rename(out)  # last: a half-written file never has the final name
    return out
