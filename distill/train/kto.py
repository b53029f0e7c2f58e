"""`kto`: KTO on per-step examples (desirable / undesirable from outcome and judge), against a frozen
reference copy of the starting checkpoint."""

from __future__ import annotations

from typing import Any

from distill.train.checkpoints import load_model, load_tokenizer, peft_config, precision_fields, train_to_final
from distill.train.config import StageConfig
from distill.train.data import kto_rows, to_dataset
from distill.train.report import StageReport, stage_report

KTO_DEFAULTS: dict[str, Any] = {
    "report_to": "none",
    "logging_steps": 1,
    "include_num_input_tokens_seen": "non_padding",
    "save_strategy": "steps",
}


def run_kto(config: StageConfig) -> StageReport:
    from trl import KTOConfig, KTOTrainer

    rows = kto_rows(config.data_path(config.kto_file))
    desirable = sum(r["label"] for r in rows)
    tokenizer = load_tokenizer(config.model)
    model = load_model(config)
    args = KTOConfig(output_dir=str(config.output), **(KTO_DEFAULTS | precision_fields(config.trl) | config.trl))
    trainer = KTOTrainer(
        model=model,
        args=args,
        train_dataset=to_dataset(rows, f"kto ({config.data})"),
        processing_class=tokenizer,
        peft_config=peft_config(config.lora),
    )
    final, seconds = train_to_final(trainer, tokenizer, config)
    return stage_report(
        "kto",
        config.model,
        final,
        trainer,
        len(rows),
        seconds,
        desirable=desirable,
        undesirable=len(rows) - desirable,
    )
