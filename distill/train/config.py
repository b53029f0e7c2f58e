"""Stage configuration: one YAML file = our fields + the trl config's own fields.

A file holds either one stage (flat keys) or a recipe::

    model: Qwen/Qwen3-4B          # ours: shared by every stage
    data: corpus/                 # ours: the export directory (train.jsonl, kto.jsonl, ...)
    output: runs/qwen3-4b
    bf16: true                    # trl/transformers field, shared
    stages:
      sft: {learning_rate: 2.0e-5, num_train_epochs: 2, packing: true}
      teacher-sft: {learning_rate: 5.0e-6}
      ...

Keys that are not ours must be fields of the stage's trl config class
(SFTConfig, KTOConfig, GRPOConfig); an unknown key is an error naming the file
and the key, never silently ignored, so a config file reproduces a run.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from arena.config_file import ConfigError, read_config_file, validate_config

StageName = Literal["sft", "teacher-sft", "rft", "kto", "grpo"]
STAGES: tuple[StageName, ...] = ("sft", "teacher-sft", "rft", "kto", "grpo")


class LoraSettings(BaseModel):
    """LoRA adapters (peft); absent = full fine-tune."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(16, ge=1)
    alpha: int = Field(32, ge=1)
    dropout: float = Field(0.05, ge=0.0, lt=1.0)
    target_modules: list[str] | str = "all-linear"
    merge: bool = Field(True, description="Merge the adapters into the weights when the stage ends.")


class RolloutSettings(BaseModel):
    """How `rft` samples from the current checkpoint."""

    model_config = ConfigDict(extra="forbid")

    samples: int = Field(4, ge=1, description="Rollouts per train problem.")
    temperature: float = Field(0.8, ge=0.0, le=2.0)
    base_url: str | None = Field(None, description="Endpoint serving the checkpoint (vLLM); else in-process.")
    served_model: str | None = Field(None, description="Model name at base_url (default: the checkpoint path).")
    max_new_tokens: int = Field(512, ge=1, description="In-process serving only.")
    turn_calls: int | None = Field(
        None, ge=1, description="In-process serving only: a turn stops after this many tool calls."
    )
    concurrency: int = Field(2, ge=1)
    sandbox: bool = True
    wall_s: float = Field(300.0, gt=0)
    limit: int | None = Field(None, ge=1, description="Only the first N train problems.")


class RewardSettings(BaseModel):
    """GRPO's reward: per-step teacher-grounded tool-call match plus the scorer's outcome."""

    model_config = ConfigDict(extra="forbid")

    step_weight: float = Field(0.5, ge=0.0)
    outcome_weight: float = Field(1.0, ge=0.0)
    mode: Literal["strict", "official"] = "strict"


class StageConfig(BaseModel):
    """One stage, resolved: our fields plus ``trl`` (the trl config's keyword arguments)."""

    model_config = ConfigDict(extra="forbid")

    stage: StageName
    model: str = Field(description="Local path or hub name of the starting checkpoint.")
    data: Path | None = Field(None, description="Corpus export directory.")
    output: Path = Field(description="Where this stage writes its checkpoints and final model.")
    resume: bool = False
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    attention: Literal["sdpa_windowed", "sdpa"] = Field(
        "sdpa_windowed",
        description="sdpa_windowed: sliding layers computed window by window (distill/windowed_attention.py); "
        "sdpa: transformers' whole masked square, the reference.",
    )
    cpu_threads: int | None = Field(
        None, ge=1, description="torch's CPU threads for the stage (default: torch's own, one per core)."
    )
    lora: LoraSettings | None = None
    # Stage-specific inputs (files are relative to `data` unless absolute).
    train_file: str = "train.jsonl"
    teacher_file: str = "teacher.jsonl"
    teacher_min_coefficient: float = Field(0.8, ge=0.0, le=1.0)
    kto_file: str = "kto.jsonl"
    problems_file: str | None = Field(None, description="rft/grpo: train problems JSONL (default: from the corpus).")
    catalog: Path | None = Field(None, description="rft/grpo: catalog index directory.")
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    reward: RewardSettings = Field(default_factory=RewardSettings)
    trl: dict[str, Any] = Field(default_factory=dict)

    def data_path(self, name: str) -> Path:
        path = Path(name)
        if path.is_absolute() or self.data is None:
            return path
        return self.data / path


_OURS = set(StageConfig.model_fields) - {"trl", "stage"}


def trl_config_class(stage: StageName):
    """The trl config class a stage's extra keys belong to (imported lazily: trl is the distill extra)."""
    if stage == "kto":
        from trl import KTOConfig

        return KTOConfig
    if stage == "grpo":
        from trl import GRPOConfig

        return GRPOConfig
    from trl import SFTConfig

    return SFTConfig


def load_stage_config(path: Path | None, stage: StageName, overrides: dict[str, Any] | None = None) -> StageConfig:
    """A stage's config from a file (flat, or a recipe's shared keys + ``stages[stage]``) and CLI overrides."""
    raw: dict[str, Any] = read_config_file(path, "yaml") if path is not None else {}
    where = str(path) if path is not None else "<command line>"
    stages = raw.pop("stages", None)
    merged = dict(raw)
    if stages is not None:
        if not isinstance(stages, dict):
            raise ConfigError(f"{where}: 'stages' must map stage names to settings")
        for name in stages:
            if name not in STAGES:
                raise ConfigError(f"{where}: stages.{name}: unknown stage; stages are {', '.join(STAGES)}")
        merged |= stages.get(stage) or {}
    merged |= {k: v for k, v in (overrides or {}).items() if v is not None}
    return resolve(merged, stage, where)


def resolve(values: dict[str, Any], stage: StageName, where: str) -> StageConfig:
    ours = {k: v for k, v in values.items() if k in _OURS}
    theirs = {k: v for k, v in values.items() if k not in _OURS}
    if "stage" in theirs:
        theirs.pop("stage")
    cls = trl_config_class(stage)
    known = {f.name for f in dataclasses.fields(cls)}
    for key in theirs:
        if key not in known:
            raise ConfigError(
                f"{where}: {key!r} is neither one of ours ({', '.join(sorted(_OURS))}) nor a field of {cls.__name__}"
            )
    for key in ("model", "output"):
        if key not in ours:
            raise ConfigError(f"{where}: {key!r} is required (in the file or as --{key})")
    return validate_config(StageConfig, ours, where, "stage config", stage=stage, trl=theirs)


def stage_names(path: Path) -> list[StageName]:
    """The stages a recipe file configures, in pipeline order (all five if it names none)."""
    raw = read_config_file(path, "yaml")
    stages = raw.get("stages")
    if not stages:
        return list(STAGES)
    unknown = [name for name in stages if name not in STAGES]
    if unknown:
        raise ConfigError(f"{path}: stages.{unknown[0]}: unknown stage; stages are {', '.join(STAGES)}")
    return [name for name in STAGES if name in stages]
