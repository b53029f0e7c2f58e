"""SFT stages: `sft` (the train split), `teacher-sft` (the teacher subset, lower LR), and the
SFT half of `rft` (on rejection-sampled rollouts). One trainer path for all three."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from distill.train.checkpoints import load_model, load_tokenizer, peft_config, precision_fields, train_to_final
from distill.train.config import StageConfig
from distill.train.data import dialogue_rows, is_teacher, to_dataset
from distill.train.report import StageReport, stage_report

# Our defaults for an SFT stage; the config file's trl fields override them.
SFT_DEFAULTS: dict[str, Any] = {
    "assistant_only_loss": True,
    "packing": True,
    "include_num_input_tokens_seen": "non_padding",
    "report_to": "none",
    "save_strategy": "steps",
    "logging_steps": 1,
}


def train_sft_rows(config: StageConfig, rows: list[dict[str, Any]], stage: str) -> StageReport:
    """Fine-tune ``config.model`` on dialogue rows; writes ``config.output/final``."""
    from trl import SFTConfig, SFTTrainer

    dataset = to_dataset(rows, f"{stage} ({config.data})")
    tokenizer = load_tokenizer(config.model)
    model = load_model(config)
    args = SFTConfig(output_dir=str(config.output), **(SFT_DEFAULTS | precision_fields(config.trl) | config.trl))
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config(config.lora),
    )
    final, seconds = train_to_final(trainer, tokenizer, config)
    return stage_report(stage, config.model, final, trainer, len(rows), seconds)


def run_sft(config: StageConfig) -> StageReport:
    return train_sft_rows(config, dialogue_rows(config.data_path(config.train_file)), "sft")


def teacher_rows(config: StageConfig) -> list[dict[str, Any]]:
    """The export's teacher file when it has one, else the best-judged successful train rows."""
    teacher_file: Path = config.data_path(config.teacher_file)
    if teacher_file.is_file():
        return dialogue_rows(teacher_file)
    return dialogue_rows(config.data_path(config.train_file), keep=is_teacher(config.teacher_min_coefficient))


def run_teacher_sft(config: StageConfig) -> StageReport:
    return train_sft_rows(config, teacher_rows(config), "teacher-sft")
