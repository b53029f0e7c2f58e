"""Title similarity for the outcome scorer: a lexical default and an embedding backend.

Why a lexical default
---------------------
ShoppingBench's ``rewards/orm.py`` compares a recommended product's title with the
gold title by cosine similarity of Qwen3-Embedding-0.6B sentence embeddings, with a
threshold of 0.5 for product / shop / voucher titles and 0.8 for knowledge titles.
A validator must score thousands of episodes without a GPU or a 1.2 GB model, so the
default here is lexical (rapidfuzz, no model) and the embedding rule stays
available as :class:`EmbeddingSimilarity` for users who have the model locally.

The lexical score
-----------------
Both titles are lower-cased and reduced to their alphanumeric tokens (any run of
letters or digits in any script; punctuation and ``_`` split tokens), then::

    score = (token_set_ratio(a, b) + token_sort_ratio(a, b)) / 200

- ``token_set_ratio`` is 100 when one title's words are a subset of the other's,
  so a reordering or a longer listing title that contains every gold word scores
  high, as it does under the embedding.
- ``token_sort_ratio`` compares the whole sorted word lists, so it pulls the score
  down in proportion to how much *extra* text there is; on its own ``token_set``
  would also give 1.0 to a one-word title that happens to share a word with gold.

Calibration, on the 1,850 gold titles of the official 900 tasks:

- identical titles score 1.0; a shuffled gold title, or the gold title followed by
  as many words again from another listing, scored at least 0.74 (min over 4,000);
- 20,000 random pairs of *different* gold titles: mean 0.35, 99th percentile 0.47,
  99.9th 0.54. The few pairs above 0.5 are near-identical listings of one product
  family (two "Scent Lab 50ml Perfume Eau de Parfum" variants: 0.79; two "24k
  Saudi Gold Bangles" listings: 0.74), which the embedding would also call similar.

So the official threshold 0.5 keeps its meaning (same-product wording matches,
unrelated products do not), strict mode's 0.7 still accepts every reorder /
superset seen in calibration while rejecting all but same-family near-duplicates,
and the knowledge threshold 0.8 requires a near-copy of the gold title.

Empty titles (nothing alphanumeric) score 0.0: a blank title never matches.

Results are cached per backend instance (``functools.lru_cache``): gold titles
repeat across attempts of one problem, and recommended titles repeat across agents.
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rapidfuzz import fuzz

from arena.scoring.settings import ScoringSettings

# Thresholds on the [0, 1] similarity scale (see the module docstring).
OFFICIAL_TITLE_THRESHOLD = 0.5  # rewards/orm.py rule_score_reward
STRICT_TITLE_THRESHOLD = 0.7  # the live subnet's production scorer
KNOWLEDGE_TITLE_THRESHOLD = 0.8  # rewards/orm.py web_rule_score_reward, both modes

_TOKEN = re.compile(r"[^\W_]+")
_DEFAULT_CACHE_SIZE = 1 << 17


@runtime_checkable
class TitleSimilarity(Protocol):
    """Any callable giving a similarity in [0, 1] between two titles."""

    def __call__(self, a: str, b: str) -> float: ...


@functools.lru_cache(maxsize=_DEFAULT_CACHE_SIZE)
def normalize_title(title: str) -> str:
    """Lower-cased alphanumeric tokens joined by single spaces."""
    return " ".join(_TOKEN.findall(title.lower()))


def lexical_similarity(a: str, b: str) -> float:
    """The uncached lexical score (see the module docstring for the formula and why)."""
    na, nb = normalize_title(a), normalize_title(b)
    if not na or not nb:
        return 0.0
    if na == nb:
        return 1.0
    # processor=None: the strings are already normalized, don't pay for it twice.
    total = fuzz.token_set_ratio(na, nb, processor=None) + fuzz.token_sort_ratio(na, nb, processor=None)
    return total / 200.0


class LexicalSimilarity:
    """The default backend: :func:`lexical_similarity` behind a per-instance LRU cache."""

    def __init__(self, cache_size: int = _DEFAULT_CACHE_SIZE) -> None:
        self._cached = functools.lru_cache(maxsize=cache_size)(lexical_similarity)

    def __call__(self, a: str, b: str) -> float:
        return self._cached(a, b)

    def cache_clear(self) -> None:
        """Forget cached pairs (and normalized titles); benchmarks use it for cold runs."""
        self._cached.cache_clear()
        normalize_title.cache_clear()

    def cache_info(self) -> functools._CacheInfo:
        return self._cached.cache_info()


class EmbeddingBackendUnavailable(ImportError):
    """sentence-transformers is not installed; the message says how to install it."""


class EmbeddingSimilarity:
    """The official rule: cosine similarity of sentence-transformers embeddings.

    The official model is Qwen3-Embedding-0.6B. It is loaded from a *local* path
    only (validators run offline); nothing is downloaded. sentence-transformers is
    imported here, not at module import, so the lexical default never needs it.
    Embeddings are cached per title, so each distinct title is encoded once.
    """

    def __init__(self, model_path: str | Path, device: str | None = None, cache_size: int = 1 << 16) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingBackendUnavailable(
                "EmbeddingSimilarity needs the 'sentence-transformers' package, which is not installed. "
                "Install it with: pip install 'trajectory-arena[embedding]' "
                "(or use the default LexicalSimilarity, which needs no model)."
            ) from exc
        path = Path(model_path).expanduser()
        if not path.exists():
            raise FileNotFoundError(
                f"embedding model not found at {path}: give the local directory of a "
                "sentence-transformers model (officially Qwen3-Embedding-0.6B); nothing is downloaded"
            )
        self.model_path = path
        self._model: Any = SentenceTransformer(str(path), device=device, local_files_only=True)
        self._embed = functools.lru_cache(maxsize=cache_size)(self._encode)

    def _encode(self, text: str) -> tuple[float, ...]:
        vector = self._model.encode([text], normalize_embeddings=True)[0]
        return tuple(float(x) for x in vector)

    def __call__(self, a: str, b: str) -> float:
        va, vb = self._embed(a), self._embed(b)
        cosine = math.fsum(x * y for x, y in zip(va, vb, strict=True))
        # The official rule compares the raw cosine; clamp only to honour the [0, 1] protocol.
        return min(1.0, max(0.0, cosine))


_default: LexicalSimilarity | None = None


def default_similarity() -> LexicalSimilarity:
    """A process-wide lexical backend, so the cache is shared by every scoring call."""
    global _default
    if _default is None:
        _default = LexicalSimilarity()
    return _default


def similarity_from_settings(settings: ScoringSettings) -> TitleSimilarity:
    """The backend the ``scoring`` settings select."""
    if settings.similarity == "embedding":
        if settings.embedding_model_path is None:
            raise EmbeddingBackendUnavailable(
                "scoring.similarity = embedding needs scoring.embedding_model_path (a local model folder)"
            )
        return EmbeddingSimilarity(settings.embedding_model_path)
    return default_similarity()
