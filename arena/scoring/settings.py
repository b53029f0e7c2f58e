"""The scorer's knobs: the default mode of `arena score` and the title similarity backend."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class ScoringSettings(BaseModel):
    """The ``scoring`` group of the settings (``[scoring]`` in TOML, ``ARENA_SCORING__*``)."""

    mode: Literal["official", "strict"] = Field(
        "official", description="Default mode of `arena score`; the race and evaluation use strict."
    )
    similarity: Literal["lexical", "embedding"] = Field("lexical", description="Title similarity backend.")
    embedding_model_path: Path | None = Field(
        None,
        description="Local sentence-transformers model for the embedding backend (official: Qwen3-Embedding-0.6B).",
    )
