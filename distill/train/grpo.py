"""`grpo`: Dr. GRPO (``loss_type="dr_grpo"``, no std scaling) with tool rollouts in the shop.

Each training example is a train trajectory's opening (system + user turns),
its problem row (for the outcome score) and the teacher's tool calls (for the
per-step reward). trl generates, parses Hermes tool calls, runs them on
``ShopToolEnv`` (the real tools on the real catalog) and feeds results back,
up to ``max_tool_calling_iterations``; then both rewards read the environment.
"""

from __future__ import annotations

import json
from typing import Any

from distill.train.checkpoints import load_model, load_tokenizer, peft_config, precision_fields, train_to_final
from distill.train.config import StageConfig
from distill.train.data import CorpusError, iter_jsonl, shape_dialogue, to_dataset
from distill.train.grpo_env import RewardLog, environment_factory, outcome_reward, teacher_step_reward
from distill.train.report import StageReport, stage_report

GRPO_DEFAULTS: dict[str, Any] = {
    "loss_type": "dr_grpo",
    "scale_rewards": "none",  # Dr. GRPO: no division by the group's reward std
    "report_to": "none",
    "logging_steps": 1,
    "save_strategy": "steps",
}


def grpo_rows(config: StageConfig) -> list[dict[str, Any]]:
    """Prompt, problem row and teacher steps per train trajectory whose problem is known."""
    from arena.problems.official import ProblemFileError, iter_problems

    if config.problems_file is None:
        raise CorpusError("grpo needs problems_file: the train problems (with rewards) the trajectories solved")
    problems_path = config.data_path(config.problems_file)
    try:
        problems = {p.id: p for p in iter_problems(problems_path)}
    except (ProblemFileError, OSError) as exc:
        raise CorpusError(str(exc)) from None
    train = config.data_path(config.train_file)
    rows = []
    for number, row in iter_jsonl(train):
        where = f"{train}:{number}"
        messages = shape_dialogue(row.get("messages"), where)
        problem_id = (row.get("metadata") or {}).get("problem_id")
        if problem_id not in problems:
            raise CorpusError(f"{where}: problem {problem_id!r} is not in {problems_path}")
        first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
        teacher = [
            {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"] or "{}")}
            for m in messages
            if m["role"] == "assistant"
            for c in m["tool_calls"] or []
        ]
        prompt = [{"role": m["role"], "content": m["content"]} for m in messages[:first]]
        rows.append(
            {
                "prompt": prompt,
                "problem": json.dumps(problems[problem_id].to_row()),
                "teacher_steps": json.dumps(teacher),
            }
        )
    if not rows:
        raise CorpusError(f"{train}: no trajectories for GRPO")
    return rows


def set_response_parser(tokenizer) -> None:
    """trl recognizes a model's tool-call parser by its *stock* template; our checkpoints carry the training
    variant (see model.py), whose generated text has the stock format, so the stock parser applies. The
    student's template (distill/templates/gemma3_tools.jinja) is ours, so its parser is too."""
    from trl import chat_template_utils as ctu

    from distill.student import RESPONSE_TEMPLATE, template_text

    if getattr(tokenizer, "response_template", None) is not None:
        return
    if tokenizer.chat_template == template_text():
        tokenizer.response_template = RESPONSE_TEMPLATE
    elif tokenizer.chat_template == ctu.qwen3_training_chat_template:
        tokenizer.response_template = ctu.qwen3_template
    elif tokenizer.chat_template == ctu.qwen3_instruct_2507_training_chat_template:
        tokenizer.response_template = ctu.qwen3_template


def build_grpo_trainer(config: StageConfig, rows: list[dict[str, Any]], model=None, tokenizer=None):
    """The GRPOTrainer for ``rows`` (``model``/``tokenizer`` may be given, e.g. a scripted model in tests)."""
    from trl import GRPOConfig, GRPOTrainer

    from arena.scoring.outcome import ScoreMode
    from arena.shop.index import CatalogIndex

    if config.catalog is None:
        raise CorpusError("grpo needs catalog: the catalog index the tools search")
    catalog = CatalogIndex(config.catalog)
    tokenizer = tokenizer or load_tokenizer(config.model)
    tokenizer.padding_side = "left"
    set_response_parser(tokenizer)
    model = model or load_model(config)
    mode = ScoreMode(config.reward.mode)
    step_log, outcome_log = RewardLog(), RewardLog()
    args = GRPOConfig(
        output_dir=str(config.output),
        reward_weights=[config.reward.step_weight, config.reward.outcome_weight],
        **(GRPO_DEFAULTS | precision_fields(config.trl) | config.trl),
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[teacher_step_reward(step_log), outcome_reward(catalog, mode, outcome_log)],
        args=args,
        train_dataset=to_dataset(rows, f"grpo ({config.data})"),
        processing_class=tokenizer,
        peft_config=peft_config(config.lora),
        environment_factory=environment_factory(catalog),
    )
    return trainer, tokenizer, step_log, outcome_log


def run_grpo(config: StageConfig) -> StageReport:
    rows = grpo_rows(config)
    trainer, tokenizer, step_log, outcome_log = build_grpo_trainer(config, rows)
    final, seconds = train_to_final(trainer, tokenizer, config)
    flat_step = [r for batch in step_log.batches for r in batch]
    flat_outcome = [r for batch in outcome_log.batches for r in batch]
    return stage_report(
        "grpo",
        config.model,
        final,
        trainer,
        len(rows),
        seconds,
        mean_step_reward=round(sum(flat_step) / len(flat_step), 4) if flat_step else 0.0,
        mean_outcome_reward=round(sum(flat_outcome) / len(flat_outcome), 4) if flat_outcome else 0.0,
    )
