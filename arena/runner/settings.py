"""The runner's knobs: the per-episode limits and folders, the model servers, the sampling pin.

A leaf: pydantic and the record only, so the race's settings (and the root
settings that assemble every group) name these types without loading the
proxy and its HTTP stack.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arena.runner.record import EpisodeLimits


class Upstream(BaseModel):
    """One OpenAI-compatible model server the inference proxy forwards to (``race.upstreams``)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)  # e.g. "heuristic-policy", "vllm-judge"
    base_url: str = Field(min_length=1)  # OpenAI-compatible base, e.g. "http://127.0.0.1:8000/v1"
    api_key: str | None = None
    # The environment variable holding the key (a deployment's secret, e.g. VLLM_API_KEY), read when the
    # settings are loaded; used when api_key is not given.
    api_key_env: str | None = None
    models: list[str]  # model names served by this upstream
    # The model's context window (vLLM --max-model-len), when known. vLLM rejects a request
    # whose prompt + max_tokens exceeds it, so the proxy only injects a max_tokens cap when
    # the remaining completion budget is smaller than this (else no completion can exceed it).
    context_length: int | None = Field(default=None, ge=1)
    # vLLM's tokenizer endpoint (e.g. "http://127.0.0.1:8000/tokenize"), when it has one: a prompt
    # whose byte bound does not fit the prompt budget left is counted there before it is refused.
    tokenize_url: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _key_from_environment(self) -> Upstream:
        if self.api_key is None and self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ValueError(
                    f"upstream {self.name!r}: api_key_env {self.api_key_env} is not set in the environment"
                )
            self.api_key = key
        return self


class SamplingPin(BaseModel):
    """Reproducible races: these values replace the agent's on every forwarded request."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = None
    seed: int | None = None


class RunnerSettings(BaseModel):
    """The ``runner`` group of the settings (``[runner]`` in TOML, ``ARENA_RUNNER__*``)."""

    limits: EpisodeLimits = Field(
        default_factory=EpisodeLimits, description="Per-episode sandbox and inference limits."
    )
    runtime_dir: Path | None = Field(
        None, description="Cache folder of the sandbox runtime (default ~/.cache/trajectory-arena)."
    )
    work_dir: Path | None = Field(
        None,
        description="Root of the episode folders (agent source, socket), one owner folder per runner process; "
        "dead runners' folders are swept (default $TMPDIR/trajectory-arena-episodes-<uid>).",
    )
